package front_test

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/reload"
	"github.com/toolnode/toolnode/runtime/internal/serve"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
	"github.com/toolnode/toolnode/runtime/internal/testkit/nodekit"
)

// metricLine returns the value of the series of /metrics whose name and labels begin
// with prefix, "" when there is none.
func metricLine(t *testing.T, url, prefix string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	page, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(page), "\n") {
		if rest, ok := strings.CutPrefix(line, prefix); ok {
			_, value, _ := strings.Cut(rest, "} ")
			return value
		}
	}
	return ""
}

// The bundle metrics docs/service.md lists, read where Prometheus reads them, as a bundle
// is killed, restarts and is called while it does: its state, its restarts and the calls
// that wait for it.
func TestBundleMetricsFollowAKilledBundleThroughItsRestart(t *testing.T) {
	dir := t.TempDir()
	// Its second start waits for the file "go", so that a call finds it restarting.
	folder := testkit.Write(t, dir, testkit.Fake{Name: "m",
		Prelude: `if [ -e started ]; then while [ ! -e go ]; do sleep 0.05; done; fi; touch started`})
	n := nodekit.Start(t, serve.Config{Source: reload.Source{Dirs: []string{dir}}, HTTP: nodekit.Loopback, Metrics: "127.0.0.1:0"})
	metrics := n.MetricsURL(t)
	n.Ready(t)
	state := func(s string) string {
		return metricLine(t, metrics, `toolnode_bundle_state{toolnode_bundle_name="m",toolnode_bundle_state="`+s+`"`)
	}
	restarts := func() string {
		return metricLine(t, metrics, `toolnode_bundle_restarts_total{toolnode_bundle_name="m"`)
	}
	queue := func() string { return metricLine(t, metrics, `toolnode_bundle_queue_depth{toolnode_bundle_name="m"`) }
	if got := state("ready"); got != "1" {
		t.Fatalf("toolnode_bundle_state ready = %q before the kill, want 1", got)
	}

	pid := n.Node().Status()[0].PIDs[0]
	if err := testkit.Kill(pid); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 30*time.Second, func() string {
		if got := state("restarting"); got != "1" {
			return "toolnode_bundle_state restarting = " + got
		}
		return ""
	})
	s := nodekit.Connect(t, n.URL, "", nil)
	called := make(chan string, 1)
	go func() {
		text, _ := nodekit.CallText(t, s, "m.echo", map[string]any{"text": "later"})
		called <- text
	}()
	testkit.Eventually(t, 30*time.Second, func() string {
		if got := queue(); got != "1" {
			return "toolnode_bundle_queue_depth = " + got + " while a call waits"
		}
		return ""
	})
	os.WriteFile(filepath.Join(folder, "go"), nil, 0o644)
	if got := <-called; got != "m:later" {
		t.Errorf("the call made during the restart: %q", got)
	}
	for what, got := range map[string]string{"ready": state("ready"), "restarting": state("restarting"), "restarts": restarts(), "queue": queue()} {
		want := map[string]string{"ready": "1", "restarting": "0", "restarts": "1", "queue": "0"}[what]
		if got != want {
			t.Errorf("after the restart, %s = %q, want %s", what, got, want)
		}
	}
}
