package httpfront

import (
	"net/http"
	"strings"

	"github.com/toolnode/toolnode/runtime/internal/oauth"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// WithOAuth makes the front an OAuth 2.1 resource server of rs's issuer: a JWT bearer
// token is verified (signature, issuer, audience, expiry), its subject names the caller and
// its scopes select the access file's client; other bearer tokens are left to --access or
// --token-file when either is given, and refused ones are told where to get a token. The
// token never goes further than this check.
func (h *Handler) WithOAuth(rs *oauth.ResourceServer) http.Handler {
	h.rs = rs
	checked := rs.Middleware(h)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		others := h.opts.Token != "" || h.srv.Options().Access != nil
		if r.Method != http.MethodOptions && (strings.Count(raw, ".") == 2 || !others) {
			checked.ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// insufficientScope refuses a token whose scopes match no access entry.
func insufficientScope(w http.ResponseWriter) {
	w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", error_description="no access entry matches the token's scopes"`)
	httpError(w, http.StatusForbidden, mcp.CodeInvalidRequest, "the token's scopes match no client of the access file")
}
