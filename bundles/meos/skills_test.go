package meos_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"path"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// stateless sends method with params to the node at url as a 2026-07-28 client does, and
// returns the answer's result, or fails the test with its error.
func stateless(t *testing.T, url, method string, params map[string]any) json.RawMessage {
	t.Helper()
	p := map[string]any{"_meta": map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": map[string]any{}}}
	for k, v := range params {
		p[k] = v
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": p})
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json",
		"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method} {
		req.Header.Set(k, v)
	}
	if name, ok := params["name"].(string); ok {
		req.Header.Set("Mcp-Name", name)
	} else if uri, ok := params["uri"].(string); ok && method == "resources/read" {
		req.Header.Set("Mcp-Name", uri)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var a struct {
		Result json.RawMessage
		Error  json.RawMessage
	}
	if err := json.Unmarshal(raw, &a); err != nil || a.Result == nil {
		t.Fatalf("%s: %s: %s", method, resp.Status, raw)
	}
	return a.Result
}

// entry is a skill's entry; file one of its files.
type (
	entry struct {
		URI       string `json:"uri"`
		Resources []file `json:"resources"`
	}
	file struct{ URI, Digest string }
)

// programAnswers are the values the programs of the trajectory-analysis skill give on the
// data they hold.
var programAnswers = map[string]string{
	"summary.star": `{"bus 1": {"length": 500, "seconds": 600, "average_speed": 0.8333333333333334, "box": [0, 0, 300, 400]},
		"tram": {"length": 800, "seconds": 7200, "average_speed": 0.1111111111111111, "box": [0, 500, 800, 500]}}`,
	"stops.star":      `{"taxi": [], "van": [{"from": "2025-01-01T08:01:00Z", "to": "2025-01-01T08:11:00Z", "seconds": 600, "where": "POINT(100 0)"}]}`,
	"encounters.star": `[{"pair": ["ship a", "ship b"], "distance": 100}]`,
}

// TestTheSkillsProgramsRunAsTheNodeServesThem: the MEOS bundle ships the skill
// trajectory-analysis as files (bundle.json "skills"); a client lists it, gets its entry,
// reads each program through the node, checks it against the entry's digest, and runs it
// with toolnode.run: each gives its documented answer.
func TestTheSkillsProgramsRunAsTheNodeServesThem(t *testing.T) {
	url, logs := startHTTP(t, bundleNode(t, "--http", "127.0.0.1:0", "--names", "canonical"))
	const uri = "skill://meos/trajectory-analysis/SKILL.md"
	if res := stateless(t, url, "skills/list", nil); !strings.Contains(string(res), `"`+uri+`"`) {
		t.Fatalf("skills/list: %s\n%s", res, logs)
	}
	var got struct{ Skill entry }
	if err := json.Unmarshal(stateless(t, url, "skills/get", map[string]any{"uri": uri}), &got); err != nil {
		t.Fatal(err)
	}
	read := func(f file) string {
		var r struct{ Contents []struct{ Text string } }
		if json.Unmarshal(stateless(t, url, "resources/read", map[string]any{"uri": f.URI}), &r) != nil || len(r.Contents) != 1 {
			t.Fatalf("resources/read %s: %+v", f.URI, r)
		}
		sum := sha256.Sum256([]byte(r.Contents[0].Text))
		if d := "sha256:" + hex.EncodeToString(sum[:]); d != f.Digest {
			t.Errorf("%s: digest %s, the entry says %s", f.URI, d, f.Digest)
		}
		return r.Contents[0].Text
	}
	skillMD := ""
	ran := 0
	for _, f := range got.Skill.Resources {
		text := read(f)
		name := path.Base(f.URI)
		if name == "SKILL.md" {
			skillMD = text
			continue
		}
		want, ok := programAnswers[name]
		if !ok {
			t.Errorf("%s: a file of the skill no answer here is given for", f.URI)
			continue
		}
		ran++
		res := stateless(t, url, "tools/call", map[string]any{"name": "toolnode.run", "arguments": map[string]any{"code": text}})
		var out struct {
			IsError           bool `json:"isError"`
			StructuredContent struct {
				Value any `json:"value"`
				Error any `json:"error"`
			} `json:"structuredContent"`
		}
		if json.Unmarshal(res, &out) != nil || out.IsError {
			t.Errorf("%s: %s", name, res)
			continue
		}
		var w any
		json.Unmarshal([]byte(want), &w)
		if d := cmp.Diff(w, out.StructuredContent.Value, cmpopts.EquateApprox(0, 1e-9)); d != "" {
			t.Errorf("%s answered (-want +got):\n%s", name, d)
		}
	}
	if ran != len(programAnswers) {
		t.Errorf("%d programs ran, want %d", ran, len(programAnswers))
	}
	for name := range programAnswers {
		if !strings.Contains(skillMD, "`programs/"+name+"`") {
			t.Errorf("SKILL.md does not tell of programs/%s", name)
		}
	}
}
