package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// caller makes one MCP call and returns when its answer is in.
type caller interface {
	call(args string) error
	close()
}

// pending matches answers to the calls waiting for them, by numeric id.
type pending struct {
	mu   sync.Mutex
	wait map[uint64]chan []byte
}

// add registers a call and returns where its answer will come.
func (p *pending) add(id uint64) chan []byte {
	ch := make(chan []byte, 1)
	p.mu.Lock()
	if p.wait == nil {
		p.wait = map[uint64]chan []byte{}
	}
	p.wait[id] = ch
	p.mu.Unlock()
	return ch
}

// drop forgets a call whose request could not be sent.
func (p *pending) drop(id uint64) {
	p.mu.Lock()
	delete(p.wait, id)
	p.mu.Unlock()
}

// deliver hands msg to the call its id names, if one waits.
func (p *pending) deliver(msg []byte) {
	var m struct {
		ID *uint64 `json:"id"`
	}
	if json.Unmarshal(msg, &m) != nil || m.ID == nil {
		return
	}
	p.mu.Lock()
	ch := p.wait[*m.ID]
	delete(p.wait, *m.ID)
	p.mu.Unlock()
	if ch != nil {
		ch <- msg
	}
}

// closeAll ends every waiting call: the connection is gone.
func (p *pending) closeAll() {
	p.mu.Lock()
	for id, ch := range p.wait {
		close(ch)
		delete(p.wait, id)
	}
	p.mu.Unlock()
}

// spawn starts a program with pipes to its stdin and from its stdout.
func spawn(name string, args ...string) (*exec.Cmd, io.WriteCloser, io.ReadCloser, error) {
	cmd := exec.Command(name, args...)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, nil, err
	}
	return cmd, in, out, nil
}

// stdioClient speaks newline-delimited JSON-RPC to a child process, with any number of
// calls in flight matched to their answers by id.
type stdioClient struct {
	cmd     *exec.Cmd
	in      io.WriteCloser
	wmu     sync.Mutex
	ids     atomic.Uint64
	pending pending
	tool    string
}

func startStdio(tool string, name string, args ...string) (*stdioClient, error) {
	cmd, in, out, err := spawn(name, args...)
	if err != nil {
		return nil, err
	}
	c := &stdioClient{cmd: cmd, in: in, tool: tool}
	go c.read(out)
	if _, err := c.roundTrip(`"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}`); err != nil {
		c.close()
		return nil, fmt.Errorf("initialize %s: %w", name, err)
	}
	c.send([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"))
	return c, nil
}

func (c *stdioClient) read(out io.Reader) {
	r := bufio.NewReaderSize(out, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			c.pending.closeAll()
			return
		}
		c.pending.deliver(line)
	}
}

func (c *stdioClient) send(b []byte) {
	c.wmu.Lock()
	c.in.Write(b)
	c.wmu.Unlock()
}

// roundTrip sends a request whose body after "method": is rest and waits for its answer.
func (c *stdioClient) roundTrip(rest string) ([]byte, error) {
	id := c.ids.Add(1)
	ch := c.pending.add(id)
	c.send([]byte(`{"jsonrpc":"2.0","id":` + strconv.FormatUint(id, 10) + `,"method":` + rest + "}\n"))
	line, ok := <-ch
	if !ok {
		return nil, fmt.Errorf("connection closed")
	}
	if bytes.Contains(line, []byte(`"error"`)) || bytes.Contains(line, []byte(`"isError":true`)) {
		return nil, fmt.Errorf("call failed: %s", line)
	}
	return line, nil
}

func (c *stdioClient) call(args string) error {
	_, err := c.roundTrip(`"tools/call","params":{"name":"` + c.tool + `","arguments":` + args + `}`)
	return err
}

func (c *stdioClient) close() { stopChild(c.cmd, c.in) }

// stopChild closes a child's stdin, which ends an MCP server, and kills it if it does not
// exit within 5s.
func stopChild(cmd *exec.Cmd, in io.Closer) {
	in.Close()
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
		<-done
	}
}

// httpClient speaks Streamable HTTP to a node, as MCP clients do: it accepts JSON and event
// streams and reads the answer from either.
type httpClient struct {
	url, session, tool string
	hc                 *http.Client
	ids                atomic.Uint64
}

func startHTTP(url, tool string) (*httpClient, error) {
	c := &httpClient{url: url, tool: tool, hc: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	resp, err := c.post(`"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}`)
	if err != nil {
		return nil, err
	}
	c.session = resp.Header.Get("Mcp-Session-Id")
	resp.Body.Close()
	return c, nil
}

func (c *httpClient) post(rest string) (*http.Response, error) {
	body := `{"jsonrpc":"2.0","id":` + strconv.FormatUint(c.ids.Add(1), 10) + `,"method":` + rest + `}`
	req, err := http.NewRequest("POST", c.url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	resp, err := c.hc.Do(req)
	if err == nil && resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return nil, fmt.Errorf("HTTP %d: %s", resp.StatusCode, b)
	}
	return resp, err
}

func (c *httpClient) call(args string) error {
	resp, err := c.post(`"tools/call","params":{"name":"` + c.tool + `","arguments":` + args + `}`)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if !bytes.Contains(b, []byte(`"result"`)) || bytes.Contains(b, []byte(`"isError":true`)) {
		return fmt.Errorf("call failed: %s", b)
	}
	return nil
}

func (c *httpClient) close() { c.hc.CloseIdleConnections() }
