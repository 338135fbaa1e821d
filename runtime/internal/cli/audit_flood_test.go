//go:build unix

package cli_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/testkit"
	"github.com/toolnode/toolnode/runtime/internal/testkit/nodekit"
)

// Calls with large arguments and results, recorded by --audit-args while the audit file's
// disk is stalled (a pipe nobody reads), cost the node at most the audit queue's bound:
// values over --audit-args-max are left out of their line, which names their size, and
// the records past the queue's bytes are dropped, which the log says in a line of its own
// once the disk takes lines again.
func TestAnAuditFloodIsBounded(t *testing.T) {
	const calls, inFlight, argBytes = 200, 4, 1 << 20
	for _, tt := range []struct {
		name string
		args []string
		// truncated: every line leaves its arguments out; else the queue's bytes drop some.
		truncated bool
	}{
		{"values over the default bound are left out", nil, true},
		{"values within a larger bound fill the queue's bytes", []string{"--audit-args-max", "4MiB"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			testkit.Write(t, dir, testkit.Fake{Name: "a"})
			fifo := filepath.Join(t.TempDir(), "audit.pipe")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			// Opened for reading first, so that the node's open for writing does not wait;
			// not read until the flood is over.
			pipe, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer pipe.Close()
			// Results whole (--max-result-bytes 0): the test measures what the audit holds,
			// not the kept results a cut would add (their bounds have tests of their own).
			h := nodekit.ChildHTTP(t, toolnode(t, append([]string{"serve", "--http", "127.0.0.1:0", "--bundles", dir, "--audit", fifo, "--audit-args", "--max-result-bytes", "0"}, tt.args...)...))
			c := nodekit.NewRawHTTP(t, h.URL)
			c.Initialize("2025-11-25", `{}`)
			before := testkit.RSSKiB(t, h.Pid())

			blob := strings.Repeat("z", argBytes)
			var wg sync.WaitGroup
			work := make(chan int)
			errs := make(chan error, calls)
			for range inFlight {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range work {
						_, err := c.Call(i, "a.echo", `{"text":"`+blob+`"}`)
						errs <- err
					}
				}()
			}
			for i := range calls {
				work <- i
			}
			close(work)
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			grew := testkit.RSSKiB(t, h.Pid()) - before
			t.Logf("%d calls of 1 MiB arguments and results, %d at a time, with the audit file stalled: the node grew by %d MiB", calls, inFlight, grew>>10)
			if testkit.MemoryChecked(t) && grew > 160<<10 {
				t.Errorf("the node grew by %d MiB", grew>>10)
			}

			// toolnode.status shows the audit queue among the node's bounds, taken when its
			// records are large (small ones all fit in the pipe and the writer's buffer).
			status, err := c.Call(calls, "toolnode.status", `{}`)
			if err != nil {
				t.Fatal(err)
			}
			var shown bool
			for _, b := range statusBounds(t, status) {
				shown = shown || b.Name == "audit.queued_bytes" && b.Used > 0 && b.Used <= b.Limit
			}
			if !shown && !tt.truncated {
				t.Errorf("toolnode.status does not show the audit queue taken: %.2000s", status)
			}

			// The disk comes back: the node writes what it kept, then stops.
			lines := make(chan []byte)
			go func() {
				defer close(lines)
				b, _ := io.ReadAll(pipe)
				lines <- b
			}()
			syscall.Kill(h.Pid(), syscall.SIGINT)
			var log []byte
			select {
			case log = <-lines:
			case <-time.After(60 * time.Second):
				t.Fatal("the node did not close its audit file")
			}
			records, dropped := 0, 0
			sc := bufio.NewScanner(bytes.NewReader(log))
			sc.Buffer(nil, 16<<20)
			for sc.Scan() {
				var line struct {
					Tool      string         `json:"tool"`
					Arguments map[string]any `json:"arguments"`
					Truncated map[string]int `json:"truncated"`
					Dropped   map[string]int `json:"dropped"`
				}
				if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
					t.Fatalf("audit line %.200s: %v", sc.Text(), err)
				}
				if line.Dropped != nil {
					dropped += line.Dropped["queue_full"]
					continue
				}
				records++
				if line.Tool == "toolnode.status" {
					continue
				}
				if tt.truncated && (line.Arguments != nil || line.Truncated["arguments"] < argBytes) {
					t.Fatalf("a line holds its 1 MiB arguments or does not say their size: truncated %v", line.Truncated)
				}
				if !tt.truncated && line.Arguments == nil {
					t.Fatalf("a line within --audit-args-max left its arguments out: truncated %v", line.Truncated)
				}
			}
			if records+dropped != calls+1 {
				t.Errorf("the audit file has %d records and says %d were dropped, of %d calls", records, dropped, calls+1)
			}
			if !tt.truncated && dropped == 0 {
				t.Errorf("no record was dropped: the queue held %d calls of 2 MiB", records)
			}
		})
	}
}
