package main

import (
	"fmt"
	"os"
	"strings"
)

// route is one way of making the same call.
type route struct {
	name string
	c    caller
}

// compareRoutes measures every route with each number of calls in flight and writes one
// table row per pair, "| label | route | in flight | calls/s | ratio | p50 | p99 |", the
// ratio being to the first route. It returns the results by [in flight][route].
func compareRoutes(cfg config, w *strings.Builder, label, args string, inflights []int, routes []route) ([][]result, error) {
	all := make([][]result, len(inflights))
	for i, inflight := range inflights {
		for _, r := range routes {
			res, err := measure(r.c, args, inflight, cfg)
			if err != nil {
				return nil, fmt.Errorf("%s, %s: %w", label, r.name, err)
			}
			all[i] = append(all[i], res)
			fmt.Fprintf(w, "| %s | %s | %d | %.0f | %.2f× | %s | %s |\n",
				label, r.name, inflight, res.perSec, res.perSec/all[i][0].perSec, us(res.p50), us(res.p99))
		}
		fmt.Fprintf(os.Stderr, "bench: %s, %d in flight done\n", label, inflight)
	}
	return all, nil
}

// echoLatency compares the echo call of the Go and C echo bundles made directly over stdio
// with the same call through the node's stdio and HTTP fronts. The echo bundles do nothing
// but answer, so the differences are the node's own cost.
func echoLatency(cfg config, w *strings.Builder) error {
	fmt.Fprintf(w, "## The echo bundles (`echo`), direct and through the node\n\n")
	fmt.Fprintf(w, "| bundle | path | in flight | calls/s | vs direct | p50 | p99 |\n|---|---|---|---|---|---|---|\n")
	var notes []string
	for _, name := range []string{"echo-go", "echo-c"} {
		note, err := echoRows(cfg, w, name)
		if err != nil {
			return err
		}
		notes = append(notes, note)
	}
	fmt.Fprintf(w, "\n%s\n\n", strings.Join(notes, "\n"))
	return nil
}

func echoRows(cfg config, w *strings.Builder, name string) (string, error) {
	src, bin, err := benchBundle(cfg, name)
	if err != nil {
		return "", err
	}
	dir, err := linkBundle(src)
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	direct, err := startStdio("echo", bin)
	if err != nil {
		return "", err
	}
	defer direct.close()
	viaStdio, err := startStdio(name+".echo", cfg.node, "serve", "--bundles", dir, "--log-level", "warn")
	if err != nil {
		return "", err
	}
	defer viaStdio.close()
	viaHTTP, stopHTTP, err := startNodeHTTP(cfg, dir, name+".echo")
	if err != nil {
		return "", err
	}
	defer stopHTTP()
	defer viaHTTP.close()
	res, err := compareRoutes(cfg, w, name, `{"text":"bench"}`, []int{1, 8},
		[]route{{"direct stdio", direct}, {"node, stdio front", viaStdio}, {"node, HTTP front", viaHTTP}})
	if err != nil {
		return "", err
	}
	one := res[0]
	return fmt.Sprintf("%s: one call in flight, the stdio front adds %s at the median and the HTTP front %s.",
		name, us(one[1].p50-one[0].p50), us(one[2].p50-one[0].p50)), nil
}
