package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/telemetry"
	"github.com/toolnode/toolnode/sdk-go/rawjson"
)

var relayFlag = flag.String("serve-relay", "", "serve as the least relay, over stdio (`MODE` stdio) or over HTTP on the address MODE, in front of the bundle "+
	"the arguments give (the tool as a client calls it, bundle.tool, then the bundle's command), and do nothing else (the benchmark starts itself so)")

// The least relay is the least a relay of MCP calls can do: it starts one bundle and passes
// each message on as it comes, changing only what it must. Over stdio it copies the client's
// lines to the bundle and the bundle's lines back, renaming the tool of a call (the client
// calls "bundle.tool", as it calls the node; the bundle knows "tool"). Over HTTP it answers
// initialize itself, with a session, and notifications with 202, and writes every other
// request to the bundle under an id of its own, answering with the bundle's line under the
// client's id. It checks nothing. It runs in a process of its own, as the node and the floor
// do, and the same clients drive it, so a figure of the node divided by the least relay's is
// the share of what any relay reaches on this machine that the node reaches.

// leastRelays tells a reader of the report what the least relays are.
const leastRelays = "The least relays run in a process of their own too and start the bundle themselves: over stdio one copies\n" +
	"each line to the bundle and back as it comes, renaming the tool of a call; over HTTP one answers initialize\n" +
	"itself and writes each request to the bundle under an id of its own. They check nothing: what a relay must do\n" +
	"and no more, so that the node's figures can be read against what any relay reaches here.\n"

// runRelay is the whole of the program when -serve-relay is given: mode is "stdio" or the
// address to serve HTTP on, and args are the tool's name as the client calls it and the
// bundle's command.
func runRelay(mode string, args []string) error {
	if len(args) < 2 {
		return fmt.Errorf("relay: want the tool as called (bundle.tool) and the bundle's command after -serve-relay %s", mode)
	}
	_, tool, ok := strings.Cut(args[0], ".")
	if !ok {
		return fmt.Errorf("relay: %q is not bundle.tool", args[0])
	}
	// The names are plain: quoted, they are what a call holds. The first is the call's name.
	from, to := []byte(`"`+args[0]+`"`), []byte(`"`+tool+`"`)
	rename := func(line []byte) []byte { return bytes.Replace(line, from, to, 1) }
	if mode == "stdio" {
		return relayStdio(args[1:], rename)
	}
	return relayHTTP(mode, args[1:], rename)
}

// relayStdio relays the lines of its own stdin to the bundle program, through rename, and
// the bundle's lines to its own stdout, until the bundle's stdout ends. The end of stdin is
// passed on, and so ends the bundle.
func relayStdio(program []string, rename func([]byte) []byte) error {
	cmd, in, out, err := spawn(program[0], program[1:]...)
	if err != nil {
		return fmt.Errorf("relay: start the bundle: %w", err)
	}
	go func() {
		// A failed write is the bundle gone, which the copy of its stdout sees end.
		copyLines(in, os.Stdin, rename)
		in.Close()
	}()
	if err := copyLines(os.Stdout, out, nil); err != nil {
		return fmt.Errorf("relay: from the bundle to stdout: %w", err)
	}
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("relay: the bundle: %w", err)
	}
	return nil
}

// copyLines copies src to dst a line at a time, each through rewrite when it is not nil,
// writing each line as soon as it is read so that no message waits for the next one. A last
// line without its newline is copied too.
func copyLines(dst io.Writer, src io.Reader, rewrite func([]byte) []byte) error {
	// Lines may be megabytes (a large result); ReadBytes takes any length.
	r := bufio.NewReaderSize(src, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			if rewrite != nil {
				line = rewrite(line)
			}
			if _, err := dst.Write(line); err != nil {
				return err
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// httpRelay relays the requests of HTTP clients to one bundle over its stdin, under ids of
// its own, and hands each line the bundle answers to the request it belongs to.
type httpRelay struct {
	in      io.Writer
	wmu     sync.Mutex // one line written at a time: many requests are in flight
	ids     atomic.Uint64
	pending pending
	rename  func(line []byte) []byte
	init    []byte // the bundle's answer to the relay's initialize, given to every client's
}

// relayHTTP serves HTTP on addr at /mcp, relaying to the bundle program it starts and
// initializes, until SIGINT or SIGTERM, or the bundle's stdout ends.
func relayHTTP(addr string, program []string, rename func([]byte) []byte) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("relay: %w", err)
	}
	defer ln.Close()
	stopProfile, err := telemetry.StartCPUProfile()
	if err != nil {
		return fmt.Errorf("relay: %w", err)
	}
	defer stopProfile()
	cmd, in, out, err := spawn(program[0], program[1:]...)
	if err != nil {
		return fmt.Errorf("relay: start the bundle: %w", err)
	}
	defer stopChild(cmd, in)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	h := &httpRelay{in: in, rename: rename}
	go func() {
		h.pending.readLines(out)
		stop() // without the bundle there is nothing to relay to
	}()
	id := h.ids.Add(1)
	h.init, err = h.roundTrip(ctx, id, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":"2025-11-25",`+
		`"capabilities":{},"clientInfo":{"name":"least relay","version":"1"}}}`+"\n", id))
	if err != nil {
		return fmt.Errorf("relay: initialize the bundle: %w", err)
	}
	if err := h.send([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")); err != nil {
		return fmt.Errorf("relay: notifications/initialized: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("POST /mcp", h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("relay: %w", err)
	}
	return nil
}

// ServeHTTP answers one message of a client: itself for initialize and notifications, with
// the bundle's answer for any other request.
func (h *httpRelay) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	id, ok := rawjson.Member(body, "id")
	if !ok {
		// The one notification the client sends, notifications/initialized, the bundle had
		// from the relay at its start.
		w.WriteHeader(http.StatusAccepted)
		return
	}
	var answer []byte
	if method, _ := rawjson.Member(body, "method"); rawjson.StringIs(method, "initialize") {
		w.Header().Set("Mcp-Session-Id", rand.Text())
		answer = h.init
	} else {
		own := h.ids.Add(1)
		msg, _ := rawjson.SetMember(h.rename(body), "id", strconv.AppendUint(nil, own, 10))
		if answer, err = h.roundTrip(r.Context(), own, append(msg, '\n')); err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
	}
	answer, _ = rawjson.SetMember(answer, "id", id)
	w.Header().Set("Content-Type", "application/json")
	w.Write(answer)
}

// send writes one line to the bundle.
func (h *httpRelay) send(line []byte) error {
	h.wmu.Lock()
	defer h.wmu.Unlock()
	_, err := h.in.Write(line)
	return err
}

// roundTrip writes msg, a request under the relay's id, to the bundle and waits for the
// line that answers it, or for ctx to end.
func (h *httpRelay) roundTrip(ctx context.Context, id uint64, msg []byte) ([]byte, error) {
	ch := h.pending.add(id)
	if err := h.send(msg); err != nil {
		h.pending.drop(id)
		return nil, fmt.Errorf("write to the bundle: %w", err)
	}
	select {
	case line, ok := <-ch:
		if !ok {
			return nil, errors.New("the bundle's stdout ended")
		}
		return line, nil
	case <-ctx.Done():
		h.pending.drop(id)
		return nil, ctx.Err()
	}
}

// startRelays runs this program as the least stdio relay and as the least HTTP relay in front
// of program, each in a process of its own, and connects clients calling name (bundle.tool)
// to each: a 2025-11-25 one and a 2026-07-28 one (over stdio, to a relay of its own). It
// returns them as the routes "least relay, stdio", "least relay, HTTP" and the same with
// ", 2026-07-28 stateless", in that order, and what ends them all.
func startRelays(name string, program []string) ([]route, func(), error) {
	self, err := os.Executable()
	if err != nil {
		return nil, nil, fmt.Errorf("least relay: %w", err)
	}
	var ends stops
	fail := func(err error) ([]route, func(), error) {
		ends.run()
		return nil, nil, err
	}
	viaStdio, err := startStdio(name, self, stdioRelayArgs(name, program)...)
	if err != nil {
		return fail(fmt.Errorf("least relay, stdio: %w", err))
	}
	ends = append(ends, viaStdio.close)
	viaHTTP, err := startHTTPRelay(name, program)
	if err != nil {
		return fail(err)
	}
	ends = append(ends, viaHTTP.stop)
	stdio26, err := startStdioStateless(name, self, stdioRelayArgs(name, program)...)
	if err != nil {
		return fail(fmt.Errorf("least relay, stdio, 2026-07-28 client: %w", err))
	}
	ends = append(ends, stdio26.close)
	session, ok := viaHTTP.c.(*httpClient)
	if !ok {
		return fail(fmt.Errorf("least relay, HTTP: its client is a %T, not an HTTP one", viaHTTP.c))
	}
	http26 := startHTTPStateless(session.url, name)
	ends = append(ends, http26.close)
	return []route{{name: "least relay, stdio", c: viaStdio}, {name: "least relay, HTTP", c: viaHTTP.c, http: true},
		{name: "least relay, stdio, 2026-07-28 stateless", c: stdio26}, {name: "least relay, HTTP, 2026-07-28 stateless", c: http26, http: true}}, ends.run, nil
}

// startHTTPRelay runs this program as the least HTTP relay in front of program, in a
// process of its own with env added to its environment, and connects a client calling name
// (bundle.tool) to it.
func startHTTPRelay(name string, program []string, env ...string) (peer, error) {
	self, err := os.Executable()
	if err != nil {
		return peer{}, fmt.Errorf("least relay: %w", err)
	}
	return startPeer("the least HTTP relay", func(port string) []string {
		return append([]string{self, "-serve-relay", "127.0.0.1:" + port, name}, program...)
	}, env, "", func(addr string) (caller, error) { return startHTTP("http://"+addr+"/mcp", name) })
}

// stdioRelayArgs are the arguments that run this program as the least stdio relay in front
// of program, for a client calling name (bundle.tool).
func stdioRelayArgs(name string, program []string) []string {
	return append([]string{"-serve-relay", "stdio", name}, program...)
}

// relayRefs says where, among the routes of a table, are those relayNote compares: the
// fronts and the least relays with a 2025-11-25 client, and with a 2026-07-28 one (the 26
// fields).
type relayRefs struct {
	direct, stdioRelay, nodeStdio, floor, httpRelay, nodeHTTP int
	stdioRelay26, nodeStdio26, httpRelay26, nodeHTTP26        int
}

// relayNote reads the node's fronts against the least relays at 8 in flight, for clients of
// either era, and the least relays against what they relay to at 1 in flight; res is by in
// flight, 1 then 8.
func relayNote(res [][]result, at relayRefs) string {
	one, eight := res[0], res[1]
	rate := func(node, relay int) float64 { return eight[node].perSec / eight[relay].perSec }
	return fmt.Sprintf("At 8 in flight the node's stdio front makes %.2f× the calls/s of the least stdio relay, and its HTTP front %.2f× those of the least HTTP relay, "+
		"with 2025-11-25 clients (the node tells the bundle what the 2026-07-28 revision asks of each request; the relay passes the client's bare line); "+
		"with 2026-07-28 clients, whose requests carry that themselves, %.2f× and %.2f×. "+
		"One call in flight, the least stdio relay adds %s at the median over direct stdio, and the least HTTP relay %s over the floor.",
		rate(at.nodeStdio, at.stdioRelay), rate(at.nodeHTTP, at.httpRelay), rate(at.nodeStdio26, at.stdioRelay26), rate(at.nodeHTTP26, at.httpRelay26),
		us(one[at.stdioRelay].p50-one[at.direct].p50), us(one[at.httpRelay].p50-one[at.floor].p50))
}
