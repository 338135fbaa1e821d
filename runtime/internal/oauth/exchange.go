package oauth

import (
	"container/list"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// Token exchange (RFC 8693): the node, a client of the issuer, trades a caller's access
// token for one of the same user for another audience, so that an upstream service sees
// each user as themselves. The request is x/oauth2's client credentials request with the
// grant type replaced, which that package allows for exactly such grants: it brings client
// authentication, the form encoding and RFC 6749's error answers without a module more.

// RFC 8693's names.
const (
	grantTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
	typeAccessToken    = "urn:ietf:params:oauth:token-type:access_token"
)

// Secret is a token the node holds for a caller. It prints, formats and encodes as
// "[redacted]", so that no log line, error or JSON document the node writes can carry it;
// only Reveal gives its value, where it is sent.
type Secret string

const redacted = "[redacted]"

// Reveal is the token itself, for the request that carries it.
func (s Secret) Reveal() string { return string(s) }

// String is "[redacted]".
func (Secret) String() string { return redacted }

// GoString is "[redacted]".
func (Secret) GoString() string { return redacted }

// MarshalText is "[redacted]", for every encoder that asks.
func (Secret) MarshalText() ([]byte, error) { return []byte(redacted), nil }

// ExchangeConfig says how the node exchanges tokens at its issuer.
type ExchangeConfig struct {
	// Issuer is the issuer whose tokens callers bring (--oauth-issuer); its metadata names
	// the token endpoint. Required.
	Issuer string
	// ClientID and ClientSecret authenticate the node at the token endpoint
	// (client_secret_basic, or client_secret_post where the issuer supports only that).
	// An issuer that exchanges for public clients takes an empty secret.
	ClientID, ClientSecret string
	// HTTPClient reaches the issuer. Default: a client with a 10s timeout that follows no
	// redirect (the request carries the caller's token and the node's secret).
	HTTPClient *http.Client
	// MaxEntries bounds the tokens kept; past it the least recently used goes. Default
	// 4096.
	MaxEntries int
	// Margin is how long before its expiry a kept token is exchanged again, at most half
	// its lifetime. Default 30s.
	Margin time.Duration
	// Now is the clock. Default: time.Now.
	Now func() time.Time
}

// DefaultExchangeEntries is ExchangeConfig.MaxEntries's default.
const DefaultExchangeEntries = 4096

// Exchanger exchanges callers' tokens and keeps what it got, per caller, until shortly
// before it expires. It is safe for concurrent use; callers asking for the same exchange
// at once share one request.
type Exchanger struct {
	cfg      ExchangeConfig
	tokenURL string
	style    oauth2.AuthStyle

	mu      sync.Mutex
	entries map[[32]byte]*list.Element // of *kept
	lru     *list.List                 // most recently used first
	flights map[[32]byte]*exchangeFlight
}

// kept is an exchanged token in the cache.
type kept struct {
	key   [32]byte
	token Secret
	until time.Time // when it is exchanged again
}

// exchangeFlight is an exchange under way, which callers of the same key wait for.
type exchangeFlight struct {
	done  chan struct{}
	token Secret
	err   error
}

// ExchangeError is the issuer's refusal of an exchange (RFC 6749 §5.2): its error code and
// description, for the caller to read. It never holds a token.
type ExchangeError struct {
	// Code is the issuer's `error` (invalid_target, invalid_grant...); "" when its answer
	// had none.
	Code string
	// Description is the issuer's `error_description`.
	Description string
	// Status is the HTTP status of the answer.
	Status int
}

func (e *ExchangeError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the issuer refused the token exchange (HTTP %d)", e.Status)
	if e.Code != "" {
		b.WriteString(": " + e.Code)
	}
	if e.Description != "" {
		b.WriteString(": " + e.Description)
	}
	return b.String()
}

// NewExchanger discovers the issuer's token endpoint and how it authenticates clients.
func NewExchanger(ctx context.Context, cfg ExchangeConfig) (*Exchanger, error) {
	if cfg.Issuer == "" {
		return nil, errors.New("oauth: token exchange needs the issuer")
	}
	if cfg.ClientID == "" {
		return nil, errors.New("oauth: token exchange needs the node's client id at the issuer (--oauth-client-id)")
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		}}
	}
	if cfg.MaxEntries <= 0 {
		cfg.MaxEntries = DefaultExchangeEntries
	}
	if cfg.Margin <= 0 {
		cfg.Margin = 30 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	md, err := discover(ctx, cfg.HTTPClient, cfg.Issuer)
	if err != nil {
		return nil, fmt.Errorf("oauth: token exchange: %w", err)
	}
	if md.TokenEndpoint == "" {
		return nil, fmt.Errorf("oauth: token exchange: issuer %q names no token_endpoint in its metadata", cfg.Issuer)
	}
	if len(md.GrantTypes) > 0 && !slices.Contains(md.GrantTypes, grantTokenExchange) {
		return nil, fmt.Errorf("oauth: token exchange: issuer %q does not list the token exchange grant (%s) among its grant_types_supported", cfg.Issuer, grantTokenExchange)
	}
	style := oauth2.AuthStyleInHeader // RFC 8414's default, client_secret_basic
	if len(md.AuthMethods) > 0 && !slices.Contains(md.AuthMethods, "client_secret_basic") && slices.Contains(md.AuthMethods, "client_secret_post") {
		style = oauth2.AuthStyleInParams
	}
	return &Exchanger{cfg: cfg, tokenURL: md.TokenEndpoint, style: style, entries: map[[32]byte]*list.Element{},
		lru: list.New(), flights: map[[32]byte]*exchangeFlight{}}, nil
}

// ExchangeRequest is one caller's exchange.
type ExchangeRequest struct {
	// Subject is the caller's `sub`; SubjectToken the access token it brought.
	Subject      string
	SubjectToken Secret
	// Audience and Scopes are what the token is asked for.
	Audience string
	Scopes   []string
}

// key names the exchange in the cache: the caller (its subject and the very token it
// brought: another token of the same user is another caller) and what it asks for. A
// digest, so that the cache holds no caller's token.
func (r *ExchangeRequest) key() [32]byte {
	h := sha256.New()
	for _, s := range []string{r.Subject, string(r.SubjectToken), r.Audience} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	for _, s := range r.Scopes {
		h.Write([]byte(s))
		h.Write([]byte{' '})
	}
	var k [32]byte
	h.Sum(k[:0])
	return k
}

// Cached returns the token kept for r while it is good, without asking the issuer.
func (x *Exchanger) Cached(r ExchangeRequest) (Secret, bool) {
	if r.SubjectToken == "" {
		return "", false
	}
	k := r.key()
	x.mu.Lock()
	defer x.mu.Unlock()
	if e, ok := x.entries[k]; ok {
		if kt := e.Value.(*kept); x.cfg.Now().Before(kt.until) {
			x.lru.MoveToFront(e)
			return kt.token, true
		}
	}
	return "", false
}

// Exchange returns a token of r's caller for r's audience: a kept one while it is good,
// else a new one from the issuer. A refusal is an *ExchangeError.
func (x *Exchanger) Exchange(ctx context.Context, r ExchangeRequest) (Secret, error) {
	if r.SubjectToken == "" {
		return "", errors.New("the call carries no OAuth access token to exchange")
	}
	k := r.key()
	x.mu.Lock()
	if e, ok := x.entries[k]; ok {
		kt := e.Value.(*kept)
		if x.cfg.Now().Before(kt.until) {
			x.lru.MoveToFront(e)
			x.mu.Unlock()
			return kt.token, nil
		}
		x.drop(e)
	}
	if f, ok := x.flights[k]; ok {
		x.mu.Unlock()
		select {
		case <-f.done:
			return f.token, f.err
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	f := &exchangeFlight{done: make(chan struct{})}
	x.flights[k] = f
	x.mu.Unlock()

	// The request runs to its end even if this caller leaves, for the others waiting.
	tok, until, err := x.request(context.WithoutCancel(ctx), r)
	x.mu.Lock()
	delete(x.flights, k)
	if err == nil && !until.IsZero() {
		x.keep(k, tok, until)
	}
	x.mu.Unlock()
	f.token, f.err = tok, err
	close(f.done)
	return tok, err
}

// keep adds a token to the cache, the least recently used going past the bound; x.mu is
// held.
func (x *Exchanger) keep(k [32]byte, tok Secret, until time.Time) {
	if e, ok := x.entries[k]; ok {
		x.drop(e)
	}
	for x.lru.Len() >= x.cfg.MaxEntries {
		x.drop(x.lru.Back())
	}
	x.entries[k] = x.lru.PushFront(&kept{key: k, token: tok, until: until})
}

// drop removes an entry; x.mu is held.
func (x *Exchanger) drop(e *list.Element) {
	delete(x.entries, e.Value.(*kept).key)
	x.lru.Remove(e)
}

// Len is the number of tokens the cache holds, for the node's bounds.
func (x *Exchanger) Len() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.lru.Len()
}

// MaxEntries is the bound of Len.
func (x *Exchanger) MaxEntries() int { return x.cfg.MaxEntries }

// request asks the issuer, and says until when the answer may be kept (zero: not kept,
// as when the issuer gave no expiry).
func (x *Exchanger) request(ctx context.Context, r ExchangeRequest) (Secret, time.Time, error) {
	cc := clientcredentials.Config{
		ClientID: x.cfg.ClientID, ClientSecret: x.cfg.ClientSecret, TokenURL: x.tokenURL, Scopes: r.Scopes,
		AuthStyle: x.style,
		EndpointParams: url.Values{
			"grant_type":           {grantTokenExchange},
			"subject_token":        {string(r.SubjectToken)},
			"subject_token_type":   {typeAccessToken},
			"requested_token_type": {typeAccessToken},
			"audience":             {r.Audience},
		},
	}
	start := x.cfg.Now()
	tok, err := cc.Token(context.WithValue(ctx, oauth2.HTTPClient, x.cfg.HTTPClient))
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) {
			status := 0
			if re.Response != nil {
				status = re.Response.StatusCode
			}
			return "", time.Time{}, &ExchangeError{Code: re.ErrorCode, Description: re.ErrorDescription, Status: status}
		}
		// x/oauth2's other errors name the token endpoint and the cause, never the form.
		return "", time.Time{}, fmt.Errorf("token exchange at %s: %w", x.tokenURL, err)
	}
	if tok.Expiry.IsZero() {
		return Secret(tok.AccessToken), time.Time{}, nil
	}
	margin := min(x.cfg.Margin, tok.Expiry.Sub(start)/2)
	return Secret(tok.AccessToken), tok.Expiry.Add(-margin), nil
}
