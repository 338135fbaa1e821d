package audit

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"

	"github.com/toolnode/toolnode/runtime/internal/testkit"
)

// Values over MaxValue are left out of the line, a tool name over MaxToolBytes is cut at a
// character, and the line says what was cut and how large it was.
func TestLargeValuesAreLeftOutAndSaidSo(t *testing.T) {
	big := json.RawMessage(`{"blob":"` + strings.Repeat("x", 200) + `"}`)
	small := json.RawMessage(`{"content":[]}`)
	long := strings.Repeat("a", MaxToolBytes-1) + "é" + "tail" // é straddles the cut
	for _, tt := range []struct {
		name      string
		rec       Record
		want      map[string]any
		truncated map[string]any
	}{
		{"arguments over the bound", Record{Tool: "t", Arguments: big, Result: small},
			map[string]any{"result": map[string]any{"content": []any{}}},
			map[string]any{"arguments": float64(len(big))}},
		{"result over the bound", Record{Tool: "t", Arguments: small, Result: big},
			map[string]any{"arguments": map[string]any{"content": []any{}}},
			map[string]any{"result": float64(len(big))}},
		{"both within", Record{Tool: "t", Arguments: small, Result: small},
			map[string]any{"arguments": map[string]any{"content": []any{}}, "result": map[string]any{"content": []any{}}},
			nil},
		{"a long tool name", Record{Tool: long},
			map[string]any{"tool": strings.Repeat("a", MaxToolBytes-1)},
			map[string]any{"tool": float64(len(long))}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var buf testkit.SyncBuffer
			l := New(&buf, nil, Config{Args: true, MaxValue: 100})
			l.Record(tt.rec)
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			got, _ := lines(t, buf.String())
			if len(got) != 1 {
				t.Fatalf("%d lines, want 1", len(got))
			}
			for k, v := range tt.want {
				if diff := cmp.Diff(v, got[0][k]); diff != "" {
					t.Errorf("%s (-want +got):\n%s", k, diff)
				}
			}
			if tt.truncated == nil {
				if got[0]["truncated"] != nil {
					t.Errorf("truncated %v, want none", got[0]["truncated"])
				}
				return
			}
			if diff := cmp.Diff(tt.truncated, got[0]["truncated"]); diff != "" {
				t.Errorf("truncated (-want +got):\n%s", diff)
			}
			if _, left := got[0]["arguments"]; left && tt.truncated["arguments"] != nil {
				t.Error("arguments over the bound were written")
			}
		})
	}
}

// The queue holds copies of what it writes: a small value of a large message does not keep
// the message, and a caller reusing its buffer does not change the line.
func TestRecordCopiesTheValues(t *testing.T) {
	g := &gate{open: make(chan struct{})}
	l := New(g, nil, Config{Args: true})
	args := []byte(`{"a":1}`)
	l.Record(Record{Tool: "t", Arguments: args})
	copy(args, `{"b":2}`)
	close(g.open)
	l.Close()
	got, _ := lines(t, g.buf.String())
	if len(got) != 1 || !cmp.Equal(got[0]["arguments"], map[string]any{"a": float64(1)}) {
		t.Errorf("line %v, want the arguments as recorded", got)
	}
}

// heapMiB is the live heap after a collection.
func heapMiB() float64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return float64(ms.HeapAlloc) / (1 << 20)
}

// Calls with large arguments and results, recorded while the disk is stalled, cost the
// log at most its queue's bytes: the rest is dropped, and the log says how many once the
// disk takes lines again.
func TestTheQueueIsBoundedInBytes(t *testing.T) {
	const calls, value = 100, 1 << 20
	g := &gate{open: make(chan struct{})}
	cfg := Config{Args: true, MaxValue: 2 * value, QueueBytes: 8 << 20, DropReport: time.Hour}
	l := New(g, nil, cfg)
	before := heapMiB()
	for i := range calls {
		// A buffer per call, as each request and answer has its own.
		args := []byte(fmt.Sprintf(`{"n":%d,"blob":"%s"}`, i, strings.Repeat("a", value)))
		res := []byte(fmt.Sprintf(`{"n":%d,"blob":"%s"}`, i, strings.Repeat("r", value)))
		l.Record(Record{Tool: "t", Arguments: args, Result: res})
		if q := l.Queued(); q > 4*(4*value+recordOverhead+MaxToolBytes) {
			t.Fatalf("%d bytes queued after %d calls, over the bound", q, i+1)
		}
	}
	grew := heapMiB() - before
	// The bound here is four records of two 2 MiB values: 16 MiB.
	if grew > 24 {
		t.Errorf("%d calls of %d KiB arguments and results held %.0f MiB while the disk stalled", calls, value>>10, grew)
	}
	close(g.open)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	records, dropped := lines(t, g.buf.String())
	if l.Dropped() == 0 || uint64(len(records))+l.Dropped() != calls {
		t.Errorf("%d lines and %d dropped of %d calls", len(records), l.Dropped(), calls)
	}
	if want := map[string]uint64{DroppedQueueFull: l.Dropped()}; !cmp.Equal(dropped, want) {
		t.Errorf("the drop lines say %v, want %v", dropped, want)
	}
}

// The file is rotated before a line would take it past MaxSize: FILE.1 is the newest of
// the old ones, and no more than Keep are kept; every line is whole, none is lost but the
// ones in files past Keep, and the removal is logged.
func TestRotation(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	var logs testkit.SyncBuffer
	const maxSize, keep, calls = 2048, 2, 100
	l, err := Open(path, Config{MaxSize: maxSize, Keep: keep, Log: hclog.New(&hclog.LoggerOptions{Output: &logs})})
	if err != nil {
		t.Fatal(err)
	}
	for i := range calls {
		r := call
		r.Client = fmt.Sprintf("c%03d", i)
		l.Record(r)
		if i%10 == 9 {
			// Let the writer take them, so none is dropped: this test is about files.
			testkit.Eventually(t, 10*time.Second, func() string {
				if l.Written() < uint64(i+1) {
					return fmt.Sprintf("%d written of %d", l.Written(), i+1)
				}
				return ""
			})
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{"audit.jsonl", "audit.jsonl.1", "audit.jsonl.2"}; !cmp.Equal(names, want) {
		t.Fatalf("files %v, want %v", names, want)
	}
	var clients []string
	for _, name := range []string{"audit.jsonl.2", "audit.jsonl.1", "audit.jsonl"} {
		p := filepath.Join(dir, name)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > maxSize || len(b) == 0 {
			t.Errorf("%s has %d bytes, want 1 to %d", name, len(b), maxSize)
		}
		if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", name, fi.Mode().Perm())
		}
		records, dropped := lines(t, string(b))
		if len(dropped) > 0 {
			t.Errorf("%s says %v were dropped", name, dropped)
		}
		for _, r := range records {
			clients = append(clients, r["client"].(string))
		}
	}
	// The files hold the last calls, in order, with none missing.
	if len(clients) == 0 || len(clients) >= calls {
		t.Fatalf("%d calls in the files, want fewer than %d (older files are removed)", len(clients), calls)
	}
	first := calls - len(clients)
	for i, c := range clients {
		if want := fmt.Sprintf("c%03d", first+i); c != want {
			t.Fatalf("call %d in the files is %s, want %s", i, c, want)
		}
	}
	if !strings.Contains(logs.String(), "audit file removed by rotation") {
		t.Errorf("the removal of the oldest file is not logged:\n%s", logs.String())
	}
}

// A line larger than MaxSize goes into a file of its own rather than being lost.
func TestALineLargerThanTheFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	l, err := Open(path, Config{Args: true, MaxSize: 100, Keep: 3})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		l.Record(call)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"audit.jsonl", "audit.jsonl.1", "audit.jsonl.2"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if records, _ := lines(t, string(b)); len(records) != 1 {
			t.Errorf("%s holds %d lines, want 1", name, len(records))
		}
	}
}

func TestQueueBytesDefaults(t *testing.T) {
	floor := func(value int64) int64 { return 4 * (2*value + recordOverhead + MaxToolBytes) }
	for _, tt := range []struct {
		name string
		cfg  Config
		want int64
	}{
		{"default", Config{}, DefaultQueueBytes},
		{"set", Config{QueueBytes: 64 << 20}, 64 << 20},
		{"below four records of the default values", Config{QueueBytes: 1}, floor(DefaultMaxValue)},
		{"below four records of large values", Config{MaxValue: 8 << 20}, floor(8 << 20)},
	} {
		l := New(io.Discard, nil, tt.cfg)
		if got := l.QueueBytes(); got != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, got, tt.want)
		}
		l.Close()
	}
}
