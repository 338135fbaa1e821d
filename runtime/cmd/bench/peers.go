package main

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

var peersFlag = flag.Bool("peers", false, "also measure other MCP gateways (supergateway, mcp-hub, ContextForge's bridge, mcp-proxy; `make bench-peers` installs them) beside the node's HTTP front")

// Where `make bench-peers` installs the gateways: those pinned in
// testdata/bench/peers/package.json, and the Python ones pinned in the Makefile.
const (
	peerDir   = "build/npm-peers/node_modules"
	pyPeerDir = "build/py-peers/bin"
)

// peers fronts the echo-go bundle with the node's HTTP front and with other gateways that
// do the same job, and compares their calls per second over HTTP, with the floor beside.
func peers(cfg config, w *strings.Builder) error {
	fmt.Fprintf(w, "## Other gateways in front of the same bundle\n\n")
	if !*peersFlag {
		fmt.Fprintf(w, "`make bench-peers` adds here supergateway, mcp-hub, ContextForge's transport bridge and mcp-proxy\n"+
			"in front of the echo-go bundle.\n\n")
		return nil
	}
	src, bin, err := benchBundle(cfg, "echo-go")
	if err != nil {
		return err
	}
	modules, err := filepath.Abs(filepath.Join(cfg.root, peerDir))
	if err != nil {
		return err
	}
	pyBin, err := filepath.Abs(filepath.Join(cfg.root, pyPeerDir))
	if err != nil {
		return err
	}
	for _, d := range []string{modules, pyBin} {
		if _, err := os.Stat(d); err != nil {
			return fmt.Errorf("gateways to compare with (run make bench-peers): %w", err)
		}
	}
	dir, err := linkBundle(src)
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	viaNode, stopNode, err := startNodeHTTP(cfg, dir, "echo-go.echo")
	if err != nil {
		return err
	}
	defer stopNode()
	defer viaNode.close()
	floor, err := startFloor()
	if err != nil {
		return err
	}
	defer floor.stop()
	g := &gateways{routes: []route{{name: "toolnode, HTTP front", c: viaNode, http: true}, {name: floorName, c: floor.c, http: true}}}
	defer func() { g.ends.run() }()
	if err := g.startNodeJS(modules, bin); err != nil {
		return err
	}
	if err := g.startPython(pyBin, bin); err != nil {
		return err
	}
	routes, notes := g.routes, g.notes

	fmt.Fprintf(w, "| bundle | front | in flight | calls/s | vs toolnode | vs floor | p50 | p99 |\n|---|---|---|---|---|---|---|---|\n")
	res, err := compareRoutes(cfg, w, "echo-go", `{"text":"bench"}`, []int{1, 8}, routes, 1)
	if err != nil {
		return err
	}
	notes = append(notes, overFloor(routes, res[0], 1), peerVerdict(routes, res))
	notes = append(notes, "supergateway and mcp-hub run on "+nodeVersion()+", versions as pinned in testdata/bench/peers/package.json;\n"+
		"ContextForge's bridge (mcp-contextforge-gateway) and mcp-proxy on "+pyVersion(pyBin)+", versions as pinned in the Makefile.\n"+
		"Stateless supergateway starts a new bundle process for every request. mcp-hub serves MCP over\n"+
		"the HTTP+SSE transport of 2024-11-05 only (answers come back on a GET event stream), so it is\n"+
		"driven that way here. ContextForge's bridge writes each POST to the bundle as it came and answers\n"+
		"with the bundle's line that has the same id: it gives out no session, checks neither Accept nor\n"+
		"Content-Type nor the JSON-RPC shape, and shares the bundle's ids among all its clients. mcp-proxy\n"+
		"(`--transport` names what it would connect to as a client; with a command it serves both\n"+
		"transports) is stateful: it checks the session and that Accept lists application/json, and answers\n"+
		"JSON; behind it an MCP client session of the Python SDK calls the bundle. Every answer is checked\n"+
		"to be a result that echoes the text sent.")
	fmt.Fprintf(w, "\n%s\n\n", strings.Join(notes, "\n"))
	return nil
}

// gateways are the routes to compare, the notes on those that did not start, and how to
// end them all.
type gateways struct {
	routes []route
	notes  []string
	ends   stops
}

// add keeps gateway p as a route, or notes why it did not start.
func (g *gateways) add(name string, p peer, err error) {
	if err != nil {
		g.notes = append(g.notes, err.Error())
		return
	}
	g.routes = append(g.routes, route{name: name, c: p.c, http: true})
	g.ends = append(g.ends, p.stop)
}

// streamable connects to a gateway's Streamable HTTP endpoint at addr.
func streamable(addr string) (caller, error) { return startHTTP("http://"+addr+"/mcp", "echo") }

// startNodeJS starts the gateways of Node.js, from the modules folder, in front of the
// bundle program bin: supergateway both ways and mcp-hub.
func (g *gateways) startNodeJS(modules, bin string) error {
	sg := filepath.Join(modules, "supergateway", "dist", "index.js")
	for _, stateful := range []bool{true, false} {
		name, args := "supergateway, stateless (its default)", []string{sg, "--stdio", bin, "--outputTransport", "streamableHttp", "--logLevel", "none"}
		if stateful {
			name, args = "supergateway `--stateful`", append(args, "--stateful")
		}
		p, err := startPeer(name, portLast("node", args...), nil, "", streamable)
		g.add(name, p, err)
	}

	hubHome, err := os.MkdirTemp("", "toolnode-bench-hub-")
	if err != nil {
		return err
	}
	g.ends = append(g.ends, func() { os.RemoveAll(hubHome) }) // after the hub has ended
	hubConfig := filepath.Join(hubHome, "mcp-hub.json")
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"echo": map[string]any{"command": bin, "args": []string{}}}})
	if err := os.WriteFile(hubConfig, b, 0o644); err != nil {
		return err
	}
	// mcp-hub keeps logs and a workspace cache under the XDG folders: keep them in hubHome.
	env := []string{"HOME=" + hubHome, "XDG_STATE_HOME=" + hubHome, "XDG_CONFIG_HOME=" + hubHome, "XDG_DATA_HOME=" + hubHome}
	p, err := startPeer("mcp-hub", portLast("node", filepath.Join(modules, "mcp-hub", "dist", "cli.js"), "--config", hubConfig),
		env, "", func(addr string) (caller, error) { return startSSE("http://"+addr+"/mcp", "echo__echo") })
	g.add("mcp-hub (HTTP+SSE transport)", p, err)
	return nil
}

// startPython starts the gateways of Python, from the venv's bin folder pyBin, in front
// of the bundle program bin: ContextForge's bridge and mcp-proxy.
func (g *gateways) startPython(pyBin, bin string) error {
	// ContextForge refuses to start on its placeholder secrets; it gets fresh ones, and a
	// folder of its own to work in.
	cfHome, err := os.MkdirTemp("", "toolnode-bench-contextforge-")
	if err != nil {
		return err
	}
	g.ends = append(g.ends, func() { os.RemoveAll(cfHome) })
	env := []string{"HOME=" + cfHome}
	for _, k := range []string{"JWT_SECRET_KEY", "AUTH_ENCRYPTION_SECRET", "PLATFORM_ADMIN_PASSWORD", "BASIC_AUTH_PASSWORD"} {
		env = append(env, k+"=Bench-"+rand.Text()+"-9!")
	}
	p, err := startPeer("ContextForge", func(port string) []string {
		return []string{filepath.Join(pyBin, "python"), "-m", "mcpgateway.translate", "--stdio", bin, "--expose-streamable-http",
			"--port", port, "--logLevel", "error"}
	}, env, cfHome, streamable)
	g.add("ContextForge `mcpgateway.translate`", p, err)

	p, err = startPeer("mcp-proxy", func(port string) []string {
		return []string{filepath.Join(pyBin, "mcp-proxy"), "--transport", "streamablehttp", "--port", port, "--log-level", "WARNING", "--", bin}
	}, nil, "", streamable)
	g.add("mcp-proxy", p, err)
	return nil
}

// peerVerdict compares the node's HTTP front (route 0) with the floor (route 1) and
// ContextForge's bridge against the targets of the HTTP front.
func peerVerdict(routes []route, res [][]result) string {
	cf := -1
	for i, r := range routes {
		if strings.HasPrefix(r.name, "ContextForge") {
			cf = i
		}
	}
	one, eight := res[0], res[1]
	v := fmt.Sprintf("Targets of the HTTP front: at 8 in flight at least 0.7× the floor: %s (%.2f×);", met(eight[0].perSec >= 0.7*eight[1].perSec), eight[0].perSec/eight[1].perSec)
	if cf >= 0 {
		v += fmt.Sprintf(" at least 5× ContextForge's bridge: %s (%.1f×);", met(eight[0].perSec >= 5*eight[cf].perSec), eight[0].perSec/eight[cf].perSec)
	}
	added := one[0].p50 - one[1].p50
	return v + fmt.Sprintf("\nat 1 in flight at most 60 µs added over the floor at the median: %s (%s).", met(added <= 60*time.Microsecond), us(added))
}

func met(ok bool) string {
	if ok {
		return "met"
	}
	return "missed"
}

func nodeVersion() string {
	out, err := exec.Command("node", "--version").Output()
	if err != nil {
		return "(unknown version)"
	}
	return "Node.js " + strings.TrimSpace(string(out))
}

func pyVersion(bin string) string {
	out, err := exec.Command(filepath.Join(bin, "python"), "--version").Output()
	if err != nil {
		return "(unknown Python)"
	}
	return strings.TrimSpace(string(out))
}

// portLast is the command line of a gateway that takes its port as a last --port flag.
func portLast(name string, args ...string) func(port string) []string {
	return func(port string) []string { return append(append([]string{name}, args...), "--port", port) }
}

// peer is a gateway running, with a client connected.
type peer struct {
	c    caller
	pid  int
	stop func() // closes the client and ends the gateway
}

// startPeer runs the command line argv gives for a free port, with env added to the
// environment and in dir (if not ""), and waits, up to 60 s, until connect succeeds on
// its address and a call through it answers. stop ends the gateway's whole process group,
// its bundle processes included.
func startPeer(name string, argv func(port string) []string, env []string, dir string, connect func(addr string) (caller, error)) (peer, error) {
	addr, err := freeAddr()
	if err != nil {
		return peer{}, err
	}
	_, port, _ := strings.Cut(addr, ":")
	args := argv(port)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Dir = dir
	ownGroup(cmd)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return peer{}, fmt.Errorf("%s could not be started: %w", name, err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	stop := func() {
		signalGroup(cmd.Process.Pid, false)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			signalGroup(cmd.Process.Pid, true)
			<-exited
		}
	}
	var last error
	// ContextForge imports for seconds before it listens.
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		select {
		case <-exited:
			return peer{}, fmt.Errorf("%s exited at start: %s", name, lastLines(stderr.String()))
		default:
		}
		c, err := connect(addr)
		if err == nil {
			if err = c.call(`{"text":"bench"}`); err == nil {
				return peer{c: c, pid: cmd.Process.Pid, stop: func() { c.close(); stop() }}, nil
			}
			c.close()
		}
		last = err
	}
	stop()
	return peer{}, fmt.Errorf("%s did not answer a call within 60 s: %v", name, last)
}

func lastLines(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-3):], " / ")
}

// sseClient speaks the HTTP+SSE transport of MCP 2024-11-05: a GET opens an event stream
// whose first event names the URL to POST messages to; answers come back on the stream.
// Any number of calls may be in flight, matched to their answers by id.
type sseClient struct {
	post, tool string
	hc         *http.Client
	stream     io.Closer
	ids        atomic.Uint64
	pending    pending
}

func startSSE(streamURL, tool string) (*sseClient, error) {
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	req, err := http.NewRequest("GET", streamURL, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("GET %s: HTTP %d", streamURL, resp.StatusCode)
	}
	events := bufio.NewReader(resp.Body)
	event, data, err := readEvent(events)
	if err != nil || event != "endpoint" {
		resp.Body.Close()
		return nil, fmt.Errorf("GET %s: no endpoint event first (%q, %v)", streamURL, event, err)
	}
	base, _ := url.Parse(streamURL)
	post, err := base.Parse(string(data))
	if err != nil {
		resp.Body.Close()
		return nil, err
	}
	c := &sseClient{post: post.String(), tool: tool, hc: hc, stream: resp.Body}
	go c.read(events)
	if _, err := c.roundTrip(`"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}`); err != nil {
		c.close()
		return nil, fmt.Errorf("initialize: %w", err)
	}
	if err := c.send([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)); err != nil {
		c.close()
		return nil, err
	}
	return c, nil
}

// readEvent reads one server-sent event and returns its type and data.
func readEvent(r *bufio.Reader) (string, []byte, error) {
	event := "message"
	var data []byte
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return "", nil, err
		}
		line = bytes.TrimRight(line, "\r\n")
		switch {
		case len(line) == 0 && data != nil:
			return event, data, nil
		case bytes.HasPrefix(line, []byte("event:")):
			event = string(bytes.TrimSpace(line[len("event:"):]))
		case bytes.HasPrefix(line, []byte("data:")):
			if data != nil {
				data = append(data, '\n')
			}
			data = append(data, bytes.TrimPrefix(line[len("data:"):], []byte(" "))...)
		}
	}
}

func (c *sseClient) read(events *bufio.Reader) {
	for {
		event, data, err := readEvent(events)
		if err != nil {
			c.pending.closeAll()
			return
		}
		if event == "message" {
			c.pending.deliver(data)
		}
	}
}

func (c *sseClient) send(body []byte) error {
	resp, err := c.hc.Post(c.post, "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("POST %s: HTTP %d: %s", c.post, resp.StatusCode, b)
	}
	return nil
}

// roundTrip posts a request whose body after "method": is rest and waits for its answer on
// the event stream.
func (c *sseClient) roundTrip(rest string) ([]byte, error) {
	id := c.ids.Add(1)
	ch := c.pending.add(id)
	if err := c.send([]byte(`{"jsonrpc":"2.0","id":` + strconv.FormatUint(id, 10) + `,"method":` + rest + `}`)); err != nil {
		c.pending.drop(id)
		return nil, err
	}
	select {
	case msg, ok := <-ch:
		if !ok {
			return nil, fmt.Errorf("event stream closed")
		}
		if failed(msg) {
			return nil, fmt.Errorf("call failed: %s", msg)
		}
		return msg, nil
	case <-time.After(30 * time.Second):
		return nil, fmt.Errorf("no answer within 30 s")
	}
}

func (c *sseClient) call(args string) error {
	msg, err := c.roundTrip(`"tools/call","params":{"name":"` + c.tool + `","arguments":` + args + `}`)
	if err != nil {
		return err
	}
	return echoed(msg, args)
}

func (c *sseClient) close() {
	c.stream.Close()
	c.hc.CloseIdleConnections()
}
