package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"github.com/toolnode/toolnode/sdk-go/rawjson"
)

// benchBundle returns the absolute paths of a bundle under testdata/bench and of the program
// it builds into build/, which must exist.
func benchBundle(cfg config, name string) (dir, bin string, err error) {
	dir, err = filepath.Abs(filepath.Join(cfg.root, "testdata", "bench", name))
	if err != nil {
		return "", "", err
	}
	bin = filepath.Join(dir, "build", name)
	if _, err := os.Stat(bin); err != nil {
		return "", "", fmt.Errorf("bench bundle %s (run make bench-bundles first): %w", name, err)
	}
	return dir, bin, nil
}

// benchFolder links the bench bundle name into a folder of its own, for a node serving only
// it, and returns the folder (the caller removes it) and the bundle's program.
func benchFolder(cfg config, name string) (folder, bin string, err error) {
	src, bin, err := benchBundle(cfg, name)
	if err != nil {
		return "", "", err
	}
	folder, err = linkBundle(src)
	return folder, bin, err
}

// linkBundle links the bundle directory at path into a folder of its own, for a node
// serving only it.
func linkBundle(path string) (string, error) {
	dir, err := os.MkdirTemp("", "toolnode-bench-")
	if err != nil {
		return "", err
	}
	return dir, os.Symlink(path, filepath.Join(dir, filepath.Base(path)))
}

// writeBundle writes the manifest of a bundle named name into dir/name.
func writeBundle(dir, name string, command []string, extra map[string]any) error {
	m := map[string]any{"name": name, "command": command}
	for k, v := range extra {
		m[k] = v
	}
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, name, "bundle.json"), b, 0o644)
}

// bundleFarm writes n bundles named prefix-00, prefix-01... into a new temporary folder.
// They share one program, given by absolute path, so that fifty of them cost no copies.
func bundleFarm(n int, prefix string, command []string, extra map[string]any) (string, error) {
	dir, err := os.MkdirTemp("", "toolnode-bench-")
	if err != nil {
		return "", err
	}
	for i := range n {
		if err := writeBundle(dir, fmt.Sprintf("%s-%02d", prefix, i), command, extra); err != nil {
			os.RemoveAll(dir)
			return "", err
		}
	}
	return dir, nil
}

// lineClient runs a process that speaks JSON-RPC lines, one request at a time, and hands
// every line it writes to await, notifications included (stdioClient drops them). It leaves
// answers unparsed, so that timing a large one times the server rather than this client.
type lineClient struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan []byte
	ids   int
}

func startLines(name string, args ...string) (*lineClient, error) {
	cmd, in, out, err := spawn(name, args...)
	if err != nil {
		return nil, err
	}
	c := &lineClient{cmd: cmd, in: in, lines: make(chan []byte, 64)}
	go func() {
		r := bufio.NewReaderSize(out, 1<<20)
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				close(c.lines)
				return
			}
			c.lines <- line
		}
	}()
	if _, err := c.request("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}`); err != nil {
		c.close()
		return nil, fmt.Errorf("initialize %s: %w", name, err)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return c, nil
}

func (c *lineClient) send(msg string) { io.WriteString(c.in, msg+"\n") }

// request sends a request and returns its answer, failing on a JSON-RPC error.
func (c *lineClient) request(method, params string) ([]byte, error) {
	c.ids++
	id := strconv.Itoa(c.ids)
	c.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":` + params + `}`)
	line, err := c.await("the answer", 30*time.Second, func(line []byte) bool {
		v, ok := rawjson.Member(line, "id")
		return ok && string(v) == id
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	if e, ok := rawjson.Member(line, "error"); ok {
		return nil, fmt.Errorf("%s: %s", method, e)
	}
	if bytes.Contains(line, []byte(`"isError":true`)) {
		return nil, fmt.Errorf("%s failed: %s", method, line)
	}
	return line, nil
}

// await returns the next line that matches, dropping the others.
func (c *lineClient) await(what string, d time.Duration, match func(line []byte) bool) ([]byte, error) {
	timeout := time.After(d)
	for {
		select {
		case line, ok := <-c.lines:
			if !ok {
				return nil, fmt.Errorf("connection closed while waiting for %s", what)
			}
			if match(line) {
				return line, nil
			}
		case <-timeout:
			return nil, fmt.Errorf("no %s within %s", what, d)
		}
	}
}

// drain drops the lines already received.
func (c *lineClient) drain() {
	for {
		select {
		case <-c.lines:
		default:
			return
		}
	}
}

func (c *lineClient) close() { stopChild(c.cmd, c.in) }

// listPages lists every tool of c, following nextCursor, and returns the answers.
func listPages(c *lineClient) ([][]byte, error) {
	var pages [][]byte
	params := "{}"
	for {
		line, err := c.request("tools/list", params)
		if err != nil {
			return nil, err
		}
		pages = append(pages, line)
		res, _ := rawjson.Member(line, "result")
		next, ok := rawjson.Member(res, "nextCursor")
		if !ok || string(next) == `""` {
			return pages, nil
		}
		params = `{"cursor":` + string(next) + `}`
	}
}

// toolNames returns the names of the tools in tools/list answers.
func toolNames(pages [][]byte) (map[string]bool, error) {
	names := map[string]bool{}
	for _, p := range pages {
		var page struct {
			Result struct {
				Tools []struct{ Name string } `json:"tools"`
			} `json:"result"`
		}
		if err := json.Unmarshal(p, &page); err != nil {
			return nil, fmt.Errorf("tools/list answer: %w", err)
		}
		for _, t := range page.Result.Tools {
			names[t.Name] = true
		}
	}
	return names, nil
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }
