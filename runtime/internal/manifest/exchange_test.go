package manifest

import (
	"strings"
	"testing"
)

func TestTokenExchangeManifests(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		json    string
		wantErr string // substring; "" means valid
	}{
		{"url, header by default", `{"name": "r", "url": "https://h/mcp", "token_exchange": {"audience": "https://api.example.com", "scopes": ["repo:read", "issues"]}}`, ""},
		{"url, a header of its own", `{"name": "r", "url": "https://h/mcp", "token_exchange": {"audience": "api", "header": "X-Api-Token"}}`, ""},
		{"command with a process per client", `{"name": "c", "command": ["./run"], "isolation": "client", "token_exchange": {"audience": "api", "meta": "com.example/token"}}`, ""},
		{"not an object", `{"name": "r", "url": "https://h/mcp", "token_exchange": "api"}`, `key "token_exchange" must be an object`},
		{"unknown key", `{"name": "r", "url": "https://h/mcp", "token_exchange": {"audience": "api", "scope": "x"}}`, `unknown key "scope" in token_exchange (known keys: audience, scopes, header, meta)`},
		{"no audience", `{"name": "r", "url": "https://h/mcp", "token_exchange": {"scopes": ["a"]}}`, `token_exchange: missing "audience"`},
		{"scopes in one string", `{"name": "r", "url": "https://h/mcp", "token_exchange": {"audience": "api", "scopes": ["a b"]}}`, `scope "a b": a scope is one word`},
		{"bad header", `{"name": "r", "url": "https://h/mcp", "token_exchange": {"audience": "api", "header": "X Token"}}`, `header name "X Token"`},
		{"a header of the node's", `{"name": "r", "url": "https://h/mcp", "token_exchange": {"audience": "api", "header": "mcp-session-id"}}`, `is one the node sets itself`},
		{"meta on a url bundle", `{"name": "r", "url": "https://h/mcp", "token_exchange": {"audience": "api", "meta": "x/t"}}`, `"meta" is for command bundles`},
		{"command shared by every client", `{"name": "c", "command": ["./run"], "token_exchange": {"audience": "api", "meta": "x/t"}}`, `needs "isolation": "client"`},
		{"header on a command bundle", `{"name": "c", "command": ["./run"], "isolation": "client", "token_exchange": {"audience": "api", "header": "Authorization"}}`, `"header" is for "url" bundles`},
		{"command without meta", `{"name": "c", "command": ["./run"], "isolation": "client", "token_exchange": {"audience": "api"}}`, `missing "meta"`},
		{"meta of MCP's", `{"name": "c", "command": ["./run"], "isolation": "client", "token_exchange": {"audience": "api", "meta": "progressToken"}}`, `a member MCP itself defines`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.json), dir)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestTokenExchangeHeaderValues(t *testing.T) {
	m, err := Parse([]byte(`{"name": "r", "url": "https://h/mcp", "token_exchange": {"audience": "api"}}`), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if x := m.TokenExchange; x.Header != "Authorization" || x.HeaderValue("t1") != "Bearer t1" {
		t.Errorf("default header %q value %q, want Authorization and Bearer t1", x.Header, x.HeaderValue("t1"))
	}
	own := TokenExchange{Header: "X-Api-Token"}
	if v := own.HeaderValue("t1"); v != "t1" {
		t.Errorf("X-Api-Token carries %q, want the token alone", v)
	}
}
