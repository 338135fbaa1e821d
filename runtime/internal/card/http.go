package card

import (
	"net/http"
	"strconv"
	"strings"
)

// MaxAge is how long a client or cache may reuse a card or catalog without asking again,
// in seconds. The extension suggests an hour; the node's card changes as bundles come and
// go, so a minute, with the ETag sparing the bytes of an unchanged one.
const MaxAge = 60

// Handler serves the node's card, made anew for each request, and its AI Catalog at
// CatalogPath.
type Handler struct {
	// Card makes the card of the node as it is now, for a client that reached the
	// endpoint at url.
	Card func(url string) Card
	// Endpoint is the endpoint's absolute URL for a request (its scheme, host and path).
	Endpoint func(r *http.Request) string
}

// ServeHTTP answers GET, HEAD and the CORS preflight (OPTIONS) for the card's path and for
// CatalogPath; any other method is 405.
func (h Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Access-Control-Allow-Origin", "*")
	hd.Set("Access-Control-Allow-Methods", "GET")
	hd.Set("Access-Control-Allow-Headers", "Content-Type, If-None-Match")
	hd.Set("Access-Control-Expose-Headers", "ETag")
	switch r.Method {
	case http.MethodOptions:
		w.WriteHeader(http.StatusNoContent)
		return
	case http.MethodGet, http.MethodHead:
	default:
		hd.Set("Allow", "GET, HEAD, OPTIONS")
		http.Error(w, "a server card is read with GET", http.StatusMethodNotAllowed)
		return
	}
	endpoint := h.Endpoint(r)
	body, media := h.Card(endpoint).Encode(), MediaType
	if r.URL.Path == CatalogPath {
		body, media = encode(CatalogOf(endpoint)), CatalogMediaType
	}
	tag := etag(body)
	hd.Set("Cache-Control", "public, max-age="+strconv.Itoa(MaxAge))
	hd.Set("ETag", tag)
	hd.Set("Vary", "Host")
	if matches(r.Header.Get("If-None-Match"), tag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	hd.Set("Content-Type", media)
	if r.Method == http.MethodGet {
		_, _ = w.Write(body)
	}
}

// matches reports whether an If-None-Match header names tag (or is "*"); weak tags compare
// by their opaque part, as RFC 9110 has If-None-Match do.
func matches(header, tag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || t == tag {
			return true
		}
	}
	return false
}

// EndpointOf is the absolute URL of the endpoint at path as request r reached its host:
// https when r came over TLS, http otherwise.
func EndpointOf(r *http.Request, path string) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + path
}
