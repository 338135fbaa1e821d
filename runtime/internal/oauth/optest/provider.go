// Package optest runs an OpenID provider that implements token exchange (RFC 8693) for
// tests: github.com/zitadel/oidc/v3's provider (package op) on a loopback port, over a
// storage of ours that holds a few clients in memory and signs JWT access tokens.
//
// Users are clients of the provider that get their own access tokens by the client
// credentials grant (the token's subject is the client's id), so that a test needs no
// login page; the node is a client allowed the token exchange grant. Tokens are JWTs
// signed with an RSA key made for each provider.
package optest

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
	"golang.org/x/oauth2/clientcredentials"
)

// Provider is a running OpenID provider.
type Provider struct {
	// Issuer is its issuer identifier, the URL its metadata is found under.
	Issuer string

	st *storage
}

// Config is what a test needs of the provider.
type Config struct {
	// Users are the users by name: each a client whose secret is its name reversed and
	// whose tokens name it as subject.
	Users []string
	// Audience is the audience of the users' own tokens: the node's resource URL.
	Audience string
	// Exchanger and ExchangerSecret are the node's client, allowed the token exchange
	// grant.
	Exchanger, ExchangerSecret string
	// Audiences are those a token may be exchanged for; any other is refused with
	// invalid_target.
	Audiences []string
	// Lifetime is how long an access token lives. Default 10m.
	Lifetime time.Duration
}

// Start runs a provider on a loopback port until the test ends.
func Start(t testing.TB, cfg Config) *Provider {
	t.Helper()
	if cfg.Lifetime <= 0 {
		cfg.Lifetime = 10 * time.Minute
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	st := &storage{cfg: cfg, key: key, keyID: "k1", clients: map[string]*client{}}
	for _, u := range cfg.Users {
		st.clients[u] = &client{id: u, secret: Secret(u), grants: []oidc.GrantType{oidc.GrantTypeClientCredentials}}
	}
	st.clients[cfg.Exchanger] = &client{id: cfg.Exchanger, secret: cfg.ExchangerSecret, grants: []oidc.GrantType{oidc.GrantTypeTokenExchange}}

	var handler http.Handler
	var ready sync.WaitGroup
	ready.Add(1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ready.Wait()
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	var cryptoKey [32]byte
	if _, err := rand.Read(cryptoKey[:]); err != nil {
		t.Fatal(err)
	}
	p, err := op.NewProvider(&op.Config{CryptoKey: cryptoKey}, st, op.StaticIssuer(srv.URL), op.WithAllowInsecure())
	if err != nil {
		t.Fatalf("optest: %v", err)
	}
	handler = p
	ready.Done()
	return &Provider{Issuer: srv.URL, st: st}
}

// Secret is the client secret of user: its name reversed.
func Secret(user string) string {
	r := []rune(user)
	slices.Reverse(r)
	return string(r)
}

// Token gets an access token of user for the node, by the client credentials grant.
func (p *Provider) Token(t testing.TB, user string) string {
	t.Helper()
	cc := clientcredentials.Config{ClientID: user, ClientSecret: Secret(user), TokenURL: p.Issuer + "/oauth/token"}
	tok, err := cc.Token(context.Background())
	if err != nil {
		t.Fatalf("optest: a token of %s: %v", user, err)
	}
	return tok.AccessToken
}

// Exchanges is how many token exchanges the provider has granted.
func (p *Provider) Exchanges() int64 { return p.st.exchanges.Load() }

// storage is what op.Provider asks of its storage: clients, signing keys, and the
// decisions on each grant. It keeps no tokens: they are JWTs, checked by their signature.
type storage struct {
	cfg       Config
	key       *rsa.PrivateKey
	keyID     string
	clients   map[string]*client // not changed after Start
	ids       atomic.Int64
	exchanges atomic.Int64
}

var (
	errNotHere = errors.New("optest: this provider serves the client credentials and token exchange grants only")

	_ op.Storage                  = (*storage)(nil)
	_ op.ClientCredentialsStorage = (*storage)(nil)
	_ op.TokenExchangeStorage     = (*storage)(nil)
)

// The authorization code, refresh token and session parts of op.AuthStorage: not served.

func (s *storage) CreateAuthRequest(context.Context, *oidc.AuthRequest, string) (op.AuthRequest, error) {
	return nil, errNotHere
}
func (s *storage) AuthRequestByID(context.Context, string) (op.AuthRequest, error) {
	return nil, errNotHere
}
func (s *storage) AuthRequestByCode(context.Context, string) (op.AuthRequest, error) {
	return nil, errNotHere
}
func (s *storage) SaveAuthCode(context.Context, string, string) error { return errNotHere }
func (s *storage) DeleteAuthRequest(context.Context, string) error    { return errNotHere }
func (s *storage) CreateAccessAndRefreshTokens(context.Context, op.TokenRequest, string) (string, string, time.Time, error) {
	return "", "", time.Time{}, errNotHere
}
func (s *storage) TokenRequestByRefreshToken(context.Context, string) (op.RefreshTokenRequest, error) {
	return nil, errNotHere
}
func (s *storage) TerminateSession(context.Context, string, string) error { return nil }
func (s *storage) RevokeToken(context.Context, string, string, string) *oidc.Error {
	return oidc.ErrUnsupportedGrantType().WithDescription("revocation is not served here")
}
func (s *storage) GetRefreshTokenInfo(context.Context, string, string) (string, string, error) {
	return "", "", op.ErrInvalidRefreshToken
}

// CreateAccessToken names a new access token and says when it expires; op signs it.
func (s *storage) CreateAccessToken(context.Context, op.TokenRequest) (string, time.Time, error) {
	return fmt.Sprintf("at-%d", s.ids.Add(1)), time.Now().Add(s.cfg.Lifetime), nil
}

func (s *storage) SigningKey(context.Context) (op.SigningKey, error) {
	return signingKey{id: s.keyID, key: s.key}, nil
}
func (s *storage) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	return []jose.SignatureAlgorithm{jose.RS256}, nil
}
func (s *storage) KeySet(context.Context) ([]op.Key, error) {
	return []op.Key{publicKey{id: s.keyID, key: &s.key.PublicKey}}, nil
}

// op.OPStorage.

func (s *storage) GetClientByClientID(_ context.Context, id string) (op.Client, error) {
	if c, ok := s.clients[id]; ok {
		return c, nil
	}
	return nil, fmt.Errorf("no client %q", id)
}
func (s *storage) AuthorizeClientIDSecret(_ context.Context, id, secret string) error {
	if c, ok := s.clients[id]; ok && c.secret == secret {
		return nil
	}
	return oidc.ErrInvalidClient().WithDescription("unknown client or wrong secret")
}
func (s *storage) SetUserinfoFromScopes(context.Context, *oidc.UserInfo, string, string, []string) error {
	return nil
}
func (s *storage) SetUserinfoFromToken(context.Context, *oidc.UserInfo, string, string, string) error {
	return nil
}
func (s *storage) SetIntrospectionFromToken(context.Context, *oidc.IntrospectionResponse, string, string, string) error {
	return nil
}
func (s *storage) GetPrivateClaimsFromScopes(_ context.Context, _, _ string, scopes []string) (map[string]any, error) {
	return scopeClaim(scopes), nil
}
func (s *storage) GetKeyByIDAndClientID(context.Context, string, string) (*jose.JSONWebKey, error) {
	return nil, errNotHere
}
func (s *storage) ValidateJWTProfileScopes(_ context.Context, _ string, scopes []string) ([]string, error) {
	return scopes, nil
}
func (s *storage) Health(context.Context) error { return nil }

// op.ClientCredentialsStorage: a user's own token, for the node.

func (s *storage) ClientCredentials(ctx context.Context, id, secret string) (op.Client, error) {
	if err := s.AuthorizeClientIDSecret(ctx, id, secret); err != nil {
		return nil, err
	}
	return s.clients[id], nil
}
func (s *storage) ClientCredentialsTokenRequest(_ context.Context, id string, scopes []string) (op.TokenRequest, error) {
	return tokenRequest{subject: id, audience: []string{s.cfg.Audience}, scopes: scopes}, nil
}

// op.TokenExchangeStorage: the node trades a user's token for one of another audience.

// ValidateTokenExchangeRequest grants an exchange to the exchanging client only, for the
// audiences the test allows, and refuses any other audience with invalid_target and a
// description naming it.
func (s *storage) ValidateTokenExchangeRequest(_ context.Context, req op.TokenExchangeRequest) error {
	if req.GetClientID() != s.cfg.Exchanger {
		return oidc.ErrUnauthorizedClient().WithDescription("client %s may not exchange tokens", req.GetClientID())
	}
	aud := req.GetAudience()
	if len(aud) != 1 || !slices.Contains(s.cfg.Audiences, aud[0]) {
		return oidc.ErrInvalidTarget().WithDescription("tokens for audience %q are not given to %s", strings.Join(aud, " "), req.GetExchangeSubject())
	}
	if req.GetRequestedTokenType() == "" {
		req.SetRequestedTokenType(oidc.AccessTokenType)
	}
	req.SetCurrentScopes(req.GetScopes())
	s.exchanges.Add(1)
	return nil
}
func (s *storage) CreateTokenExchangeRequest(context.Context, op.TokenExchangeRequest) error {
	return nil
}
func (s *storage) GetPrivateClaimsFromTokenExchangeRequest(_ context.Context, req op.TokenExchangeRequest) (map[string]any, error) {
	return scopeClaim(req.GetScopes()), nil
}
func (s *storage) SetUserinfoFromTokenExchangeRequest(context.Context, *oidc.UserInfo, op.TokenExchangeRequest) error {
	return nil
}

// scopeClaim is the RFC 9068 scope claim of scopes; nil for none.
func scopeClaim(scopes []string) map[string]any {
	if len(scopes) == 0 {
		return nil
	}
	return map[string]any{"scope": strings.Join(scopes, " ")}
}

// tokenRequest is a client credentials grant's op.TokenRequest.
type tokenRequest struct {
	subject  string
	audience []string
	scopes   []string
}

func (r tokenRequest) GetSubject() string    { return r.subject }
func (r tokenRequest) GetAudience() []string { return r.audience }
func (r tokenRequest) GetScopes() []string   { return r.scopes }

// signingKey and publicKey are the provider's RSA key as op wants it.
type signingKey struct {
	id  string
	key *rsa.PrivateKey
}

func (k signingKey) SignatureAlgorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k signingKey) Key() any                                    { return k.key }
func (k signingKey) ID() string                                  { return k.id }

type publicKey struct {
	id  string
	key *rsa.PublicKey
}

func (k publicKey) ID() string                         { return k.id }
func (k publicKey) Algorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k publicKey) Use() string                        { return "sig" }
func (k publicKey) Key() any                           { return k.key }

// client is a client of the provider: a user or the node.
type client struct {
	id, secret string
	grants     []oidc.GrantType
}

func (c *client) GetID() string                        { return c.id }
func (c *client) RedirectURIs() []string               { return nil }
func (c *client) PostLogoutRedirectURIs() []string     { return nil }
func (c *client) ApplicationType() op.ApplicationType  { return op.ApplicationTypeWeb }
func (c *client) AuthMethod() oidc.AuthMethod          { return oidc.AuthMethodBasic }
func (c *client) ResponseTypes() []oidc.ResponseType   { return nil }
func (c *client) GrantTypes() []oidc.GrantType         { return c.grants }
func (c *client) LoginURL(string) string               { return "" }
func (c *client) AccessTokenType() op.AccessTokenType  { return op.AccessTokenTypeJWT }
func (c *client) IDTokenLifetime() time.Duration       { return time.Hour }
func (c *client) DevMode() bool                        { return true }
func (c *client) IsScopeAllowed(string) bool           { return true }
func (c *client) IDTokenUserinfoClaimsAssertion() bool { return false }
func (c *client) ClockSkew() time.Duration             { return 0 }
func (c *client) RestrictAdditionalIdTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
func (c *client) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
