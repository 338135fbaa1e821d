package main

import (
	"fmt"
	"strings"
)

// exchangeCost measures what a call to a bundle with token_exchange adds for the caller's
// token: kept (the cache's digest and lookup) and not kept (a token exchange at an OpenID
// provider on loopback), with the oauth package's benchmark.
func exchangeCost(cfg config, w *strings.Builder) error {
	cached, err := goBench(cfg, "./runtime/internal/oauth", "BenchmarkExchange/cached", "300x")
	if err != nil {
		return err
	}
	uncached, err := goBench(cfg, "./runtime/internal/oauth", "BenchmarkExchange/uncached", "300x")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "## Each caller's token upstream (`exchange`)\n\n")
	fmt.Fprintf(w, "What a call to a bundle with `token_exchange` adds for its caller's token (`go test ./runtime/internal/oauth\n"+
		"-bench Exchange`): kept, the digest of the caller's key and a lookup; not kept, a token exchange (RFC 8693) at\n"+
		"zitadel/oidc's provider on loopback, which checks the caller's token and signs one for the audience (RS256).\n"+
		"A real issuer adds its network distance to the second; a caller pays it once per token, until 30s before the\n"+
		"exchanged token expires.\n\n")
	fmt.Fprintf(w, "| exchange | time |\n|---|---|\n| kept for the caller | %s |\n| asked of the issuer | %s |\n\n", us(cached), us(uncached))
	return nil
}
