package cli_test

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/testkit"
	"github.com/toolnode/toolnode/runtime/internal/testkit/nodekit"
)

// TestStderrFloodDoesNotGrowTheNode: a bundle writes 256 MiB of "\r" to stderr without a
// newline, as a progress bar does (its own log lines may cut in), then one newline. The
// node's peak resident size stays under 128 MiB (it held the whole line before: over 256
// MiB), it logs the cut, and the bundle keeps answering. The peak is the most memory a
// process ever held, so the node is the binary, in a process of its own.
func TestStderrFloodDoesNotGrowTheNode(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the node's peak resident size is read from /proc")
	}
	const bound = 128 << 20
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "flood", Prelude: "(head -c 268435456 /dev/zero | tr '\\000' '\\r'; echo; echo flood over) >&2 &"})
	session, run := nodekit.ChildStdio(t, toolnode(t, "serve", "--bundles", dir), "", nil)
	// stderr is read in order: once this line is logged, the whole flood was read.
	run.Logs.WaitFor(t, 60*time.Second, "toolnode.flood: flood over")
	peak := testkit.PeakRSSKiB(t, run.Pid()) << 10
	t.Logf("node peak resident size after 256 MiB of stderr without a newline: %d MiB", peak>>20)
	if testkit.MemoryChecked(t) && peak > bound {
		t.Errorf("the node's peak resident size is %d MiB, over the bound of %d MiB", peak>>20, bound>>20)
	}
	if got, _ := nodekit.CallText(t, session, "flood.echo", map[string]any{"text": "still here"}); got != "flood:still here" {
		t.Errorf("flood.echo answered %q", got)
	}
	logs := run.Logs.String()
	if !strings.Contains(logs, "stderr_line_cut_at=65536") || !strings.Contains(logs, "dropped the rest of a stderr line too long to log") {
		t.Error("the cut line was not logged as cut")
	}
}
