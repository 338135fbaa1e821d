package oauth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/toolnode/toolnode/runtime/internal/oauth"
	"github.com/toolnode/toolnode/runtime/internal/oauth/oauthtest"
)

// signingIssuer is an issuer on loopback whose tokens the test signs itself, with any
// header: no provider issues every typ.
type signingIssuer struct {
	url string
	key *ecdsa.PrivateKey
}

func startSigningIssuer(t *testing.T) *signingIssuer {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	iss := &signingIssuer{key: key}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]string{"issuer": iss.url, "jwks_uri": iss.url + "jwks"})
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Algorithm: "ES256", Use: "sig"}}})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	iss.url = srv.URL + "/"
	return iss
}

// token signs an access token for resource, its header's typ set when typ is not "".
func (iss *signingIssuer) token(t *testing.T, typ string) string {
	t.Helper()
	opts := &jose.SignerOptions{}
	if typ != "" {
		opts = opts.WithType(jose.ContentType(typ))
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: iss.key, KeyID: "k1"}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	claims, _ := json.Marshal(map[string]any{"iss": iss.url, "aud": resource, "sub": "someone", "scope": "tools:call",
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix(), "client_id": "c", "groups": []string{"staff", "treasury"}})
	jws, err := signer.Sign(claims)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jws.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// RFC 9068's at+jwt passes always; JWT, or no typ, as most providers issue access tokens,
// unless RequireATJWT; any other type never.
func TestTokenTypes(t *testing.T) {
	iss := startSigningIssuer(t)
	servers := map[bool]*oauth.ResourceServer{}
	for _, strict := range []bool{false, true} {
		rs, err := oauth.New(context.Background(), oauth.Config{Issuer: iss.url, ResourceURL: resource, RequireATJWT: strict})
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		servers[strict] = rs
	}
	for _, tt := range []struct {
		typ     string
		lenient string // "" when accepted, else in the error
		strict  string
	}{
		{typ: "at+jwt"},
		{typ: "application/at+jwt"},
		{typ: "AT+JWT"},
		{typ: "JWT", strict: `typ "JWT", and only at+jwt`},
		{typ: "", strict: "no typ, and only at+jwt"},
		{typ: "dpop+jwt", lenient: "it is not an access token", strict: "it is not an access token"},
		{typ: "logout+jwt", lenient: "it is not an access token", strict: "it is not an access token"},
	} {
		tok := iss.token(t, tt.typ)
		for strict, want := range map[bool]string{false: tt.lenient, true: tt.strict} {
			got, err := servers[strict].Verify(context.Background(), tok)
			if err == nil && strings.Join(got.Groups, ",") != "staff,treasury" {
				t.Errorf("typ %q: the token's groups read as %q", tt.typ, got.Groups)
			}
			var e *oauth.Error
			switch {
			case want == "" && err != nil:
				t.Errorf("typ %q, strict %v: %v, want it accepted", tt.typ, strict, err)
			case want != "" && (!errors.As(err, &e) || e.Status != http.StatusUnauthorized || e.Code != "invalid_token" || !strings.Contains(err.Error(), want)):
				t.Errorf("typ %q, strict %v: %v, want a 401 invalid_token saying %q", tt.typ, strict, err, want)
			}
		}
	}
}

// Hydra's access tokens say typ JWT: accepted by default, refused with RequireATJWT.
func testRequireATJWT(t *testing.T, idp *oauthtest.Hydra) {
	client := idp.NewClient(t, []string{resource}, "tools:call")
	tok := idp.Token(t, client, resource, "tools:call")
	for _, strict := range []bool{false, true} {
		rs, err := oauth.New(context.Background(), oauth.Config{Issuer: idp.Issuer, ResourceURL: resource, RequireATJWT: strict})
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		_, err = rs.Verify(context.Background(), tok)
		if strict != (err != nil) || strict && !strings.Contains(err.Error(), `typ "JWT"`) {
			t.Errorf("a token of header %s, RequireATJWT %v: %v", header(t, tok), strict, err)
		}
	}
}
