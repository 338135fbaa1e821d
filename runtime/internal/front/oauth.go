package front

import (
	"net/http"
	"slices"
	"strings"

	"github.com/toolnode/toolnode/runtime/internal/access"
	"github.com/toolnode/toolnode/runtime/internal/oauth"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// WithOAuth makes the front an OAuth 2.1 resource server of rs's issuer: a JWT bearer
// token is verified (signature, issuer, audience, expiry) and its scopes select the access
// file's client; other bearer tokens are left to --access or --token-file when either is
// given. The token never goes further than this check.
func (h *HTTPHandler) WithOAuth(rs *oauth.ResourceServer) http.Handler {
	checked := rs.Middleware(h)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		others := h.opts.Token != "" || h.srv.opts.Access != nil
		if r.Method != http.MethodOptions && (strings.Count(raw, ".") == 2 || !others) {
			checked.ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// oauthClient is the access file's client an OAuth token stands for: the first whose
// scopes the token holds all of. ok is false when the request carries no OAuth token.
func (h *HTTPHandler) oauthClient(r *http.Request) (name string, ok bool, refused bool) {
	tok, ok := oauth.TokenFromContext(r.Context())
	if !ok {
		return "", false, false
	}
	acc := h.srv.opts.Access
	if acc == nil {
		return "", true, false
	}
	if c := byScopes(acc.Policy(), tok.Scopes); c != nil {
		return c.Name, true, false
	}
	return "", true, true
}

// byScopes finds the first client with scopes, all of which are in granted.
func byScopes(p *access.Policy, granted []string) *access.Client {
	for _, c := range p.Clients() {
		if len(c.Scopes) == 0 {
			continue
		}
		all := true
		for _, s := range c.Scopes {
			all = all && slices.Contains(granted, s)
		}
		if all {
			return c
		}
	}
	return nil
}

// insufficientScope refuses a token whose scopes match no access entry.
func insufficientScope(w http.ResponseWriter) {
	w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", error_description="no access entry matches the token's scopes"`)
	httpError(w, http.StatusForbidden, mcp.CodeInvalidRequest, "the token's scopes match no client of the access file")
}
