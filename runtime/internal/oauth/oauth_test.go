package oauth_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/toolnode/toolnode/runtime/internal/oauth"
	"github.com/toolnode/toolnode/runtime/internal/oauth/oauthtest"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, testkit.KeptAliveConns()...)
}

const (
	resource = "https://node.test/mcp"
	other    = "https://other.test/mcp"
)

// jwksCounter counts the key set fetches that pass through it.
type jwksCounter struct {
	n    atomic.Int32
	next http.RoundTripper
}

func (c *jwksCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.HasSuffix(r.URL.Path, "jwks.json") {
		c.n.Add(1)
	}
	return c.next.RoundTrip(r)
}

// front serves the metadata document and an endpoint behind the middleware that answers
// with what it saw of the token.
func front(t *testing.T, rs *oauth.ResourceServer) *httptest.Server {
	mux := http.NewServeMux()
	for _, p := range rs.MetadataPaths() {
		mux.Handle(p, rs.MetadataHandler())
	}
	mux.Handle("/mcp", rs.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, ok := oauth.TokenFromContext(r.Context())
		if !ok {
			http.Error(w, "no token in context", http.StatusInternalServerError)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{
			"sub": tok.Subject, "scopes": tok.Scopes, "authorization": r.Header.Get("Authorization"),
		})
	})))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

type answer struct {
	status    int
	challenge string
	body      map[string]any
}

func call(t *testing.T, url, token string) answer {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	a := answer{status: resp.StatusCode, challenge: resp.Header.Get("WWW-Authenticate")}
	if err := json.Unmarshal(data, &a.body); err != nil {
		t.Fatalf("answer %q: %v", data, err)
	}
	return a
}

// tamper flips one bit of the token's signature.
func tamper(t *testing.T, tok string) string {
	parts := strings.Split(tok, ".")
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		t.Fatalf("signature of %q: %v", tok, err)
	}
	sig[len(sig)/2] ^= 1
	parts[2] = base64.RawURLEncoding.EncodeToString(sig)
	return strings.Join(parts, ".")
}

// TestAgainstHydra runs the cases that can share one provider (and a second one, for a
// foreign issuer): each start costs seconds.
func TestAgainstHydra(t *testing.T) {
	idp := oauthtest.StartHydra(t)
	client := idp.NewClient(t, []string{resource, other}, "tools:read", "tools:call")
	short := idp.NewClient(t, []string{resource}, "tools:read", "tools:call")
	idp.SetTokenLifespan(t, short, time.Second)
	expired := idp.Token(t, short, resource, "tools:read", "tools:call")
	expiredAt := time.Now().Add(time.Second)

	stranger := oauthtest.StartHydra(t)
	foreign := stranger.NewClient(t, []string{resource}, "tools:read", "tools:call")

	counter := &jwksCounter{next: http.DefaultTransport}
	ctx := context.Background()
	rs, err := oauth.New(ctx, oauth.Config{
		Issuer:         idp.Issuer,
		ResourceURL:    resource,
		RequiredScopes: []string{"tools:call"},
		HTTPClient:     &http.Client{Transport: counter, Timeout: 10 * time.Second},
	})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	srv := front(t, rs)
	good := idp.Token(t, client, resource, "tools:read", "tools:call")
	// The expired token's time must have passed: what is tested. exp has second precision.
	time.Sleep(time.Until(expiredAt.Add(1100 * time.Millisecond)))

	metadataURL := `resource_metadata="https://node.test/.well-known/oauth-protected-resource/mcp"`
	tests := []struct {
		name      string
		token     string
		status    int
		challenge []string // parts the WWW-Authenticate header must hold
		sub       string
		cause     string // in the error Verify returns: the check that refused it
	}{
		{name: "valid", token: good, status: 200, sub: client.ID},
		{name: "no token", status: 401, challenge: []string{metadataURL, `scope="tools:call"`}},
		{name: "other audience", token: idp.Token(t, client, other, "tools:read", "tools:call"), status: 401,
			challenge: []string{metadataURL, `error="invalid_token"`}, cause: "expected audience"},
		{name: "expired", token: expired, status: 401, challenge: []string{metadataURL, `error="invalid_token"`}, cause: "expired"},
		{name: "bad signature", token: tamper(t, good), status: 401, challenge: []string{metadataURL, `error="invalid_token"`},
			cause: "signature does not verify"},
		// Signed by a key the issuer never published, which is checked before the iss claim.
		{name: "other issuer", token: stranger.Token(t, foreign, resource, "tools:read", "tools:call"), status: 401,
			challenge: []string{metadataURL, `error="invalid_token"`}, cause: "key id"},
		{name: "not a JWT", token: "opaque-token", status: 401, challenge: []string{`error="invalid_token"`}, cause: "malformed"},
		{name: "missing scope", token: idp.Token(t, client, resource, "tools:read"), status: 403,
			challenge: []string{metadataURL, `error="insufficient_scope"`, `scope="tools:call"`}, cause: "lacks scope tools:call"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := call(t, srv.URL+"/mcp", tc.token)
			if a.status != tc.status {
				t.Fatalf("status %d, want %d (challenge %q, body %v)", a.status, tc.status, a.challenge, a.body)
			}
			if tc.cause != "" {
				if _, err := rs.Verify(context.Background(), tc.token); err == nil || !strings.Contains(err.Error(), tc.cause) {
					t.Errorf("Verify = %v, want an error about %q", err, tc.cause)
				}
			}
			for _, part := range tc.challenge {
				if !strings.HasPrefix(a.challenge, "Bearer ") || !strings.Contains(a.challenge, part) {
					t.Errorf("WWW-Authenticate %q lacks %s", a.challenge, part)
				}
			}
			if tc.status == 200 {
				if a.body["sub"] != tc.sub {
					t.Errorf("sub %v, want %s", a.body["sub"], tc.sub)
				}
				if diff := cmp.Diff([]any{"tools:read", "tools:call"}, a.body["scopes"]); diff != "" {
					t.Errorf("scopes (-want +got):\n%s", diff)
				}
				if a.body["authorization"] != "" {
					t.Errorf("the handler saw the Authorization header %q", a.body["authorization"])
				}
			}
		})
	}

	// One fetch at start; the foreign token's unknown key id may cause one more, and the
	// bad ones that follow it none, however many there are.
	before := counter.n.Load()
	if before > 2 {
		t.Errorf("%d key set fetches, want at most 2", before)
	}
	for range 5 {
		if a := call(t, srv.URL+"/mcp", tests[5].token); a.status != 401 {
			t.Fatalf("foreign token: status %d", a.status)
		}
	}
	if n := counter.n.Load(); n != before {
		t.Errorf("unknown key ids caused %d key set fetches within the refresh interval, want 0", n-before)
	}

	t.Run("not before", func(t *testing.T) { testNotBefore(t, idp) })
	t.Run("metadata", func(t *testing.T) { testMetadata(t, idp) })
	t.Run("bad settings", func(t *testing.T) { testNewRefusesUnknownIssuer(t, idp) })
	t.Run("require at+jwt", func(t *testing.T) { testRequireATJWT(t, idp) })
}

func testNotBefore(t *testing.T, idp *oauthtest.Hydra) {
	client := idp.NewClient(t, []string{resource}, "tools:call")
	// A clock ten minutes behind the provider's sees the token's nbf in the future, past
	// the five minutes of skew allowed.
	rs, err := oauth.New(context.Background(), oauth.Config{
		Issuer: idp.Issuer, ResourceURL: resource,
		Now: func() time.Time { return time.Now().Add(-10 * time.Minute) },
	})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	_, err = rs.Verify(context.Background(), idp.Token(t, client, resource, "tools:call"))
	var e *oauth.Error
	if err == nil || !errors.As(err, &e) || e.Status != 401 || !strings.Contains(err.Error(), "nbf") {
		t.Fatalf("Verify = %v, want a 401 about nbf", err)
	}
}

func TestKeyRotation(t *testing.T) {
	idp := oauthtest.StartHydra(t)
	client := idp.NewClient(t, []string{resource}, "tools:call")
	counter := &jwksCounter{next: http.DefaultTransport}
	rs, err := oauth.New(context.Background(), oauth.Config{
		Issuer: idp.Issuer, ResourceURL: resource,
		HTTPClient: &http.Client{Transport: counter, Timeout: 10 * time.Second},
	})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if _, err := rs.Verify(context.Background(), idp.Token(t, client, resource, "tools:call")); err != nil {
		t.Fatalf("token before rotation: %v", err)
	}
	kid := idp.RotateKeys(t)
	tok := idp.Token(t, client, resource, "tools:call")
	if !strings.Contains(header(t, tok), kid) {
		t.Skipf("hydra did not sign with the new key %s (header %s)", kid, header(t, tok))
	}
	before := counter.n.Load()
	if _, err := rs.Verify(context.Background(), tok); err != nil {
		t.Fatalf("token signed with the rotated key: %v", err)
	}
	if n := counter.n.Load() - before; n != 1 {
		t.Errorf("%d key set fetches for the new key id, want 1", n)
	}
}

func header(t *testing.T, tok string) string {
	h, err := base64.RawURLEncoding.DecodeString(strings.Split(tok, ".")[0])
	if err != nil {
		t.Fatalf("header of %q: %v", tok, err)
	}
	return string(h)
}

func testMetadata(t *testing.T, idp *oauthtest.Hydra) {
	rs, err := oauth.New(context.Background(), oauth.Config{
		Issuer: idp.Issuer, ResourceURL: resource,
		RequiredScopes: []string{"tools:call"}, ScopesSupported: []string{"tools:read", "tools:call"},
	})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	srv := front(t, rs)
	want := oauth.Metadata{
		Resource:               resource,
		AuthorizationServers:   []string{idp.Issuer},
		ScopesSupported:        []string{"tools:call", "tools:read"},
		BearerMethodsSupported: []string{"header"},
	}
	for _, path := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		var got oauth.Metadata
		err = json.NewDecoder(resp.Body).Decode(&got)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET %s: %s, %v", path, resp.Status, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("GET %s (-want +got):\n%s", path, diff)
		}
	}
	// The server the document names is the provider: its own metadata says so.
	resp, err := http.Get(strings.TrimSuffix(want.AuthorizationServers[0], "/") + "/.well-known/openid-configuration")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var md struct {
		Issuer        string `json:"issuer"`
		TokenEndpoint string `json:"token_endpoint"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&md); err != nil || md.Issuer != idp.Issuer || md.TokenEndpoint == "" {
		t.Errorf("the named authorization server's metadata: %+v, %v", md, err)
	}
}

func testNewRefusesUnknownIssuer(t *testing.T, idp *oauthtest.Hydra) {
	tests := []struct{ name, issuer, resource, want string }{
		{"issuer spelt without its slash", strings.TrimSuffix(idp.Issuer, "/"), resource, "names issuer"},
		{"nothing listens", "http://127.0.0.1:1/", resource, "discover issuer"},
		{"relative resource", idp.Issuer, "/mcp", "not an absolute URL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := oauth.New(context.Background(), oauth.Config{Issuer: tc.issuer, ResourceURL: tc.resource})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New = %v, want an error with %q", err, tc.want)
			}
		})
	}
}
