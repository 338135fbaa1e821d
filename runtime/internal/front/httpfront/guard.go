package httpfront

import (
	"crypto/subtle"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/toolnode/toolnode/runtime/internal/front"
	"github.com/toolnode/toolnode/runtime/internal/oauth"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// guard checks what every request must pass before it is read, and names its caller: the
// Host and Origin it comes with (DNS rebinding), CORS for browsers, and its credentials (an
// OAuth access token, an access file's token, or the --token-file token). A request that
// fails is answered here, and ok is false.
func (h *Handler) guard(w http.ResponseWriter, r *http.Request) (id front.Identity, ok bool) {
	if h.opts.CheckHost && !h.hostAllowed(r.Host) {
		httpError(w, http.StatusForbidden, mcp.CodeInvalidRequest, "host "+r.Host+" is not this node's (it listens on loopback)")
		return id, false
	}
	origin := r.Header.Get("Origin")
	if !h.originAllowed(origin) {
		httpError(w, http.StatusForbidden, mcp.CodeInvalidRequest, "origin "+origin+" is not allowed (use --allow-origin)")
		return id, false
	}
	if origin != "" {
		corsHeaders(w.Header(), origin)
	}
	if r.Method == http.MethodOptions {
		preflight(w, r)
		return id, false
	}
	id.Source = h.clientAddress(r)
	if tok, isOAuth := h.token(r); isOAuth {
		id.Subject, id.Groups = tok.Subject, tok.Groups
		if acc := h.srv.Options().Access; acc != nil {
			c := front.ClientByScopes(acc.Policy(), tok.Scopes)
			if c == nil {
				insufficientScope(w)
				return id, false
			}
			id.Client = c.Name
		}
		return id, true
	}
	if !h.authenticate(w, r) {
		return id, false
	}
	if acc := h.srv.Options().Access; acc != nil {
		got, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		c, ok := acc.Policy().Authenticate(got)
		if !ok {
			h.challenge(w)
			httpError(w, http.StatusUnauthorized, mcp.CodeInvalidRequest, "missing or unknown bearer token")
			return id, false
		}
		id.Client = c.Name
	}
	return id, true
}

// authenticate checks the --token-file token, when there is one.
func (h *Handler) authenticate(w http.ResponseWriter, r *http.Request) bool {
	if h.opts.Token == "" {
		return true
	}
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(h.opts.Token)) != 1 {
		h.challenge(w)
		httpError(w, http.StatusUnauthorized, mcp.CodeInvalidRequest, "missing or wrong bearer token")
		return false
	}
	return true
}

// challenge says how to authenticate: a bearer token, and where a client can learn to get
// one when the front is an OAuth resource server too.
func (h *Handler) challenge(w http.ResponseWriter) {
	c := `Bearer realm="toolnode"`
	if h.rs != nil {
		c += `, resource_metadata="` + h.rs.MetadataURL() + `"`
	}
	w.Header().Set("WWW-Authenticate", c)
}

// corsHeaders lets a browser page at origin (already allowed) read the answers.
func corsHeaders(h http.Header, origin string) {
	h.Set("Access-Control-Allow-Origin", origin)
	h.Add("Vary", "Origin")
	h.Set("Access-Control-Expose-Headers", HeaderSessionID+", "+HeaderProtocolVersion+", WWW-Authenticate")
}

// preflight answers a browser's CORS preflight from an allowed origin.
func preflight(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	if r.Header.Get("Access-Control-Request-Method") != "" {
		hd.Set("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS")
		hd.Set("Access-Control-Allow-Headers", strings.Join([]string{"Content-Type", "Accept", "Authorization",
			HeaderSessionID, HeaderProtocolVersion, "Last-Event-ID", HeaderMethod, HeaderName}, ", "))
		hd.Set("Access-Control-Max-Age", "600")
	}
	hd.Set("Allow", "GET, POST, DELETE, OPTIONS")
	w.WriteHeader(http.StatusNoContent)
}

// originAllowed guards against DNS rebinding: a page on another site must not reach a node
// listening on loopback through the browser.
func (h *Handler) originAllowed(origin string) bool {
	if origin == "" {
		return true
	}
	for _, o := range h.opts.AllowOrigins {
		if o == "*" || strings.EqualFold(o, origin) {
			return true
		}
	}
	u, err := url.Parse(origin)
	if err != nil {
		return false
	}
	return loopbackName(u.Hostname())
}

// hostAllowed is loopbackHost(host), remembered for the last host accepted: every request
// of a client names the same Host, and parsing it as an address is a good part of the
// guard's time.
func (h *Handler) hostAllowed(host string) bool {
	if last := h.lastHost.Load(); last != nil && *last == host {
		return true
	}
	if !loopbackHost(host) {
		return false
	}
	h.lastHost.Store(&host)
	return true
}

// token is the OAuth token the front's resource server verified for r. Only WithOAuth
// puts one in a request's context: without it, the context is not searched.
func (h *Handler) token(r *http.Request) (*oauth.Token, bool) {
	if h.rs == nil {
		return nil, false
	}
	return oauth.TokenFromContext(r.Context())
}

// loopbackHost reports whether a Host header names localhost or a loopback address.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return loopbackName(strings.Trim(host, "[]"))
}

func loopbackName(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
