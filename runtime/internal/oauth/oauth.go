// Package oauth makes the node's HTTP front an OAuth 2.1 resource server, as the MCP
// authorization spec asks: bearer JWT access tokens from one issuer are checked for
// signature, issuer, audience, expiry and not-before; clients without a valid token get a
// 401 naming the protected resource metadata (RFC 9728) that tells them where to get one.
//
// Claims are checked by github.com/coreos/go-oidc/v3 and signatures by its JOSE library,
// github.com/go-jose/go-jose/v4: both widely used, and together they add one module to
// the build (golang.org/x/oauth2 was already in it), where lestrrat-go/jwx would add
// five. The key set cache is ours because go-oidc's refetches on every unknown key id
// without a limit.
package oauth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/hashicorp/go-hclog"
)

// Config says which tokens the resource server accepts.
type Config struct {
	// Issuer is the authorization server's issuer identifier, exactly as its metadata
	// spells it (trailing slash included). Required.
	Issuer string
	// ResourceURL is the canonical URL of the protected MCP endpoint, e.g.
	// https://node.example.com/mcp. It is the `resource` of the metadata document and
	// locates that document. Required.
	ResourceURL string
	// Audience is the `aud` a token must carry. Default: ResourceURL, the audience RFC
	// 8707 resource indicators produce.
	Audience string
	// RequiredScopes must all be granted to a token, else 403 insufficient_scope.
	// Default: none.
	RequiredScopes []string
	// ScopesSupported are advertised in the metadata document besides RequiredScopes,
	// e.g. the scopes access entries select on. Default: none.
	ScopesSupported []string
	// HTTPClient fetches the issuer's metadata and keys. Default: a client with a 10s
	// timeout.
	HTTPClient *http.Client
	// KeyRefreshInterval is the least time between two fetches of the key set caused by
	// tokens with unknown key ids. Default: 30s.
	KeyRefreshInterval time.Duration
	// KeyMaxAge is how long a fetched key set is used before it is fetched again.
	// Default: 1h.
	KeyMaxAge time.Duration
	// RequireATJWT accepts only tokens whose JOSE header says typ at+jwt (or
	// application/at+jwt), as RFC 9068 asks of resource servers, so that no other JWT of
	// the issuer (an ID token naming the node as its client) passes for an access token.
	// Default false: tokens typed JWT, or not typed, pass too, as Hydra, Keycloak and
	// Entra ID issue them. Tokens of any other type are refused either way.
	RequireATJWT bool
	// Now is the clock. Default: time.Now.
	Now func() time.Time
	// Logger receives key refresh failures. Default: hclog.NewNullLogger().
	Logger hclog.Logger
}

// ResourceServer checks bearer tokens against one issuer. It is safe for concurrent use.
type ResourceServer struct {
	cfg      Config
	verifier *oidc.IDTokenVerifier
	resource *url.URL
}

// Token is what a verified access token says about its bearer.
type Token struct {
	// Subject is the `sub` claim: the user, or the client in a client credentials grant.
	Subject string
	// ClientID is the `client_id` claim (RFC 9068), when present.
	ClientID string
	// Scopes are the granted scopes, from `scope` (RFC 9068, space-separated) or `scp`.
	Scopes []string
	// Expiry is the `exp` claim.
	Expiry time.Time
	// Groups are the `groups` claim's names (a list, or one string), when present: an
	// access file's approval rule may name its approvers by group.
	Groups []string
	// Raw is the token as the client sent it, for token exchange (see Exchanger); it
	// prints as "[redacted]".
	Raw Secret
}

// HasScope reports whether the token grants scope.
func (t *Token) HasScope(scope string) bool { return slices.Contains(t.Scopes, scope) }

// New discovers the issuer's metadata (RFC 8414, else OpenID Connect Discovery), fetches
// its key set, and returns a resource server for cfg. It fails when the issuer cannot be
// reached, so a misspelt issuer is found at start, not at the first client.
func New(ctx context.Context, cfg Config) (*ResourceServer, error) {
	if cfg.Issuer == "" {
		return nil, errors.New("oauth: no issuer given")
	}
	resource, err := url.Parse(cfg.ResourceURL)
	if err != nil || resource.Scheme == "" || resource.Host == "" {
		return nil, fmt.Errorf("oauth: resource URL %q is not an absolute URL", cfg.ResourceURL)
	}
	if cfg.Audience == "" {
		cfg.Audience = cfg.ResourceURL
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	if cfg.KeyRefreshInterval <= 0 {
		cfg.KeyRefreshInterval = 30 * time.Second
	}
	if cfg.KeyMaxAge <= 0 {
		cfg.KeyMaxAge = time.Hour
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}

	md, err := discover(ctx, cfg.HTTPClient, cfg.Issuer)
	if err != nil {
		return nil, fmt.Errorf("oauth: %w", err)
	}
	keys := &keySet{
		url: md.JWKSURI, client: cfg.HTTPClient, now: cfg.Now, log: cfg.Logger,
		minRefresh: cfg.KeyRefreshInterval, maxAge: cfg.KeyMaxAge,
	}
	if err := keys.refresh(ctx, false); err != nil {
		return nil, fmt.Errorf("oauth: issuer %q: %w", cfg.Issuer, err)
	}
	algs := make([]string, len(signingAlgs))
	for i, a := range signingAlgs {
		algs[i] = string(a)
	}
	verifier := oidc.NewVerifier(cfg.Issuer, keys, &oidc.Config{
		ClientID:             cfg.Audience,
		SupportedSigningAlgs: algs,
		Now:                  cfg.Now,
	})
	return &ResourceServer{cfg: cfg, verifier: verifier, resource: resource}, nil
}

// Error is why a request was refused; Status is 401 or 403.
type Error struct {
	// Status is the HTTP status to answer with.
	Status int
	// Code is the RFC 6750 error code: "invalid_token", "insufficient_scope", or empty
	// when the request carried no token at all.
	Code string
	// Description is a human-readable reason, sent as error_description.
	Description string
	// Err is the underlying cause, when there is one.
	Err error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Description, e.Err)
	}
	if e.Code == "" {
		return e.Description
	}
	return e.Code + ": " + e.Description
}

func (e *Error) Unwrap() error { return e.Err }

// Authenticate checks the request's bearer token. It returns the token, or an *Error
// saying which status and challenge to answer with.
func (rs *ResourceServer) Authenticate(r *http.Request) (*Token, error) {
	raw, err := bearer(r)
	if err != nil {
		return nil, err
	}
	return rs.Verify(r.Context(), raw)
}

// Verify checks a raw JWT access token: signature, issuer, audience, expiry, not-before,
// then the required scopes. Errors are *Error.
func (rs *ResourceServer) Verify(ctx context.Context, raw string) (*Token, error) {
	idt, err := rs.verifier.Verify(ctx, raw)
	if err != nil {
		return nil, &Error{Status: http.StatusUnauthorized, Code: "invalid_token", Description: "the access token is not valid here", Err: err}
	}
	if err := checkType(raw, rs.cfg.RequireATJWT); err != nil {
		return nil, &Error{Status: http.StatusUnauthorized, Code: "invalid_token", Description: "the token is not an access token", Err: err}
	}
	var claims struct {
		ClientID string          `json:"client_id"`
		Scope    string          `json:"scope"`
		Scp      json.RawMessage `json:"scp"`
		Groups   json.RawMessage `json:"groups"`
	}
	if err := idt.Claims(&claims); err != nil {
		return nil, &Error{Status: http.StatusUnauthorized, Code: "invalid_token", Description: "the access token's claims cannot be read", Err: err}
	}
	tok := &Token{Subject: idt.Subject, ClientID: claims.ClientID, Expiry: idt.Expiry, Scopes: scopes(claims.Scope, claims.Scp),
		Groups: groups(claims.Groups), Raw: Secret(raw)}
	var missing []string
	for _, s := range rs.cfg.RequiredScopes {
		if !tok.HasScope(s) {
			missing = append(missing, s)
		}
	}
	if len(missing) > 0 {
		return tok, &Error{Status: http.StatusForbidden, Code: "insufficient_scope", Description: "the access token lacks scope " + strings.Join(missing, " ")}
	}
	return tok, nil
}

// checkType checks the typ of raw's JOSE header (RFC 8725 §3.11 explicit typing): at+jwt
// always passes, JWT and no typ unless strict, anything else never. Media types compare
// without case, and "application/" may be left out (RFC 7515 §4.1.9). raw's signature is
// verified: its header is the issuer's.
func checkType(raw string, strict bool) error {
	const strictOnly = "only at+jwt (RFC 9068) is accepted (--oauth-require-at-jwt)"
	head, _, _ := strings.Cut(raw, ".")
	b, err := base64.RawURLEncoding.DecodeString(head)
	var h struct {
		Typ *string `json:"typ"`
	}
	if err != nil || json.Unmarshal(b, &h) != nil {
		return errors.New("the token's header cannot be read")
	}
	if h.Typ == nil {
		if strict {
			return errors.New("the token's header has no typ, and " + strictOnly)
		}
		return nil
	}
	switch strings.TrimPrefix(strings.ToLower(*h.Typ), "application/") {
	case "at+jwt":
		return nil
	case "jwt":
		if strict {
			return fmt.Errorf("the token's header has typ %q, and %s", *h.Typ, strictOnly)
		}
		return nil
	}
	return fmt.Errorf("the token's header has typ %q, neither at+jwt nor JWT: it is not an access token", *h.Typ)
}

// scopes reads the granted scopes from RFC 9068's space-separated `scope`, else from
// `scp`, which providers (Hydra, Okta, Entra) send as an array or a string.
func scopes(scope string, scp json.RawMessage) []string {
	if scope != "" {
		return strings.Fields(scope)
	}
	var list []string
	if json.Unmarshal(scp, &list) == nil {
		return list
	}
	var s string
	if json.Unmarshal(scp, &s) == nil {
		return strings.Fields(s)
	}
	return nil
}

// bearer takes the token from the Authorization header (RFC 6750 §2.1; the MCP spec
// forbids tokens in the query string).
func bearer(r *http.Request) (string, error) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return "", &Error{Status: http.StatusUnauthorized, Description: "no access token given"}
	}
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(tok) == "" {
		// No error code: RFC 6750 §3.1 wants none when no bearer token was attempted,
		// and a bare challenge is what sends an MCP client into its authorization flow.
		return "", &Error{Status: http.StatusUnauthorized, Description: "the Authorization header is not a Bearer token"}
	}
	return strings.TrimSpace(tok), nil
}

// groups reads a `groups` claim: a list of names, or one name; nil for anything else.
func groups(raw json.RawMessage) []string {
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return list
	}
	var one string
	if json.Unmarshal(raw, &one) == nil && one != "" {
		return []string{one}
	}
	return nil
}
