package httpfront

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	proxyproto "github.com/pires/go-proxyproto"
)

// Trusted proxies. Behind a balancer every connection comes from the balancer's address,
// and an anonymous client is counted by its address (its sessions, its tasks): without
// more, one client at its bound is every client at it. A balancer the node trusts
// (Options.TrustedProxies) tells it who the client is, in one of two ways:
//
//   - the PROXY protocol (v1 or v2), which HAProxy sends with send-proxy-v2 and which
//     carries the client's address in front of each connection (WrapListener);
//   - an X-Forwarded-For header on each request, which HTTP proxies add: read only on
//     connections from a trusted address, right to left, the first address that is not
//     a trusted proxy's being the client's (clientAddress).
//
// A connection from any other address that sends a PROXY header is refused, and its
// X-Forwarded-For is ignored: only a listed proxy may say who a client is.

// ParseTrustedProxy reads a --trusted-proxy value: an IP address or a CIDR range.
func ParseTrustedProxy(s string) (netip.Prefix, error) {
	if p, err := netip.ParsePrefix(s); err == nil {
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("trusted proxy %q: want an IP address (10.0.0.5) or a CIDR range (10.0.0.0/24)", s)
	}
	a = a.Unmap()
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// trusted reports whether addr (an IP, with or without a port) is in one of proxies.
func trusted(proxies []netip.Prefix, addr string) bool {
	if host, _, err := net.SplitHostPort(addr); err == nil {
		addr = host
	}
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return false
	}
	a = a.Unmap()
	for _, p := range proxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// proxyHeaderTimeout bounds the wait for a trusted proxy's PROXY header.
const proxyHeaderTimeout = 10 * time.Second

// WrapListener reads the PROXY protocol header (v1 or v2) of connections from proxies,
// whose address becomes the connection's RemoteAddr; such a header from any other address
// refuses the connection. A connection without one is served as it comes. ln itself when
// proxies is empty.
func WrapListener(ln net.Listener, proxies []netip.Prefix) net.Listener {
	if len(proxies) == 0 {
		return ln
	}
	return &proxyproto.Listener{Listener: ln, ReadHeaderTimeout: proxyHeaderTimeout,
		ConnPolicy: func(o proxyproto.ConnPolicyOptions) (proxyproto.Policy, error) {
			if trusted(proxies, o.Upstream.String()) {
				return proxyproto.USE, nil
			}
			return proxyproto.REJECT, nil
		}}
}

// clientAddress is the address a request's client connects from: the connection's peer
// (the PROXY header's, when a trusted proxy sent one), or, on a connection from a trusted
// proxy, the last address of X-Forwarded-For that is not a trusted proxy's.
func (h *Handler) clientAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return ""
	}
	proxies := h.opts.TrustedProxies
	if len(proxies) == 0 || !trusted(proxies, host) {
		return host
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		hop := strings.TrimSpace(hops[i])
		a, err := netip.ParseAddr(hop)
		if err != nil {
			break // not an address: what lies left of it cannot be told apart from a lie
		}
		if !trusted(proxies, hop) {
			return a.Unmap().String()
		}
	}
	return host
}
