package redirect

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
)

func TestSameOrigin(t *testing.T) {
	for _, tt := range []struct {
		from, to string
		ok       bool
	}{
		{"http://127.0.0.1:8080/mcp", "http://127.0.0.1:8080/mcp/", true},
		{"https://mcp.example.com/mcp", "https://MCP.example.com:443/v2/mcp", true},
		{"http://mcp.example.com/mcp", "http://mcp.example.com:80/other", true},
		{"http://127.0.0.1:8080/mcp", "http://127.0.0.1:8081/mcp", false},
		{"https://mcp.example.com/mcp", "http://mcp.example.com/mcp", false},
		{"http://mcp.example.com/mcp", "https://mcp.example.com/mcp", false},
		{"https://example.com/mcp", "https://api.example.com/mcp", false},
		{"https://mcp.example.com/mcp", "https://evil.example.net/mcp", false},
	} {
		t.Run(tt.from+" to "+tt.to, func(t *testing.T) {
			from, _ := url.Parse(tt.from)
			to, _ := url.Parse(tt.to)
			err := SameOrigin(&http.Request{URL: to}, []*http.Request{{URL: from}})
			if tt.ok != (err == nil) {
				t.Fatalf("SameOrigin = %v, want ok %v", err, tt.ok)
			}
			if err != nil && (!errors.Is(err, ErrOtherOrigin) || !strings.Contains(err.Error(), to.Hostname())) {
				t.Errorf("error %q does not say where the redirect went", err)
			}
		})
	}
}

// A real redirect to another loopback port is not followed, and its target never sees
// the request; one within the origin is, with the request's headers, and the client's own
// policy still applies after ours.
func TestClient(t *testing.T) {
	var reached atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
	}))
	t.Cleanup(other.Close)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, other.URL+"/mcp", http.StatusTemporaryRedirect)
		case "/moved":
			http.Redirect(w, r, "/mcp", http.StatusPermanentRedirect)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusTemporaryRedirect)
		case "/mcp":
			fmt.Fprint(w, r.Header.Get("X-Api-Key"))
		}
	}))
	t.Cleanup(srv.Close)
	var asked atomic.Int32
	c := Client(&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error {
		asked.Add(1)
		return nil
	}})
	get := func(path string) (string, error) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader("{}"))
		req.Header.Set("X-Api-Key", "secret")
		resp, err := c.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	if body, err := get("/moved"); err != nil || body != "secret" || asked.Load() != 1 {
		t.Errorf("a redirect within the origin: %q %v, the client's own policy asked %d times", body, err, asked.Load())
	}
	if _, err := get("/away"); !errors.Is(err, ErrOtherOrigin) || reached.Load() != 0 {
		t.Errorf("a redirect to another origin: %v, its server reached %d times", err, reached.Load())
	}
	if _, err := get("/loop"); err == nil || !strings.Contains(err.Error(), "redirects") {
		t.Errorf("a redirect loop: %v", err)
	}
}
