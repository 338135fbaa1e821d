package skills_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/toolnode/toolnode/sdk-go/bundle"

	"github.com/toolnode/toolnode/runtime/internal/reload"
	"github.com/toolnode/toolnode/runtime/internal/serve"
	"github.com/toolnode/toolnode/runtime/internal/skills"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
	"github.com/toolnode/toolnode/runtime/internal/testkit/nodekit"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// Skills through a node: a bundle's skills folder served by the node, listed, got and read
// by clients of both eras; an access file's denied bundle's skills neither listed nor
// readable; the audit log's records of them.

func TestMain(m *testing.M) {
	testkit.RunIfChild()
	if dir := os.Getenv(goBundleEnv); dir != "" {
		serveGoBundle(dir)
		return
	}
	goleak.VerifyTestMain(m, testkit.KeptAliveConns()...)
}

// goBundleEnv, set to a skill's folder, makes the test binary a bundle of the Go SDK
// serving that skill as acme/<folder's name>, and a tool.
const goBundleEnv = "SKILLS_TEST_GO_BUNDLE"

// serveGoBundle serves the Go SDK bundle of goBundleEnv on stdin and stdout.
func serveGoBundle(dir string) {
	s := bundle.NewServer(bundle.Options{Name: "skilled-go"})
	err := s.AddTool(mcp.Tool{Name: "noop", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *bundle.Call) (*mcp.CallToolResult, error) { return mcp.TextResult("ok"), nil })
	if err == nil {
		err = s.AddSkill("acme/"+filepath.Base(dir), os.DirFS(dir))
	}
	if err == nil {
		err = s.ServeStdio(context.Background())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// answer is a JSON-RPC answer.
type answer struct {
	Result json.RawMessage
	Error  *nodekit.WireError
}

// client speaks to a node's HTTP front as a 2026-07-28 client, statelessly.
type client struct{ raw *nodekit.RawHTTP }

// newClient is a client of the node at url, with token when it is not "".
func newClient(t *testing.T, url, token string) client {
	c := client{nodekit.NewRawHTTP(t, url)}
	c.raw.Token = token
	return c
}

// do sends method with params and returns the answer.
func (c client) do(method string, params map[string]any) answer {
	res, err := c.raw.Stateless(method, params)
	return answer{res, err}
}

// writeSkill writes a skill folder name under dir/skills with SKILL.md's body and more
// files (relative path → content).
func writeSkill(t *testing.T, dir, name, description string, files map[string]string) {
	t.Helper()
	base := filepath.Join(dir, "skills", name)
	all := map[string]string{skills.SkillFile: fmt.Sprintf("---\nname: %s\ndescription: %s\nlicense: MIT\nmetadata:\n  version: \"1.2\"\n---\n\n# %s\n\nRead references/guide.md.\n", name, description, name)}
	for k, v := range files {
		all[k] = v
	}
	for rel, body := range all {
		p := filepath.Join(base, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// entries reads the skills of a skills/list or skills/get result.
func entries(t *testing.T, a answer) []skills.Entry {
	t.Helper()
	if a.Error != nil {
		t.Fatalf("error %d: %s", a.Error.Code, a.Error.Message)
	}
	var r struct {
		Skills []skills.Entry `json:"skills"`
		Skill  *skills.Entry  `json:"skill"`
		TTL    *int           `json:"ttlMs"`
	}
	if err := json.Unmarshal(a.Result, &r); err != nil {
		t.Fatal(err)
	}
	if r.TTL == nil {
		t.Errorf("a 2026-07-28 skills result without ttlMs: %s", a.Result)
	}
	if r.Skill != nil {
		return []skills.Entry{*r.Skill}
	}
	return r.Skills
}

func TestAFileShippedSkillIsListedGotAndReadThroughTheNode(t *testing.T) {
	dir := t.TempDir()
	bundle := testkit.Write(t, dir, testkit.Fake{Name: "docs", Extra: `"skills": "skills"`})
	writeSkill(t, bundle, "trip-report", "Summarise a trip from its positions.", map[string]string{
		"references/guide.md": "# Guide\n",
		"data/sample.bin":     "\x00\x01\xff",
		".hidden":             "not part of the skill",
	})
	writeSkill(t, bundle, "Bad_Name", "refused for its name", nil)
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	n := nodekit.Start(t, serve.Config{Source: reload.Source{Dirs: []string{dir}}, HTTP: nodekit.Loopback, AuditFile: audit})
	n.Ready(t)
	c := newClient(t, n.URL, "")

	disc := c.do(mcp.MethodDiscover, nil)
	if !strings.Contains(string(disc.Result), `"`+mcp.ExtensionSkills+`"`) || !strings.Contains(string(disc.Result), `"resources"`) {
		t.Errorf("server/discover declares no skills extension with resources:\n%s", disc.Result)
	}
	list := entries(t, c.do(mcp.MethodSkillsList, nil))
	if len(list) != 1 || list[0].URI != "skill://docs/trip-report/SKILL.md" {
		t.Fatalf("skills/list: %+v", list)
	}
	n.Logs.WaitFor(t, 5*time.Second, "Bad_Name")
	var fm map[string]any
	json.Unmarshal(list[0].Frontmatter, &fm)
	if fm["name"] != "trip-report" || fm["license"] != "MIT" || fmt.Sprint(fm["metadata"]) != "map[version:1.2]" {
		t.Errorf("frontmatter %v, want every field as written", fm)
	}
	var files []skills.Resource
	json.Unmarshal(list[0].Resources, &files)
	got := entries(t, c.do(mcp.MethodSkillsGet, map[string]any{"uri": list[0].URI}))
	if len(got) != 1 || string(got[0].Resources) != string(list[0].Resources) {
		t.Errorf("skills/get %+v differs from the listed entry", got)
	}
	if len(files) != 3 {
		t.Fatalf("resources %+v, want SKILL.md, the guide and the binary (no hidden file)", files)
	}
	for _, f := range files {
		a := c.do(mcp.MethodResourcesRead, map[string]any{"uri": f.URI})
		var r struct {
			Contents []struct {
				URI, MimeType, Text string
				Blob                []byte
			}
		}
		if a.Error != nil || json.Unmarshal(a.Result, &r) != nil || len(r.Contents) != 1 || r.Contents[0].URI != f.URI {
			t.Fatalf("resources/read %s: %+v %s", f.URI, a.Error, a.Result)
		}
		body := []byte(r.Contents[0].Text)
		if r.Contents[0].Blob != nil {
			body = r.Contents[0].Blob
		}
		if skills.Digest(body) != f.Digest || int64(len(body)) != f.Size {
			t.Errorf("%s: read %d bytes of %s, listed %d of %s", f.URI, len(body), skills.Digest(body), f.Size, f.Digest)
		}
	}
	if a := c.do(mcp.MethodSkillsGet, map[string]any{"uri": "skill://docs/nothing/SKILL.md"}); a.Error == nil || a.Error.Code != mcp.CodeInvalidParams {
		t.Errorf("skills/get of no skill: %+v, want -32602", a.Error)
	}
	if a := c.do(mcp.MethodResourcesRead, map[string]any{"uri": "skill://docs/trip-report/.hidden"}); a.Error == nil {
		t.Errorf("a hidden file of the folder was read: %s", a.Result)
	}

	t.Run("the events extension is not served yet, as docs/protocol.md says", func(t *testing.T) {
		for _, m := range []string{"events/list", "events/poll"} {
			if a := c.do(m, nil); a.Error == nil || a.Error.Code != mcp.CodeMethodNotFound {
				t.Errorf("%s: %s %+v, want -32601", m, a.Result, a.Error)
			}
		}
		if strings.Contains(string(disc.Result), "io.modelcontextprotocol/events") {
			t.Errorf("server/discover declares events:\n%s", disc.Result)
		}
	})

	t.Run("a session client of 2025-11-25 gets the same", func(t *testing.T) {
		raw := nodekit.NewRawHTTP(t, n.URL)
		raw.Initialize("2025-11-25", `{}`)
		msg := nodekit.Message(raw.Post(`{"jsonrpc":"2.0","id":7,"method":"skills/list","params":{}}`, "application/json, text/event-stream"))
		if !strings.Contains(string(msg), `"skill://docs/trip-report/SKILL.md"`) {
			t.Errorf("skills/list in a session: %s", msg)
		}
	})

	t.Run("the audit log records each get and read", func(t *testing.T) {
		testkit.Eventually(t, 5*time.Second, func() string {
			b, _ := os.ReadFile(audit)
			if n := strings.Count(string(b), `"skill":"skill://docs/trip-report/`); n < 5 {
				return fmt.Sprintf("%d skill records:\n%s", n, b)
			}
			return ""
		})
	})
}

func TestADeniedBundlesSkillsAreNeitherListedNorReadable(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"open", "secret"} {
		b := testkit.Write(t, dir, testkit.Fake{Name: name, Extra: `"skills": "skills"`})
		writeSkill(t, b, name+"-howto", "How to use "+name+".", nil)
	}
	access := filepath.Join(t.TempDir(), "access.json")
	os.WriteFile(access, []byte(fmt.Sprintf(`{"clients": [{"name": "limited", "token_sha256": %q, "allow": ["*"], "deny": ["secret.*"]},
		{"name": "all", "token_sha256": %q, "allow": ["*"]}]}`, testkit.TokenSHA("lim"), testkit.TokenSHA("all"))), 0o600)
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	n := nodekit.Start(t, serve.Config{Source: reload.Source{Dirs: []string{dir}}, HTTP: nodekit.Loopback, AccessFile: access, AuditFile: audit})
	n.Ready(t)
	limited, all := newClient(t, n.URL, "lim"), newClient(t, n.URL, "all")
	secret := "skill://secret/secret-howto/SKILL.md"

	if got := entries(t, all.do(mcp.MethodSkillsList, nil)); len(got) != 2 {
		t.Fatalf("the client allowed everything lists %+v", got)
	}
	got := entries(t, limited.do(mcp.MethodSkillsList, nil))
	if len(got) != 1 || got[0].URI != "skill://open/open-howto/SKILL.md" {
		t.Errorf("the limited client lists %+v, want open's skill only", got)
	}
	if a := limited.do(mcp.MethodSkillsGet, map[string]any{"uri": secret}); a.Error == nil || a.Error.Code != mcp.CodeInvalidParams {
		t.Errorf("skills/get of a denied skill: %s %+v, want -32602 as for no skill", a.Result, a.Error)
	}
	if a := limited.do(mcp.MethodResourcesRead, map[string]any{"uri": secret}); a.Error == nil || a.Error.Code != mcp.CodeInvalidParams {
		t.Errorf("resources/read of a denied skill's file: %s %+v, want -32602 as for no resource", a.Result, a.Error)
	}
	if a := all.do(mcp.MethodResourcesRead, map[string]any{"uri": secret}); a.Error != nil {
		t.Errorf("the client allowed it cannot read it: %+v", a.Error)
	}
	testkit.Eventually(t, 5*time.Second, func() string {
		b, _ := os.ReadFile(audit)
		for _, want := range []string{`"client":"limited","tool":"skills/get","outcome":"forbidden"`, `"client":"limited","tool":"resources/read","outcome":"forbidden"`,
			`"client":"all","tool":"resources/read","bundle":"secret","outcome":"ok"`} {
			if !strings.Contains(string(b), want) {
				return "no audit record " + want + " in:\n" + string(b)
			}
		}
		return ""
	})
}

func TestASkillOfAGoSDKBundleIsListedGotAndReadThroughTheNode(t *testing.T) {
	dir := t.TempDir()
	exe, _ := os.Executable()
	folder := filepath.Join(dir, "skilled")
	writeSkill(t, folder, "refunds", "Process refund requests per policy.", map[string]string{"examples/email.md": "Dear customer,\n"})
	manifest, _ := json.Marshal(map[string]any{"name": "skilled", "command": []string{exe},
		"env": map[string]string{goBundleEnv: filepath.Join(folder, "skills", "refunds")}, "skills": "skills"})
	os.WriteFile(filepath.Join(folder, "bundle.json"), manifest, 0o644)
	n := nodekit.Start(t, serve.Config{Source: reload.Source{Dirs: []string{dir}}, HTTP: nodekit.Loopback})
	n.Ready(t)
	c := newClient(t, n.URL, "")

	list := entries(t, c.do(mcp.MethodSkillsList, nil))
	if len(list) != 1 || list[0].URI != "skill://skilled/acme/refunds/SKILL.md" {
		t.Fatalf("skills/list: %+v, want the SDK's skill under the bundle's name", list)
	}
	n.Logs.WaitFor(t, 5*time.Second, "its server serves skills, so the node does not serve those of its skills folder")
	got := entries(t, c.do(mcp.MethodSkillsGet, map[string]any{"uri": list[0].URI}))
	var files []skills.Resource
	json.Unmarshal(got[0].Resources, &files)
	if len(files) != 2 || files[1].URI != "skill://skilled/acme/refunds/examples/email.md" {
		t.Fatalf("skills/get resources %+v", files)
	}
	for _, f := range files {
		a := c.do(mcp.MethodResourcesRead, map[string]any{"uri": f.URI})
		var r struct{ Contents []struct{ URI, Text string } }
		if a.Error != nil || json.Unmarshal(a.Result, &r) != nil || len(r.Contents) != 1 {
			t.Fatalf("resources/read %s: %+v %s", f.URI, a.Error, a.Result)
		}
		if r.Contents[0].URI != f.URI || skills.Digest([]byte(r.Contents[0].Text)) != f.Digest {
			t.Errorf("%s: read back as %s with digest %s, listed %s", f.URI, r.Contents[0].URI, skills.Digest([]byte(r.Contents[0].Text)), f.Digest)
		}
	}
	var fm map[string]any
	json.Unmarshal(got[0].Frontmatter, &fm)
	if fm["name"] != "refunds" || fmt.Sprint(fm["metadata"]) != "map[version:1.2]" {
		t.Errorf("the SDK's frontmatter %v", fm)
	}
}
