package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"
	"go.uber.org/goleak"

	"github.com/toolnode/toolnode/runtime/internal/testkit"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// lines parses the log's lines: the records of calls, and the sum of the drop lines'
// counts by reason.
func lines(t *testing.T, s string) (records []map[string]any, dropped map[string]uint64) {
	t.Helper()
	dropped = map[string]uint64{}
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q is not JSON: %v", sc.Text(), err)
		}
		d, isDrop := m["dropped"].(map[string]any)
		switch {
		case isDrop && m["tool"] == nil:
			for reason, n := range d {
				dropped[reason] += uint64(n.(float64))
			}
		case m["tool"] != nil:
			records = append(records, m)
		default:
			t.Fatalf("line %s is neither a call nor a drop line", sc.Text())
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return records, dropped
}

// total sums counts.
func total(counts map[string]uint64) uint64 {
	var n uint64
	for _, c := range counts {
		n += c
	}
	return n
}

var call = Record{
	Time:      time.Date(2026, 12, 1, 4, 0, 0, 0, time.UTC),
	Client:    "analyst",
	Tool:      "meos.speed",
	Via:       "toolnode.execute",
	Bundle:    "meos",
	Outcome:   OK,
	Duration:  1500 * time.Microsecond,
	Arguments: json.RawMessage(`{"point": "secret"}`),
	Result:    json.RawMessage(`{"content": []}`),
}

func TestLine(t *testing.T) {
	for _, tt := range []struct {
		name string
		args bool
		want map[string]any
	}{
		{"without arguments", false, map[string]any{
			"time": "2026-12-01T04:00:00Z", "client": "analyst", "tool": "meos.speed", "via": "toolnode.execute",
			"bundle": "meos", "outcome": "ok", "duration_ms": 1.5}},
		{"with arguments", true, map[string]any{
			"time": "2026-12-01T04:00:00Z", "client": "analyst", "tool": "meos.speed", "via": "toolnode.execute",
			"bundle": "meos", "outcome": "ok", "duration_ms": 1.5,
			"arguments": map[string]any{"point": "secret"}, "result": map[string]any{"content": []any{}}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var buf testkit.SyncBuffer
			l := New(&buf, nil, Config{Args: tt.args})
			l.Record(call)
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			got, _ := lines(t, buf.String())
			if diff := cmp.Diff([]map[string]any{tt.want}, got); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBadArgumentsKeepTheLine(t *testing.T) {
	var buf testkit.SyncBuffer
	l := New(&buf, nil, Config{Args: true})
	r := call
	r.Arguments = json.RawMessage(`{not json`)
	l.Record(r)
	l.Close()
	got, _ := lines(t, buf.String())
	if len(got) != 1 || got[0]["arguments"] != nil || got[0]["tool"] != "meos.speed" {
		t.Errorf("lines: %v, want the call without its arguments", got)
	}
}

func TestConcurrent(t *testing.T) {
	var buf testkit.SyncBuffer
	l := New(&buf, nil, Config{Buffer: 64})
	const writers, each = 8, 500
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				r := call
				r.Client = string(rune('a' + w))
				r.Duration = time.Duration(i) * time.Millisecond
				l.Record(r)
			}
		}()
	}
	wg.Wait()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	got, dropped := lines(t, buf.String())
	if uint64(len(got)) != l.Written() || l.Written()+l.Dropped() != writers*each {
		t.Errorf("%d lines, written %d, dropped %d; want lines = written and written + dropped = %d",
			len(got), l.Written(), l.Dropped(), writers*each)
	}
	if total(dropped) != l.Dropped() || dropped[DroppedQueueFull] != l.Dropped() {
		t.Errorf("the drop lines say %v, want %d queue_full", dropped, l.Dropped())
	}
}

// gate is a writer that blocks until opened, as a stalled disk does.
type gate struct {
	open chan struct{}
	buf  testkit.SyncBuffer
}

func (g *gate) Write(p []byte) (int, error) {
	<-g.open
	return g.buf.Write(p)
}

func TestFullBufferDropsWithoutBlocking(t *testing.T) {
	g := &gate{open: make(chan struct{})}
	var logs testkit.SyncBuffer
	l := New(g, nil, Config{Buffer: 4, DropReport: time.Millisecond,
		Log: hclog.New(&hclog.LoggerOptions{Output: &logs})})
	const total = 1000
	recorded := make(chan struct{})
	go func() {
		defer close(recorded)
		for range total {
			l.Record(call)
		}
	}()
	select {
	case <-recorded:
	case <-time.After(30 * time.Second):
		close(g.open)
		t.Fatal("Record blocked on a stalled writer")
	}
	if l.Dropped() == 0 {
		t.Error("nothing dropped with a stalled writer and a buffer of 4")
	}
	close(g.open)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if l.Written()+l.Dropped() != total {
		t.Errorf("written %d + dropped %d != %d", l.Written(), l.Dropped(), total)
	}
	records, dropped := lines(t, g.buf.String())
	if got := uint64(len(records)); got != l.Written() {
		t.Errorf("%d lines, %d written", got, l.Written())
	}
	if want := map[string]uint64{DroppedQueueFull: l.Dropped()}; !cmp.Equal(dropped, want) {
		t.Errorf("the drop lines say %v, want %v", dropped, want)
	}
	if !strings.Contains(logs.String(), "audit records dropped") {
		t.Errorf("drops not logged:\n%s", logs.String())
	}
}

// flaky fails its writes while broken is set.
type flaky struct {
	mu     sync.Mutex
	broken bool
	buf    bytes.Buffer
}

func (f *flaky) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.broken {
		return 0, errors.New("no space left on device")
	}
	return f.buf.Write(p)
}

func (f *flaky) set(broken bool) {
	f.mu.Lock()
	f.broken = broken
	f.mu.Unlock()
}

func TestWriteErrorsRecover(t *testing.T) {
	f := &flaky{broken: true}
	var logs testkit.SyncBuffer
	l := New(f, nil, Config{Log: hclog.New(&hclog.LoggerOptions{Output: &logs})})
	wait := func(what string, done func() bool) {
		t.Helper()
		testkit.Eventually(t, 30*time.Second, func() string {
			if !done() {
				return fmt.Sprintf("never %s; log:\n%s", what, logs.String())
			}
			return ""
		})
	}
	for range 3 {
		l.Record(call)
	}
	wait("dropped the 3 lines the disk refused", func() bool { return l.Dropped() == 3 })
	f.set(false)
	l.Record(call)
	wait("wrote after the disk recovered", func() bool { return l.Written() == 1 })
	l.Close()
	for _, s := range []string{"cannot write the audit log", "the audit log is being written again"} {
		if n := strings.Count(logs.String(), s); n != 1 {
			t.Errorf("%q logged %d times, want once:\n%s", s, n, logs.String())
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	records, dropped := lines(t, f.buf.String())
	if len(records) != 1 {
		t.Errorf("%d lines after recovery, want 1", len(records))
	}
	if want := map[string]uint64{DroppedWriteError: 3}; !cmp.Equal(dropped, want) {
		t.Errorf("after recovery the log says %v were dropped, want %v", dropped, want)
	}
}

func TestOpenAndClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	for i := range 2 {
		l, err := Open(path, Config{})
		if err != nil {
			t.Fatal(err)
		}
		l.Record(call)
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		if err := l.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
		l.Record(call) // after Close: dropped, not a panic
		if l.Dropped() != 1 {
			t.Errorf("round %d: dropped %d after Close, want 1", i, l.Dropped())
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := lines(t, string(b)); len(got) != 2 {
		t.Errorf("%d lines, want 2 (the file is appended to)", len(got))
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	if _, err := Open(filepath.Join(path, "not-a-dir", "x"), Config{}); err == nil {
		t.Error("Open under a file succeeded")
	}
}

// BenchmarkRecord is what a call pays for its audit line, from many goroutines at once.
func BenchmarkRecord(b *testing.B) {
	l := New(io.Discard, nil, Config{})
	defer l.Close()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			l.Record(call)
		}
	})
}

// BenchmarkLine is the writer's cost of one line: calls arriving faster than it writes
// are dropped, by design, rather than slowed.
func BenchmarkLine(b *testing.B) {
	l := New(io.Discard, nil, Config{})
	defer l.Close()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		l.write(call)
		if l.pending == 64 {
			l.flush()
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}
