// Package oauthtest runs a real OAuth 2.1 / OpenID Connect provider, ORY Hydra, for
// tests: in memory, on loopback ports, stopped when the test ends.
//
// The binary is build/hydra at the module root (or $TOOLNODE_HYDRA); tests skip, saying
// how to build it, when it is absent.
package oauthtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// HydraEnv names a variable that overrides where the hydra binary is.
const HydraEnv = "TOOLNODE_HYDRA"

// BuildHint says how to get the binary; it is printed when a test skips.
const BuildHint = "build it with `make build/hydra` (ory/hydra v2.3.0 from the Go module proxy)"

// Hydra is a running Hydra: one issuer, issuing JWT access tokens.
type Hydra struct {
	// Issuer is the issuer identifier, e.g. http://127.0.0.1:PORT/.
	Issuer string
	// Public is the base URL of the public API (token endpoint, metadata, keys).
	Public string
	// Admin is the base URL of the admin API.
	Admin string

	client *http.Client
}

// Client is an OAuth client registered with Hydra.
type Client struct {
	ID     string `json:"client_id"`
	Secret string `json:"client_secret"`
}

// Binary returns the path of the hydra binary, or "" when there is none.
func Binary() string {
	if p := os.Getenv(HydraEnv); p != "" {
		if _, err := os.Stat(p); err != nil {
			return ""
		}
		return p
	}
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			p := filepath.Join(dir, "build", "hydra")
			if _, err := os.Stat(p); err == nil {
				return p
			}
			return ""
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// StartHydra starts Hydra with an in-memory store and waits until it is ready. It skips
// the test when the binary is absent, and stops Hydra when the test ends.
func StartHydra(t testing.TB) *Hydra {
	t.Helper()
	bin := Binary()
	if bin == "" {
		t.Skip("no hydra binary (build/hydra or $" + HydraEnv + "): " + BuildHint)
	}
	public, admin := freePort(t), freePort(t)
	issuer := fmt.Sprintf("http://127.0.0.1:%d/", public)

	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "serve", "all", "--dev")
	cmd.Env = append(os.Environ(),
		"DSN=memory",
		"URLS_SELF_ISSUER="+issuer,
		"SERVE_PUBLIC_HOST=127.0.0.1", fmt.Sprintf("SERVE_PUBLIC_PORT=%d", public),
		"SERVE_ADMIN_HOST=127.0.0.1", fmt.Sprintf("SERVE_ADMIN_PORT=%d", admin),
		"STRATEGIES_ACCESS_TOKEN=jwt",
		"SECRETS_SYSTEM="+randomHex(16),
		"LOG_LEVEL=warn",
		"SQA_OPT_OUT=true",
	)
	// One writer for both: exec then writes from one goroutine at a time. Read it only
	// once the process is done.
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start %s: %v", bin, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cancel()
		<-done
		if t.Failed() {
			t.Logf("hydra output:\n%s", logs.String())
		}
	})

	h := &Hydra{
		Issuer: issuer,
		Public: strings.TrimSuffix(issuer, "/"),
		Admin:  fmt.Sprintf("http://127.0.0.1:%d", admin),
		client: &http.Client{Timeout: 10 * time.Second},
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case <-done:
			t.Fatalf("hydra exited before it was ready:\n%s", logs.String())
		default:
		}
		if h.ready() {
			return h
		}
		if time.Now().After(deadline) {
			cancel()
			<-done
			t.Fatalf("hydra not ready after 60s:\n%s", logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// ready reports whether both APIs answer.
func (h *Hydra) ready() bool {
	for _, u := range []string{h.Admin + "/health/ready", h.Public + "/.well-known/openid-configuration"} {
		resp, err := h.client.Get(u)
		if err != nil {
			return false
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return false
		}
	}
	return true
}

// NewClient registers a client for the client credentials grant, allowed the given
// audiences and scopes.
func (h *Hydra) NewClient(t testing.TB, audiences []string, scopes ...string) Client {
	t.Helper()
	var c Client
	h.adminJSON(t, http.MethodPost, "/admin/clients", map[string]any{
		"grant_types":                []string{"client_credentials"},
		"audience":                   audiences,
		"scope":                      strings.Join(scopes, " "),
		"token_endpoint_auth_method": "client_secret_post",
	}, &c)
	return c
}

// SetTokenLifespan sets how long the client's access tokens live.
func (h *Hydra) SetTokenLifespan(t testing.TB, c Client, d time.Duration) {
	t.Helper()
	h.adminJSON(t, http.MethodPut, "/admin/clients/"+c.ID+"/lifespans", map[string]any{
		"client_credentials_grant_access_token_lifespan": d.String(),
	}, nil)
}

// RotateKeys adds a new signing key to the access token key set; Hydra signs with it
// from then on. It returns the new key's id.
func (h *Hydra) RotateKeys(t testing.TB) string {
	t.Helper()
	var set struct {
		Keys []struct {
			Kid string `json:"kid"`
		} `json:"keys"`
	}
	h.adminJSON(t, http.MethodPost, "/admin/keys/hydra.jwt.access-token", map[string]any{
		"alg": "RS256", "use": "sig", "kid": "rotated-" + randomHex(4),
	}, &set)
	if len(set.Keys) == 0 {
		t.Fatalf("hydra created no key")
	}
	return set.Keys[0].Kid
}

// Token gets a JWT access token for audience and scopes by the client credentials grant.
func (h *Hydra) Token(t testing.TB, c Client, audience string, scopes ...string) string {
	t.Helper()
	form := url.Values{
		"grant_type":    {"client_credentials"},
		"client_id":     {c.ID},
		"client_secret": {c.Secret},
		"audience":      {audience},
		"scope":         {strings.Join(scopes, " ")},
	}
	resp, err := h.client.PostForm(h.Public+"/oauth2/token", form)
	if err != nil {
		t.Fatalf("token request: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("token request: %s: %s", resp.Status, body)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.Unmarshal(body, &tok); err != nil || tok.AccessToken == "" {
		t.Fatalf("token response %s: %v", body, err)
	}
	return tok.AccessToken
}

// adminJSON sends in as JSON to the admin API and decodes the answer into out.
func (h *Hydra) adminJSON(t testing.TB, method, path string, in, out any) {
	t.Helper()
	body, err := json.Marshal(in)
	if err != nil {
		t.Fatalf("encode %s: %v", path, err)
	}
	req, err := http.NewRequest(method, h.Admin+path, bytes.NewReader(body))
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := h.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		t.Fatalf("%s %s: %s: %s", method, path, resp.Status, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: decode %s: %v", method, path, data, err)
		}
	}
}

// freePort returns a loopback port nothing listens on now. Hydra takes ports by number,
// so there is a short window in which another process could take it; on loopback in a
// test run that is rare enough.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("find a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
