package front_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/audit"
	"github.com/toolnode/toolnode/runtime/internal/front"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
)

// auditLines reads the audit log at path once it holds want lines.
func auditLines(t *testing.T, path string, want int) []map[string]any {
	t.Helper()
	var lines []map[string]any
	testkit.Eventually(t, 10*time.Second, func() string {
		lines = nil
		f, err := os.Open(path)
		if err != nil {
			return err.Error()
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				return "a line that is not JSON: " + sc.Text()
			}
			lines = append(lines, m)
		}
		if len(lines) < want {
			return "the audit log has " + itoa(len(lines)) + " lines"
		}
		return ""
	})
	return lines
}

// The audit log names the tool that ran, read as the node read it to run it, and an
// unknown tool is logged as unknown whether or not an access file is in force.
func TestAuditNamesWhatRan(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	g := startGuarded(t, func(o *front.Options) {
		log, err := audit.Open(path, audit.Config{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { log.Close() })
		o.Audit, o.Access = log, nil
	})
	c := newSessionClient(t, g.url, "")
	calls := []struct{ params, ran string }{
		{`{"name":"toolnode.execute","arguments":{"name":"pub.echo","NAME":"sec.echo","arguments":{"text":"x"}}}`, ""},
		{`{"name":"toolnode.execute","arguments":{"NAME":"sec.echo","name":"pub.echo","arguments":{"text":"x"}}}`, ""},
		{`{"name":"pub.echo","arguments":{"text":"y"}}`, "pub:y"},
		{`{"name":"pub.echo","Name":"sec.echo","arguments":{"text":"y"}}`, ""},
		{`{"name":"nosuch.tool","arguments":{}}`, ""},
	}
	for _, call := range calls {
		answer := c.request("tools/call", call.params)
		for _, ran := range []string{"pub:", "sec:"} {
			if strings.Contains(answer, ran) && !strings.HasPrefix(call.ran, ran) {
				t.Errorf("%s ran %s: %s", call.params, ran, answer)
			}
		}
		if call.ran != "" && !strings.Contains(answer, call.ran) {
			t.Errorf("%s answered %s, want %s", call.params, answer, call.ran)
		}
	}
	lines := auditLines(t, path, len(calls))
	for i, line := range lines[:len(calls)] {
		tool, _ := line["tool"].(string)
		outcome, _ := line["outcome"].(string)
		switch {
		case calls[i].ran != "" && (tool != "pub.echo" || outcome != audit.OK):
			t.Errorf("%s: logged %v, want pub.echo ok", calls[i].params, line)
		case calls[i].ran == "" && outcome == audit.OK:
			t.Errorf("%s: logged %v as ok, yet nothing ran", calls[i].params, line)
		case strings.HasPrefix(calls[i].params, `{"name":"nosuch`) && outcome != audit.UnknownTool:
			t.Errorf("%s: logged %v, want outcome %s", calls[i].params, line, audit.UnknownTool)
		}
	}
}
