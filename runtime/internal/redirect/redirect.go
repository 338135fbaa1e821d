// Package redirect keeps the node's HTTP clients from following a server to another
// origin. net/http follows redirects anywhere and sends along every header the request
// was built with, except Authorization and cookies to another domain: a url bundle's
// custom headers (an X-Api-Key filled from ${VAR}), the session's Mcp-* headers and, for
// 307 and 308, the request's body, arguments and all, would reach whatever host the
// server names.
package redirect

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// ErrOtherOrigin is wrapped by the error of a request redirected to another origin.
var ErrOtherOrigin = errors.New("redirected to another origin")

// maxRedirects is how many redirects within the origin are followed, as net/http's own
// policy does.
const maxRedirects = 10

// SameOrigin is an http.Client CheckRedirect that follows a redirect only within the origin
// (scheme, host and port) of the first request: a move from http to https, to another
// port or to a subdomain is another origin, and refused with an error that names both.
func SameOrigin(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return fmt.Errorf("stopped after %d redirects", maxRedirects)
	}
	from := via[0].URL
	if origin(req.URL) != origin(from) {
		return fmt.Errorf("%w: %s sent the request to %s; give that address itself if it is meant",
			ErrOtherOrigin, origin(from), origin(req.URL))
	}
	return nil
}

// Client returns a copy of c (sharing its Transport) that follows redirects only within the
// origin, and then as c's own CheckRedirect, if any, allows.
func Client(c *http.Client) *http.Client {
	cp := *c
	own := c.CheckRedirect
	cp.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if err := SameOrigin(req, via); err != nil {
			return err
		}
		if own != nil {
			return own(req, via)
		}
		return nil
	}
	return &cp
}

// origin is scheme://host:port of u, the port made explicit, as RFC 6454 compares them.
func origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		switch u.Scheme {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	return u.Scheme + "://" + strings.ToLower(u.Hostname()) + ":" + port
}
