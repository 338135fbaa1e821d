package main

import (
	"bufio"
	"bytes"
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
	"syscall"
	"time"
)

var peersFlag = flag.Bool("peers", false, "also measure other MCP gateways (supergateway, mcp-hub; `make bench-peers` installs them) beside the node's HTTP front")

// peerDir is where `make bench-peers` installs the gateways pinned in
// testdata/bench/peers/package.json.
const peerDir = "build/npm-peers/node_modules"

// peers fronts the echo-go bundle with the node's HTTP front and with other gateways that
// do the same job, and compares their calls per second over HTTP.
func peers(cfg config, w *strings.Builder) error {
	fmt.Fprintf(w, "## Other gateways in front of the same bundle\n\n")
	if !*peersFlag {
		fmt.Fprintf(w, "`make bench-peers` adds here supergateway and mcp-hub in front of the echo-go bundle.\n\n")
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
	if _, err := os.Stat(modules); err != nil {
		return fmt.Errorf("gateways to compare with (run make bench-peers): %w", err)
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
	routes := []route{{"toolnode, HTTP front", viaNode}}
	var notes []string

	sg := filepath.Join(modules, "supergateway", "dist", "index.js")
	for _, stateful := range []bool{true, false} {
		name, args := "supergateway, stateless (its default)", []string{sg, "--stdio", bin, "--outputTransport", "streamableHttp", "--logLevel", "none"}
		if stateful {
			name, args = "supergateway `--stateful`", append(args, "--stateful")
		}
		c, stop, err := startPeer(name, args, nil, func(addr string) (caller, error) {
			return startHTTP("http://"+addr+"/mcp", "echo")
		})
		if err != nil {
			notes = append(notes, err.Error())
			continue
		}
		defer stop()
		routes = append(routes, route{name, c})
	}

	hubHome, err := os.MkdirTemp("", "toolnode-bench-hub-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(hubHome)
	hubConfig := filepath.Join(hubHome, "mcp-hub.json")
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"echo": map[string]any{"command": bin, "args": []string{}}}})
	if err := os.WriteFile(hubConfig, b, 0o644); err != nil {
		return err
	}
	// mcp-hub keeps logs and a workspace cache under the XDG folders: keep them in hubHome.
	env := []string{"HOME=" + hubHome, "XDG_STATE_HOME=" + hubHome, "XDG_CONFIG_HOME=" + hubHome, "XDG_DATA_HOME=" + hubHome}
	hub, stopHub, err := startPeer("mcp-hub (HTTP+SSE, the 2024-11-05 transport)", []string{filepath.Join(modules, "mcp-hub", "dist", "cli.js"), "--config", hubConfig},
		env, func(addr string) (caller, error) { return startSSE("http://"+addr+"/mcp", "echo__echo") })
	if err != nil {
		notes = append(notes, err.Error())
	} else {
		defer stopHub()
		routes = append(routes, route{"mcp-hub (HTTP+SSE transport)", hub})
	}

	fmt.Fprintf(w, "| bundle | front | in flight | calls/s | vs toolnode | p50 | p99 |\n|---|---|---|---|---|---|---|\n")
	if _, err := compareRoutes(cfg, w, "echo-go", `{"text":"bench"}`, []int{1, 8}, routes); err != nil {
		return err
	}
	notes = append(notes, "supergateway and mcp-hub run on Node.js "+nodeVersion()+"; versions as pinned in testdata/bench/peers/package.json.\n"+
		"Stateless supergateway starts a new bundle process for every request. mcp-hub serves MCP over\n"+
		"the HTTP+SSE transport of 2024-11-05 only (answers come back on a GET event stream), so it is\n"+
		"driven that way here.")
	fmt.Fprintf(w, "\n%s\n\n", strings.Join(notes, "\n"))
	return nil
}

func nodeVersion() string {
	out, err := exec.Command("node", "--version").Output()
	if err != nil {
		return "(unknown version)"
	}
	return strings.TrimSpace(string(out))
}

// startPeer runs a Node.js gateway with --port and a free port appended to args and waits,
// up to 30 s, until connect succeeds on its address and a call through it answers. stop
// ends the gateway's whole process group, its bundle processes included.
func startPeer(name string, args, env []string, connect func(addr string) (caller, error)) (caller, func(), error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, nil, err
	}
	_, port, _ := strings.Cut(addr, ":")
	cmd := exec.Command("node", append(args, "--port", port)...)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("%s could not be started: %w", name, err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	stop := func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	}
	var last error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		select {
		case <-exited:
			return nil, nil, fmt.Errorf("%s exited at start: %s", name, lastLines(stderr.String()))
		default:
		}
		c, err := connect(addr)
		if err == nil {
			if err = c.call(`{"text":"bench"}`); err == nil {
				return c, func() { c.close(); stop() }, nil
			}
			c.close()
		}
		last = err
	}
	stop()
	return nil, nil, fmt.Errorf("%s did not answer a call within 30 s: %v", name, last)
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
		if bytes.Contains(msg, []byte(`"error"`)) || bytes.Contains(msg, []byte(`"isError":true`)) {
			return nil, fmt.Errorf("call failed: %s", msg)
		}
		return msg, nil
	case <-time.After(30 * time.Second):
		return nil, fmt.Errorf("no answer within 30 s")
	}
}

func (c *sseClient) call(args string) error {
	_, err := c.roundTrip(`"tools/call","params":{"name":"` + c.tool + `","arguments":` + args + `}`)
	return err
}

func (c *sseClient) close() {
	c.stream.Close()
	c.hc.CloseIdleConnections()
}
