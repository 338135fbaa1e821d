package proc

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
	"go.uber.org/goleak"
)

// helperEnv makes the test binary act as a bundle instead of running the tests.
const helperEnv = "PROC_TEST_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "":
		goleak.VerifyTestMain(m)
	case "flood":
		flood()
	case "node":
		nodeHelper()
	case "lines":
		fmt.Fprint(os.Stderr, "[WARN] careful\nplain line\r\n")
		fmt.Fprint(os.Stderr, strings.Repeat("y", 100)+"\nafter\n")
		os.Exit(0)
	}
}

// flood writes PROC_TEST_BYTES of a "\r" progress bar on stderr without a single newline,
// then one short line, and exits.
func flood() {
	var total int
	fmt.Sscan(os.Getenv("PROC_TEST_BYTES"), &total)
	w := bufio.NewWriterSize(os.Stderr, 64<<10)
	for i := 0; i < total; {
		n, _ := fmt.Fprintf(w, "\r[%-50s] %3d%%", strings.Repeat("=", i*50/total), i*100/total)
		i += n
	}
	w.WriteString("\nflood over\n")
	w.Flush()
	os.Exit(0)
}

// nodeHelper is a node that starts one bundle, the shell script PROC_TEST_SCRIPT in the
// folder PROC_TEST_DIR, says "started" on stdout, and waits to be killed.
func nodeHelper() {
	p, err := Start(Config{Path: "/bin/sh", Args: []string{"-c", os.Getenv("PROC_TEST_SCRIPT")}, Dir: os.Getenv("PROC_TEST_DIR"),
		Env: []string{"PATH=" + os.Getenv("PATH")}, Grace: 200 * time.Millisecond, TrackEvery: 20 * time.Millisecond})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("started", p.Pid())
	select {}
}

// sink is a log destination that keeps what it is told, up to a bound.
type sink struct {
	mu    sync.Mutex
	buf   strings.Builder
	total int
}

func (s *sink) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.total += len(b)
	if s.buf.Len() < 1<<20 {
		s.buf.Write(b)
	}
	return len(b), nil
}

func (s *sink) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

func startHelper(t *testing.T, mode string, cfg Config, env ...string) (*Process, *sink) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out := &sink{}
	cfg.Path = exe
	cfg.Env = append([]string{helperEnv + "=" + mode, "PATH=" + os.Getenv("PATH")}, env...)
	cfg.Logger = hclog.New(&hclog.LoggerOptions{Output: out, Level: hclog.Trace})
	p, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop(context.Background()) })
	return p, out
}

func TestStderrLinesAreLoggedAtTheirLevel(t *testing.T) {
	p, out := startHelper(t, "lines", Config{StderrLineMax: 64})
	<-p.Done()
	p.Stop(context.Background())
	got := out.String()
	for _, want := range []string{
		"[WARN]  careful",
		"[INFO]  plain line\n",
		"[INFO]  " + strings.Repeat("y", 64) + ": stderr_line_cut_at=64",
		"[WARN]  dropped the rest of a stderr line too long to log: bytes=37 limit=64",
		"[INFO]  after",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("log lacks %q:\n%s", want, got)
		}
	}
}

// TestStderrFloodWithoutNewlinesStaysBounded: a bundle writing a "\r" progress bar, 256 MiB
// of it without a newline, must not grow the node by more than a few buffers. The bound is
// on the peak resident size of this process while it reads the flood.
func TestStderrFloodWithoutNewlinesStaysBounded(t *testing.T) {
	const flood = 256 << 20
	const bound = 24 << 20
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Skipf("cannot reset the peak resident size (%v): the bound could not be measured", err)
	}
	before := testkit.PeakRSSKiB(t, os.Getpid()) << 10
	p, out := startHelper(t, "flood", Config{}, fmt.Sprintf("PROC_TEST_BYTES=%d", flood))
	select {
	case <-p.Done():
	case <-time.After(2 * time.Minute):
		t.Fatal("the flooding process did not finish")
	}
	p.Stop(context.Background())
	grew := testkit.PeakRSSKiB(t, os.Getpid())<<10 - before
	t.Logf("peak resident size grew by %d KiB while reading %d MiB of stderr without a newline", grew>>10, flood>>20)
	if grew > bound {
		t.Errorf("the node grew by %d MiB, more than the bound of %d MiB", grew>>20, bound>>20)
	}
	got := out.String()
	if !strings.Contains(got, fmt.Sprintf("stderr_line_cut_at=%d", DefaultStderrLineMax)) ||
		!strings.Contains(got, "dropped the rest of a stderr line too long to log") || !strings.Contains(got, "flood over") {
		t.Errorf("the cut was not logged as such, or the line after it was lost:\n%.2000s", got)
	}
}
