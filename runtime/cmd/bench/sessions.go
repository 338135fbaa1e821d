package main

import (
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// scaleInflight is how many calls the scale section keeps in flight, whatever the number of
// sessions: the rows then differ only in how many sessions or clients the node serves.
const scaleInflight = 8

// scaleCounts are the numbers of sessions, and of stateless clients, of the scale rows.
var scaleCounts = []int{1, 100, 1000}

// turns calls its clients in turn, each call going to the next client.
type turns struct {
	cs   []caller
	next atomic.Uint64
}

func (t *turns) call(args string) error {
	return t.cs[(t.next.Add(1)-1)%uint64(len(t.cs))].call(args)
}

func (t *turns) close() {
	for _, c := range t.cs {
		c.close()
	}
}

// sessionScale calls the echo-go bundle through one node's HTTP front from 1, 100 and 1,000
// open 2025-11-25 sessions and as many 2026-07-28 clients, taking turns, and reads the node's
// memory before and after each batch of sessions opens. One stdio session of each era, on a
// node of its own, is the stdio row: a stdio node serves the one client that started it.
func sessionScale(cfg config, w *strings.Builder) error {
	dir, _, err := benchFolder(cfg, "echo-go")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	const tool, args = "echo-go.echo", `{"text":"bench"}`
	// Every session comes from one address, so both bounds are raised over the rows' sum, and
	// the sessions open stay under half of --max-sessions, where idle ones would be ended early.
	first, _, stop, err := startNodeEnv(cfg, dir, tool, nil, "--max-sessions", "4000", "--max-client-sessions", "4000")
	if err != nil {
		return err
	}
	defer stop()
	defer first.close()
	stdio25, err := startStdio(tool, cfg.node, "serve", "--bundles", dir, "--log-level", "warn")
	if err != nil {
		return err
	}
	defer stdio25.close()
	stdio26, err := startStdioStateless(tool, cfg.node, "serve", "--bundles", dir, "--log-level", "warn")
	if err != nil {
		return err
	}
	defer stdio26.close()

	fmt.Fprintf(w, "## Many sessions and clients on one node\n\n")
	fmt.Fprintf(w, "| front | sessions or clients | era | calls/s | p50 | p99 |\n|---|---|---|---|---|---|\n")
	row := func(front string, n int, era string, c caller) error {
		r, err := measure(c, args, scaleInflight, config{rounds: cfg.rounds, duration: time.Second})
		if err != nil {
			return fmt.Errorf("%s, %d %s: %w", front, n, era, err)
		}
		fmt.Fprintf(w, "| %s | %d | %s | %.0f | %s | %s |\n", front, n, era, r.perSec, us(r.p50), us(r.p99))
		fmt.Fprintf(os.Stderr, "bench: scale, %s, %d %s done\n", front, n, era)
		return nil
	}
	if err := row("stdio", 1, "2025-11-25 session", stdio25); err != nil {
		return err
	}
	if err := row("stdio", 1, "2026-07-28 stateless", stdio26); err != nil {
		return err
	}
	hc := newHTTPClient()
	defer hc.CloseIdleConnections()
	open := &turns{} // sessions opened so far, kept open to the end
	defer open.close()
	for _, n := range scaleCounts {
		sessions, err := openSessions(hc, first.url, tool, n)
		open.cs = append(open.cs, sessions...)
		if err != nil {
			return err
		}
		if err := row("HTTP", n, "2025-11-25 session", &turns{cs: sessions}); err != nil {
			return err
		}
		clients := make([]caller, n)
		for i := range clients {
			clients[i] = &httpClient{url: first.url, tool: tool, version: "2026-07-28", stateless: true, hc: hc,
				meta: strings.TrimSuffix(statelessMeta, "}") + `,"io.modelcontextprotocol/clientInfo":{"name":"bench-` + strconv.Itoa(i) + `","version":"1"}}`}
		}
		if err := row("HTTP", n, "2026-07-28 stateless", &turns{cs: clients}); err != nil {
			return err
		}
	}
	mem, err := idleSessionMemory(cfg, dir, tool, args)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\nOne node serves every HTTP row, over one echo-go bundle; its sessions stay open from row to row (1, then 101,\n"+
		"then 1,101 at once). %d calls are in flight in every row, each going to the next session or client in turn, so\n"+
		"that the rows differ only in how many the node serves. The sessions share one pool of at most 64 connections, so\n"+
		"what the node keeps per session is its session, not a connection. A 2026-07-28 client is its requests, each\n"+
		"carrying its own clientInfo; the node keeps nothing of it between calls. Over stdio a node serves the one client\n"+
		"that started it, so the stdio rows are one session, or one stateless client, on a node of its own. Each row is the\n"+
		"median of %d runs of 1s.\n\n", scaleInflight, cfg.rounds)
	fmt.Fprintf(w, "Memory per idle session, on a node of its own: its RSS after 200 calls on one session, %.1f MiB, and after\n"+
		"%d more sessions opened (initialize and notifications/initialized, no call), %.1f MiB: %.1f KiB a session\n"+
		"(with GOGC=100, so that the node's floor of garbage headroom is not counted as the sessions').\n\n",
		float64(mem.before)/1024, mem.n, float64(mem.after)/1024, float64(mem.after-mem.before)/float64(mem.n))
	return nil
}

// openSessions opens n 2025-11-25 sessions over hc's connections; on an error it returns
// those it opened.
func openSessions(hc *http.Client, url, tool string, n int) ([]caller, error) {
	var sessions []caller
	for i := range n {
		s, err := startHTTPOn(hc, url, tool)
		if err != nil {
			return sessions, fmt.Errorf("session %d of %d: %w", i+1, n, err)
		}
		sessions = append(sessions, s)
	}
	return sessions, nil
}

// idleMemory is a node's RSS in KiB before and after n idle sessions opened.
type idleMemory struct{ n, before, after int }

// idleSessionMemory starts a node over dir, calls it through one session so that what the
// first calls set up is in place, and reads its RSS before and after opening 1,000 more.
func idleSessionMemory(cfg config, dir, tool, args string) (idleMemory, error) {
	m := idleMemory{n: scaleCounts[len(scaleCounts)-1]}
	// GOGC=100 turns off the node's floor of garbage headroom (gcpace): what the floor lets
	// pile up between collections is no session's, and would hide the sessions' own bytes.
	first, pid, stop, err := startNodeEnv(cfg, dir, tool, []string{"GOGC=100"}, "--max-sessions", "4000", "--max-client-sessions", "4000")
	if err != nil {
		return m, err
	}
	defer stop()
	defer first.close()
	if err := warm(first, args); err != nil {
		return m, err
	}
	if m.before, err = procKiB(pid, "VmRSS"); err != nil {
		return m, err
	}
	hc := newHTTPClient()
	defer hc.CloseIdleConnections()
	sessions, err := openSessions(hc, first.url, tool, m.n)
	defer (&turns{cs: sessions}).close()
	if err != nil {
		return m, err
	}
	time.Sleep(200 * time.Millisecond) // the node's side of the last initialize settles
	m.after, err = procKiB(pid, "VmRSS")
	return m, err
}

// procKiB reads a size in KiB, such as VmRSS, from /proc/PID/status.
func procKiB(pid int, key string) (int, error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, key+":"); ok {
			return strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", key, pid)
}
