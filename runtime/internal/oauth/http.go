package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
)

// WellKnownPrefix is where RFC 9728 puts protected resource metadata.
const WellKnownPrefix = "/.well-known/oauth-protected-resource"

// tokenKey keys the verified token in a request's context.
type tokenKey struct{}

// TokenFromContext returns the token Middleware verified for the request.
func TokenFromContext(ctx context.Context) (*Token, bool) {
	t, ok := ctx.Value(tokenKey{}).(*Token)
	return t, ok
}

// Middleware lets through requests with a valid token, the token put in their context
// (TokenFromContext), and answers the others with 401 or 403 and the challenge. The
// Authorization header is removed before next runs, so nothing downstream (a bundle, a
// log) ever sees the token.
func (rs *ResourceServer) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, err := rs.Authenticate(r)
		if err != nil {
			rs.WriteChallenge(w, err)
			return
		}
		r = r.WithContext(context.WithValue(r.Context(), tokenKey{}, tok))
		r.Header.Del("Authorization")
		next.ServeHTTP(w, r)
	})
}

// MetadataURL is the URL of the protected resource metadata document for the resource:
// the well-known prefix inserted before the resource's path (RFC 9728 §3.1).
func (rs *ResourceServer) MetadataURL() string {
	u := *rs.resource
	u.Path = WellKnownPrefix + strings.TrimSuffix(rs.resource.Path, "/")
	u.RawPath, u.RawQuery, u.Fragment = "", "", ""
	return u.String()
}

// MetadataPaths are the paths MetadataHandler answers: the path form for the resource
// (e.g. /.well-known/oauth-protected-resource/mcp) and the bare form, which clients
// written before RFC 9728's path rule still ask for.
func (rs *ResourceServer) MetadataPaths() []string {
	paths := []string{WellKnownPrefix}
	if p := strings.TrimSuffix(rs.resource.Path, "/"); p != "" {
		paths = append(paths, WellKnownPrefix+p)
	}
	return paths
}

// Metadata is the protected resource metadata document (RFC 9728 §2).
type Metadata struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers"`
	ScopesSupported        []string `json:"scopes_supported,omitempty"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
}

// Metadata returns the document MetadataHandler serves.
func (rs *ResourceServer) Metadata() Metadata {
	var scopes []string
	for _, s := range append(append([]string(nil), rs.cfg.RequiredScopes...), rs.cfg.ScopesSupported...) {
		if !slices.Contains(scopes, s) {
			scopes = append(scopes, s)
		}
	}
	return Metadata{
		Resource:               rs.cfg.ResourceURL,
		AuthorizationServers:   []string{rs.cfg.Issuer},
		ScopesSupported:        scopes,
		BearerMethodsSupported: []string{"header"},
	}
}

// MetadataHandler serves the metadata document on MetadataPaths, unauthenticated and
// readable from browser-based clients.
func (rs *ResourceServer) MetadataHandler() http.Handler {
	doc, err := json.Marshal(rs.Metadata())
	if err != nil {
		// Metadata holds only strings.
		panic(err)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		switch r.Method {
		case http.MethodGet, http.MethodHead:
		case http.MethodOptions:
			w.Header().Set("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS")
			w.WriteHeader(http.StatusNoContent)
			return
		default:
			w.Header().Set("Allow", "GET, HEAD, OPTIONS")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "max-age=3600")
		_, _ = w.Write(doc)
	})
}

// WriteChallenge answers a refused request: the status of err (401 when err is not an
// *Error) and a WWW-Authenticate header naming the metadata URL, plus the error code and,
// for insufficient_scope, the scopes needed (RFC 6750 §3, RFC 9728 §5.1).
func (rs *ResourceServer) WriteChallenge(w http.ResponseWriter, err error) {
	var e *Error
	if !errors.As(err, &e) {
		e = &Error{Status: http.StatusUnauthorized, Code: "invalid_token", Description: "the access token is not valid here"}
	}
	params := []string{`resource_metadata="` + quote(rs.MetadataURL()) + `"`}
	if e.Code != "" {
		params = append(params, `error="`+e.Code+`"`, `error_description="`+quote(e.Description)+`"`)
	}
	if e.Code == "insufficient_scope" || (e.Code == "" && len(rs.cfg.RequiredScopes) > 0) {
		params = append(params, `scope="`+quote(strings.Join(rs.cfg.RequiredScopes, " "))+`"`)
	}
	w.Header().Set("WWW-Authenticate", "Bearer "+strings.Join(params, ", "))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.Status)
	body, _ := json.Marshal(struct {
		Code        string `json:"error,omitempty"`
		Description string `json:"error_description"`
	}{e.Code, e.Description})
	_, _ = w.Write(body)
}

// quote makes s safe inside an RFC 9110 quoted-string.
func quote(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\r", " ", "\n", " ").Replace(s)
}
