package testkit

import (
	"fmt"
	"regexp"
	"strings"
)

// HAProxyConfig is snippet, the text of docs/snippets/haproxy.cfg, made to listen on
// 127.0.0.1:front and balance over servers (each "name host:port"), with its statistics as
// CSV at http://127.0.0.1:stats/stats;csv: the balancer the documents give, on ports of
// the caller's choosing, each server with the options of the snippet's first.
func HAProxyConfig(snippet, front, stats string, servers []string) (string, error) {
	const bind, balance = "bind 127.0.0.1:7777", "    balance roundrobin\n"
	if !strings.Contains(snippet, bind) || !strings.Contains(snippet, balance) {
		return "", fmt.Errorf("the HAProxy snippet has no %q or no %q", bind, strings.TrimSpace(balance))
	}
	server := regexp.MustCompile(`(?m)^    server \S+ \S+(.*)\n`)
	first := server.FindStringSubmatch(snippet)
	if first == nil {
		return "", fmt.Errorf("the HAProxy snippet has no server line")
	}
	s := strings.Replace(snippet, bind, "bind 127.0.0.1:"+front, 1)
	s = server.ReplaceAllString(s, "")
	var lines strings.Builder
	for _, srv := range servers {
		fmt.Fprintf(&lines, "    server %s%s\n", srv, first[1]) // with the snippet's options
	}
	s = strings.Replace(s, balance, balance+lines.String(), 1)
	return s + "\nlisten stats\n    bind 127.0.0.1:" + stats + "\n    stats enable\n    stats uri /stats\n", nil
}
