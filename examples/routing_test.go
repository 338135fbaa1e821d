package examples_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestTwoClientsGetOnlyTheirOwnLogs serves the C and the Python example through the node
// built from this checkout and has two clients call each bundle's sleep at the same time:
// the log line every call sends names its own duration, and each client must receive its
// own and never the other's. It holds because the SDKs tag what a call sends with the
// call's request id, which the node routes by.
func TestTwoClientsGetOnlyTheirOwnLogs(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the node; not with -short")
	}
	bundles := t.TempDir()
	for _, lang := range []string{"c", "python"} {
		if _, err := exampleCommand(lang); err != nil {
			t.Fatal(err)
		}
		dir, _ := filepath.Abs(lang)
		if err := os.Symlink(dir, filepath.Join(bundles, lang)); err != nil {
			t.Fatal(err)
		}
	}
	url := serveNode(t, "--bundles", bundles)

	var mu sync.Mutex
	logs := [2][]string{}
	var sessions [2]*mcp.ClientSession
	for i := range sessions {
		client := mcp.NewClient(&mcp.Implementation{Name: fmt.Sprintf("client-%d", i), Version: "1"}, &mcp.ClientOptions{
			LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
				mu.Lock()
				logs[i] = append(logs[i], fmt.Sprint(r.Params.Data))
				mu.Unlock()
			},
		})
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		s, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
		cancel()
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		t.Cleanup(func() { s.Close() })
		sessions[i] = s
	}
	var wg sync.WaitGroup
	for i, s := range sessions {
		for _, tool := range []string{"c.sleep", "python.sleep"} {
			wg.Go(func() {
				// Under 2026-07-28 a request gets log messages only when its _meta names a level.
				res, err := s.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"ms": 300 + i},
					Meta: mcp.Meta{"io.modelcontextprotocol/logLevel": "debug"}})
				if err != nil || res.IsError {
					t.Errorf("client %d: %s: %v %v", i, tool, err, res)
				}
			})
		}
	}
	wg.Wait()
	// A log message may trail its call's answer by a moment: wait until each client has
	// its own two, or a generous while, then check what each got.
	own := func(i int) string { return fmt.Sprintf("sleeping %d ms", 300+i) }
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		all := true
		for i := range sessions {
			all = all && strings.Count(strings.Join(logs[i], "\n"), own(i)) >= 2
		}
		mu.Unlock()
		if all {
			break
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for i := range sessions {
		own, other := own(i), fmt.Sprintf("sleeping %d ms", 301-i)
		if n := strings.Count(strings.Join(logs[i], "\n"), own); n != 2 {
			t.Errorf("client %d got its own log line %d times, want 2 (one per bundle): %q", i, n, logs[i])
		}
		for _, l := range logs[i] {
			if l == other {
				t.Errorf("client %d got the other client's log line %q", i, l)
			}
		}
	}
}

// serveNode builds the node from this checkout, runs it with the HTTP front on a free port
// and returns its URL once every bundle is ready.
func serveNode(t *testing.T, args ...string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "toolnode")
	if out, err := exec.Command("go", "build", "-o", bin, "../runtime/cmd/toolnode").CombinedOutput(); err != nil {
		t.Fatalf("building the node: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, append([]string{"serve", "--http", "127.0.0.1:0"}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	})
	found := make(chan string, 1)
	go func() {
		url, re := "", regexp.MustCompile(`url=(http://\S+/mcp)`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				url = m[1]
			}
			if url != "" && strings.Contains(sc.Text(), "node ready") {
				found <- url
				url = ""
			}
		}
	}()
	select {
	case url := <-found:
		return url
	case <-time.After(30 * time.Second):
		t.Fatal("the node did not get ready within 30 s")
	}
	return ""
}
