package main

import (
	"fmt"
	"os"
	"slices"
	"strings"
)

// route is one way of making the same call; http marks the ways over HTTP, which are
// read against the floor.
type route struct {
	name string
	c    caller
	http bool
}

// compareRoutes measures every route with each number of calls in flight and writes one
// table row per pair, "| label | route | in flight | calls/s | ratio | p50 | p99 |", the
// ratio being to the first route. When floor is a route's index, a column after the ratio
// gives each HTTP route's calls per second as a share of that route's. It returns the
// results by [in flight][route]. The routes take turns, one round each, so that a change
// in what else the machine runs falls on all of them alike.
func compareRoutes(cfg config, w *strings.Builder, label, args string, inflights []int, routes []route, floor int) ([][]result, error) {
	for _, r := range routes {
		if err := warm(r.c, args); err != nil {
			return nil, fmt.Errorf("%s, %s: %w", label, r.name, err)
		}
	}
	all := make([][]result, len(inflights))
	for i, inflight := range inflights {
		rounds := make([][]round, len(routes))
		for range cfg.rounds {
			for j, r := range routes {
				rd, err := measureRound(r.c, args, inflight, cfg.duration)
				if err != nil {
					return nil, fmt.Errorf("%s, %s: %w", label, r.name, err)
				}
				rounds[j] = append(rounds[j], rd)
			}
		}
		for j := range routes {
			all[i] = append(all[i], summarize(rounds[j]))
		}
		for j, r := range routes {
			res := all[i][j]
			fmt.Fprintf(w, "| %s | %s | %d | %.0f | %.2f× |", label, r.name, inflight, res.perSec, res.perSec/all[i][0].perSec)
			if floor >= 0 && r.http {
				fmt.Fprintf(w, " %.2f× |", res.perSec/all[i][floor].perSec)
			} else if floor >= 0 {
				fmt.Fprintf(w, " |")
			}
			fmt.Fprintf(w, " %s | %s |\n", us(res.p50), us(res.p99))
		}
		fmt.Fprintf(os.Stderr, "bench: %s, %d in flight done\n", label, inflight)
	}
	return all, nil
}

// overFloor says what each HTTP route adds at the median over the floor, one call in flight.
func overFloor(routes []route, one []result, floor int) string {
	var parts []string
	for i, r := range routes {
		if r.http && i != floor {
			parts = append(parts, fmt.Sprintf("%s %s", r.name, us(one[i].p50-one[floor].p50)))
		}
	}
	return "Added over the floor at the median, one call in flight: " + strings.Join(parts, "; ") + "."
}

// echoLatency compares the echo call of the Go and C echo bundles made directly over stdio
// with the same call through the node's stdio and HTTP fronts, and through the least relays.
// The echo bundles do nothing but answer, so the differences are the node's own cost.
func echoLatency(cfg config, w *strings.Builder) error {
	fmt.Fprintf(w, "## The echo bundles (`echo`), direct and through the node\n\n")
	fmt.Fprintf(w, "The floor is a Go net/http server that answers the echo call itself, in a process of its own,\n"+
		"driven by the same client as the HTTP front: what an MCP server over Go's HTTP can do at all here.\n%s\n", leastRelays)
	fmt.Fprintf(w, "| bundle | path | in flight | calls/s | vs direct | vs floor | p50 | p99 |\n|---|---|---|---|---|---|---|---|\n")
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
	dir, bin, err := benchFolder(cfg, name)
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	return nodeRows(cfg, w, name, dir, "echo", `{"text":"bench"}`, true, bin)
}

// nodeRoutes are the routes every table of the node has.
type nodeRoutes struct {
	direct, stdio, http, floor route
	url                        string // of the node's HTTP front
	stops                      stops  // what ends each route
}

// startNodeRoutes starts a tool called directly on a bundle's program over stdio, through
// the node's stdio and HTTP fronts serving dir (as label.tool), and the floor. On an error
// it ends those it started.
func startNodeRoutes(cfg config, label, dir, tool string, program []string) (*nodeRoutes, error) {
	r := &nodeRoutes{}
	fail := func(err error) (*nodeRoutes, error) {
		r.stop()
		return nil, err
	}
	direct, err := startStdio(tool, program[0], program[1:]...)
	if err != nil {
		return fail(fmt.Errorf("%s (run make first): %w", label, err))
	}
	r.direct, r.stops = route{name: "direct stdio", c: direct}, append(r.stops, direct.close)
	viaStdio, err := startStdio(label+"."+tool, cfg.node, "serve", "--bundles", dir, "--log-level", "warn")
	if err != nil {
		return fail(fmt.Errorf("%s, node's stdio front: %w", label, err))
	}
	r.stdio, r.stops = route{name: "node, stdio front", c: viaStdio}, append(r.stops, viaStdio.close)
	viaHTTP, stopHTTP, err := startNodeHTTP(cfg, dir, label+"."+tool)
	if err != nil {
		return fail(fmt.Errorf("%s, node's HTTP front: %w", label, err))
	}
	r.http, r.url, r.stops = route{name: "node, HTTP front", c: viaHTTP, http: true}, viaHTTP.url, append(r.stops, stopHTTP, viaHTTP.close)
	floor, err := startFloor()
	if err != nil {
		return fail(err)
	}
	r.floor, r.stops = route{name: floorName, c: floor.c, http: true}, append(r.stops, floor.stop)
	return r, nil
}

// stop ends every route.
func (r *nodeRoutes) stop() { r.stops.run() }

// stops are what end the processes and clients of a table, in the order they started.
type stops []func()

// run ends them all, the last started first.
func (s stops) run() {
	for _, stop := range slices.Backward(s) {
		stop()
	}
}

// nodeRows compares a tool called directly on a bundle's program over stdio with the same
// call through the node's stdio and HTTP fronts serving dir, as a 2025-11-25 and a
// 2026-07-28 client, and the floor beside the HTTP front, and, if relays, through the least
// relays; it returns a note of what the fronts add.
func nodeRows(cfg config, w *strings.Builder, label, dir, tool, args string, relays bool, program ...string) (string, error) {
	r, err := startNodeRoutes(cfg, label, dir, tool, program)
	if err != nil {
		return "", err
	}
	defer r.stop()
	stdio26, err := startStdioStateless(label+"."+tool, cfg.node, "serve", "--bundles", dir, "--log-level", "warn")
	if err != nil {
		return "", err
	}
	defer stdio26.close()
	http26 := startHTTPStateless(r.url, label+"."+tool)
	defer http26.close()
	routes := []route{r.direct, r.stdio, r.http, r.floor,
		{name: "node, stdio front, 2026-07-28 stateless", c: stdio26}, {name: "node, HTTP front, 2026-07-28 stateless", c: http26, http: true}}
	if relays {
		least, stop, err := startRelays(label+"."+tool, program)
		if err != nil {
			return "", err
		}
		defer stop()
		routes = append(routes, least...)
	}
	res, err := compareRoutes(cfg, w, label, args, []int{1, 8}, routes, 3)
	if err != nil {
		return "", err
	}
	one := res[0]
	note := fmt.Sprintf("%s: one call in flight, the stdio front adds %s at the median and %s at p99 over direct stdio; the HTTP front %s at the median over the floor. "+
		"A 2026-07-28 stateless call costs %s at the median over stdio and %s over HTTP, against %s and %s for a 2025-11-25 session call.",
		label, us(one[1].p50-one[0].p50), us(one[1].p99-one[0].p99), us(one[2].p50-one[3].p50),
		us(one[4].p50), us(one[5].p50), us(one[1].p50), us(one[2].p50))
	if relays {
		note += " " + relayNote(res, relayRefs{direct: 0, nodeStdio: 1, nodeHTTP: 2, floor: 3, nodeStdio26: 4, nodeHTTP26: 5,
			stdioRelay: 6, httpRelay: 7, stdioRelay26: 8, httpRelay26: 9})
	}
	return note, nil
}
