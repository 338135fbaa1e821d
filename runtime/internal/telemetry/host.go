package telemetry

import (
	"net"
	"net/http"
	"strings"
)

// CheckHost guards the handler of a listener at addr (the --metrics HOST:PORT) against DNS
// rebinding: a web page whose name was made to point at the node gets its requests sent
// with that name in Host. It answers 403 unless Host names localhost, an IP address (a
// rebinding needs a name), or addr's own host.
func CheckHost(addr string, next http.Handler) http.Handler {
	own, _, err := net.SplitHostPort(addr)
	if err != nil {
		own = addr
	}
	own = strings.Trim(own, "[]")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, err := net.SplitHostPort(r.Host)
		if err != nil {
			host = r.Host
		}
		host = strings.Trim(host, "[]")
		if !strings.EqualFold(host, "localhost") && net.ParseIP(host) == nil && !strings.EqualFold(host, own) {
			http.Error(w, "host "+r.Host+" is not this node's: ask for http://"+addr+"/metrics, or by IP address", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}
