package oauth_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/oauth"
	"github.com/toolnode/toolnode/runtime/internal/oauth/optest"
)

// Token exchange against a real RFC 8693 provider (zitadel/oidc's, see optest).

const api = "https://api.test"

// clock is a test's settable time.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func exchangeSetup(t *testing.T, lifetime time.Duration, maxEntries int) (*optest.Provider, *oauth.Exchanger, *clock) {
	t.Helper()
	idp := optest.Start(t, optest.Config{Users: []string{"alice", "bob", "carol"}, Audience: resource,
		Exchanger: "toolnode", ExchangerSecret: "node-secret", Audiences: []string{api}, Lifetime: lifetime})
	c := &clock{now: time.Now()}
	x, err := oauth.NewExchanger(context.Background(), oauth.ExchangeConfig{Issuer: idp.Issuer, ClientID: "toolnode",
		ClientSecret: "node-secret", MaxEntries: maxEntries, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	return idp, x, c
}

func exchange(t *testing.T, x *oauth.Exchanger, sub, token string) oauth.Secret {
	t.Helper()
	got, err := x.Exchange(context.Background(), oauth.ExchangeRequest{Subject: sub, SubjectToken: oauth.Secret(token), Audience: api, Scopes: []string{"repo:read"}})
	if err != nil {
		t.Fatalf("exchange for %s: %v", sub, err)
	}
	return got
}

func TestAnExchangedTokenIsKeptPerCallerUntilShortlyBeforeItExpires(t *testing.T) {
	idp, x, c := exchangeSetup(t, 2*time.Minute, 0)
	alice := idp.Token(t, "alice")
	first := exchange(t, x, "alice", alice)
	if again := exchange(t, x, "alice", alice); again != first || idp.Exchanges() != 1 {
		t.Fatalf("a second call of the same caller exchanged again (%d exchanges)", idp.Exchanges())
	}
	if _, ok := x.Cached(oauth.ExchangeRequest{Subject: "alice", SubjectToken: oauth.Secret(alice), Audience: api, Scopes: []string{"repo:read"}}); !ok {
		t.Error("Cached does not find the kept token")
	}
	// Another token of the same user is another caller; another user too.
	if exchange(t, x, "alice", idp.Token(t, "alice")) == first {
		t.Error("another token of alice got the token kept for the first")
	}
	if exchange(t, x, "bob", idp.Token(t, "bob")) == first {
		t.Error("bob got alice's token")
	}
	if idp.Exchanges() != 3 || x.Len() != 3 {
		t.Fatalf("%d exchanges, %d kept; want 3 and 3", idp.Exchanges(), x.Len())
	}
	// Kept 40s before it expires; 25s before, it is exchanged again (the margin is 30s).
	c.Add(2*time.Minute - 40*time.Second)
	if exchange(t, x, "alice", alice) != first || idp.Exchanges() != 3 {
		t.Errorf("a token 40s from its expiry was not kept (%d exchanges)", idp.Exchanges())
	}
	c.Add(15 * time.Second)
	if exchange(t, x, "alice", alice) == first || idp.Exchanges() != 4 {
		t.Errorf("a token 25s from its expiry was used again (%d exchanges)", idp.Exchanges())
	}
}

func TestTheExchangeCacheIsBounded(t *testing.T) {
	idp, x, _ := exchangeSetup(t, time.Hour, 2)
	tokens := map[string]string{}
	for _, u := range []string{"alice", "bob", "carol"} {
		tokens[u] = idp.Token(t, u)
		exchange(t, x, u, tokens[u])
	}
	if x.Len() != 2 || x.MaxEntries() != 2 {
		t.Fatalf("%d kept of at most %d, want 2 of 2", x.Len(), x.MaxEntries())
	}
	exchange(t, x, "carol", tokens["carol"]) // kept
	exchange(t, x, "alice", tokens["alice"]) // the least recently used: gone
	if idp.Exchanges() != 4 {
		t.Errorf("%d exchanges, want 4: carol's kept, alice's dropped past the bound", idp.Exchanges())
	}
}

func TestCallersAskingAtOnceShareOneExchange(t *testing.T) {
	idp, x, _ := exchangeSetup(t, time.Hour, 0)
	alice := idp.Token(t, "alice")
	var wg sync.WaitGroup
	got := make([]oauth.Secret, 8)
	for i := range got {
		wg.Go(func() { got[i] = exchange(t, x, "alice", alice) })
	}
	wg.Wait()
	for _, g := range got {
		if g != got[0] {
			t.Fatal("callers asking at once got different tokens")
		}
	}
	if idp.Exchanges() != 1 {
		t.Errorf("%d exchanges for 8 callers at once, want 1", idp.Exchanges())
	}
}

func TestARefusedExchangeSaysTheIssuersReasonAndNoToken(t *testing.T) {
	idp, x, _ := exchangeSetup(t, time.Hour, 0)
	alice := idp.Token(t, "alice")
	_, err := x.Exchange(context.Background(), oauth.ExchangeRequest{Subject: "alice", SubjectToken: oauth.Secret(alice), Audience: "https://other.test"})
	var xe *oauth.ExchangeError
	if !errors.As(err, &xe) || xe.Code != "invalid_target" || xe.Description != `tokens for audience "https://other.test" are not given to alice` || xe.Status != 400 {
		t.Fatalf("refusal %#v (%v)", xe, err)
	}
	if strings.Contains(err.Error(), alice) || !strings.Contains(err.Error(), "invalid_target: tokens for audience") {
		t.Errorf("the refusal reads %q", err)
	}
	// A token the issuer does not know.
	_, err = x.Exchange(context.Background(), oauth.ExchangeRequest{Subject: "alice", SubjectToken: "not-a-token", Audience: api})
	if !errors.As(err, &xe) || xe.Code != "invalid_request" || strings.Contains(err.Error(), "not-a-token") {
		t.Errorf("a bad subject token: %v", err)
	}
	// A node with a wrong secret.
	bad, err := oauth.NewExchanger(context.Background(), oauth.ExchangeConfig{Issuer: idp.Issuer, ClientID: "toolnode", ClientSecret: "wrong"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = bad.Exchange(context.Background(), oauth.ExchangeRequest{Subject: "alice", SubjectToken: oauth.Secret(alice), Audience: api})
	if !errors.As(err, &xe) || xe.Code != "invalid_client" {
		t.Errorf("a wrong client secret: %v", err)
	}
}

func TestASecretNeverPrints(t *testing.T) {
	tok := oauth.Token{Subject: "alice", Raw: "eyJ.secret.sig"}
	b, err := json.Marshal(tok)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{fmt.Sprint(tok), fmt.Sprintf("%v %+v %#v %s %q", tok, tok, tok, tok.Raw, tok.Raw), fmt.Sprintf("%+v", &tok), string(b)} {
		if strings.Contains(s, "secret") {
			t.Errorf("a token printed: %s", s)
		}
	}
	if tok.Raw.Reveal() != "eyJ.secret.sig" {
		t.Error("Reveal does not give the token")
	}
}

// BenchmarkExchange measures an exchange kept for its caller (a digest and a map lookup)
// and one the issuer is asked for (a POST to zitadel/oidc's provider on loopback, which
// checks the subject token and signs a new one), each caller's by its own key.
func BenchmarkExchange(b *testing.B) {
	idp := optest.Start(b, optest.Config{Users: []string{"alice"}, Audience: resource,
		Exchanger: "toolnode", ExchangerSecret: "node-secret", Audiences: []string{api}, Lifetime: time.Hour})
	x, err := oauth.NewExchanger(context.Background(), oauth.ExchangeConfig{Issuer: idp.Issuer, ClientID: "toolnode", ClientSecret: "node-secret"})
	if err != nil {
		b.Fatal(err)
	}
	alice := oauth.Secret(idp.Token(b, "alice"))
	req := oauth.ExchangeRequest{Subject: "alice", SubjectToken: alice, Audience: api, Scopes: []string{"repo:read"}}
	if _, err := x.Exchange(context.Background(), req); err != nil {
		b.Fatal(err)
	}
	b.Run("cached", func(b *testing.B) {
		for b.Loop() {
			if _, err := x.Exchange(context.Background(), req); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("uncached", func(b *testing.B) {
		i := 0
		for b.Loop() {
			i++
			// Another subject is another caller: a key not kept, so the issuer is asked.
			r := req
			r.Subject = "alice-" + strconv.Itoa(i)
			if _, err := x.Exchange(context.Background(), r); err != nil {
				b.Fatal(err)
			}
		}
	})
}
