package manifest

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// TokenExchange is a bundle's "token_exchange": each call a caller makes to the bundle
// carries a token of the caller's own for the bundle's audience, which the node obtains
// from the caller's OAuth access token at the issuer by RFC 8693 token exchange. A url
// bundle gets it in a header of each call; a command bundle, which must run a process per
// client ("isolation": "client"), in a member of each call's _meta.
type TokenExchange struct {
	// Audience is the `audience` asked for: what the upstream service checks a token's
	// `aud` against, e.g. "https://api.example.com". Required.
	Audience string `json:"audience"`
	// Scopes are asked for (`scope`); none leaves them to the issuer.
	Scopes []string `json:"scopes,omitempty"`
	// Header is the header of a url bundle's calls the token goes in. Default
	// "Authorization", as "Bearer <token>"; any other header gets the token alone.
	Header string `json:"header,omitempty"`
	// Meta is the member of a command bundle's calls' _meta the token goes in, e.g.
	// "com.example/token". Required for a command bundle; a url bundle has none.
	Meta string `json:"meta,omitempty"`
}

// UnmarshalJSON reads the object strictly: an unknown key is an error naming it.
func (x *TokenExchange) UnmarshalJSON(b []byte) error {
	type plain TokenExchange // without this method
	var p plain
	if err := decodeObject(b, "token_exchange", `{"audience": "https://api.example.com"}`, &p); err != nil {
		return err
	}
	*x = TokenExchange(p)
	return nil
}

// HeaderValue is what the header carries for token: "Bearer <token>" in Authorization,
// the token alone in any other.
func (x *TokenExchange) HeaderValue(token string) string {
	if strings.EqualFold(x.Header, "Authorization") {
		return "Bearer " + token
	}
	return token
}

// nodeHeaders are the headers the node sets on a url bundle's requests itself.
var nodeHeaders = []string{"Content-Type", "Accept", "Content-Length", "Host", "Mcp-Session-Id", "Mcp-Protocol-Version", "Mcp-Method", "Mcp-Name"}

// checkTokenExchange checks "token_exchange" against what the bundle runs, and fills in
// the default header of a url bundle.
func (m *Manifest) checkTokenExchange() error {
	x := m.TokenExchange
	if x == nil {
		return nil
	}
	if strings.TrimSpace(x.Audience) == "" {
		return errors.New(`token_exchange: missing "audience": the audience the upstream service checks its tokens for, e.g. "https://api.example.com"`)
	}
	for _, s := range x.Scopes {
		if !scopeToken(s) {
			return fmt.Errorf("token_exchange: scope %q: a scope is one word of visible ASCII characters, without quotes or backslashes; list each scope on its own", s)
		}
	}
	if m.Remote() {
		if x.Meta != "" {
			return errors.New(`token_exchange: "meta" is for command bundles; a "url" bundle gets the token in "header" (default Authorization)`)
		}
		if x.Header == "" {
			x.Header = "Authorization"
		}
		if !headerName.MatchString(x.Header) {
			return fmt.Errorf("token_exchange: header name %q: use letters, digits and -", x.Header)
		}
		for _, h := range nodeHeaders {
			if strings.EqualFold(x.Header, h) || strings.HasPrefix(http.CanonicalHeaderKey(x.Header), "Mcp-Param-") {
				return fmt.Errorf("token_exchange: header %q is one the node sets itself: name another, e.g. Authorization", x.Header)
			}
		}
		return nil
	}
	if x.Header != "" {
		return errors.New(`token_exchange: "header" is for "url" bundles; a command bundle gets the token in a member of each call's _meta: name it with "meta"`)
	}
	if m.Isolation != IsolationClient {
		return errors.New(`token_exchange on a command bundle needs "isolation": "client": a process shared by every client would hold every user's token`)
	}
	switch {
	case x.Meta == "":
		return errors.New(`token_exchange: missing "meta": the member of each call's _meta the token goes in, e.g. "com.example/token"`)
	case x.Meta == "progressToken" || strings.HasPrefix(x.Meta, "io.modelcontextprotocol/") || strings.HasPrefix(x.Meta, "modelcontextprotocol.io/"):
		return fmt.Errorf("token_exchange: meta %q is a member MCP itself defines: name one of your own, e.g. \"com.example/token\"", x.Meta)
	case strings.ContainsAny(x.Meta, "\x00\r\n\"\\"):
		return fmt.Errorf("token_exchange: meta %q: use a name such as \"com.example/token\"", x.Meta)
	}
	return nil
}

// scopeToken reports whether s is one scope-token of RFC 6749 §3.3.
func scopeToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}
