package scaffold

import (
	"bytes"
	"context"
	"encoding/json"
	"go/format"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/manifest"
)

// repoRoot is the toolnode checkout the scaffolds build against.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// need skips the test when a program it runs is not installed.
func need(t *testing.T, programs ...string) {
	t.Helper()
	for _, p := range programs {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("not tried: %s is not installed", p)
		}
	}
}

// needC builds the C SDK when its library is missing.
func needC(t *testing.T, root string) {
	t.Helper()
	need(t, "cc")
	if _, err := os.Stat(filepath.Join(root, "sdk-c", "build", "libtn.a")); err == nil {
		return
	}
	if out, err := exec.Command("make", "-C", filepath.Join(root, "sdk-c")).CombinedOutput(); err != nil {
		t.Fatalf("build the C SDK: %v\n%s", err, out)
	}
}

// run runs a command with a deadline and returns its combined output, failing the test on
// error.
func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

type answer struct {
	ID     int             `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// exchange starts the bundle in dir the way its manifest says, over pipes, sends it lines,
// closes its stdin and returns its answers by id. Every stdout line must be JSON-RPC.
func exchange(t *testing.T, dir string, lines ...string) map[int]answer {
	t.Helper()
	m, err := manifest.Load(filepath.Join(dir, manifest.FileName))
	if err != nil {
		t.Fatalf("the generated manifest does not load: %v", err)
	}
	prog, err := m.Program()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, prog, m.Command[1:]...)
	cmd.Dir = m.Dir
	cmd.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("bundle %s: %v\nstderr:\n%s", m.Name, err, stderr.String())
	}
	answers := map[int]answer{}
	for _, line := range strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n") {
		var a answer
		if err := json.Unmarshal([]byte(line), &a); err != nil {
			t.Fatalf("bundle %s wrote a stdout line that is not JSON: %q", m.Name, line)
		}
		answers[a.ID] = a
	}
	return answers
}

func callLine(id int, tool string, args any) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": args}})
	return string(b)
}

// resultText is the text of a tools/call answer, failing on an error or a tool error.
func resultText(t *testing.T, a answer) string {
	t.Helper()
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if a.Error != nil {
		t.Fatalf("call %d answered error %q", a.ID, a.Error.Message)
	}
	if err := json.Unmarshal(a.Result, &r); err != nil || len(r.Content) == 0 || r.IsError {
		t.Fatalf("call %d answered %s", a.ID, a.Result)
	}
	return r.Content[0].Text
}

func TestCreateBuildsAndServes(t *testing.T) {
	root := repoRoot(t)
	for _, tc := range []struct {
		lang, name, seat string
	}{
		{"go", "hello-go", ""},
		{"go", "-lamp_go", "node-lamp"}, // a leading dash is a valid bundle name, not a Go path
		{"c", "hello-c", ""},
		{"c", "lamp_c", "node-lamp"},
		{"python", "hello-py", ""},
		{"python", "lamp_py", "node-lamp"},
	} {
		t.Run(tc.lang+"/"+tc.name, func(t *testing.T) {
			need(t, "make")
			switch tc.lang {
			case "c":
				needC(t, root)
			case "python":
				need(t, "python3")
			}
			parent := t.TempDir()
			dir, err := Create(Options{Lang: tc.lang, Name: tc.name, Seat: tc.seat, Dir: parent, SDKRoot: root})
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(parent, tc.name); dir != want {
				t.Errorf("Create returned %s, want %s", dir, want)
			}
			for _, f := range []string{"bundle.json", "Makefile", "README.md"} {
				if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
					t.Error(err)
				}
			}
			gofmtClean(t, dir)
			readme, _ := os.ReadFile(filepath.Join(dir, "README.md"))
			if want := "toolnode serve --bundles " + parent; !strings.Contains(string(readme), want) {
				t.Errorf("README.md does not say %q:\n%s", want, readme)
			}

			if out := run(t, "make", "-C", dir); strings.Contains(out, "warning:") {
				t.Errorf("make warned:\n%s", out)
			}
			run(t, "make", "-C", dir, "test")
			if tc.lang == "go" {
				goListDepsOwnOnly(t, dir)
			}

			answers := exchange(t, dir,
				`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"scaffold-test","version":"0"}}}`,
				`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
				`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
				callLine(3, "hello", map[string]string{"name": "x"}),
				callLine(4, tc.seat+".on", map[string]string{}),
			)
			var init struct {
				ServerInfo struct{ Name string } `json:"serverInfo"`
			}
			if err := json.Unmarshal(answers[1].Result, &init); err != nil || init.ServerInfo.Name != tc.name {
				t.Errorf("initialize answered %s, want serverInfo.name %q", answers[1].Result, tc.name)
			}
			var list struct{ Tools []struct{ Name string } }
			if err := json.Unmarshal(answers[2].Result, &list); err != nil {
				t.Fatalf("tools/list answered %s", answers[2].Result)
			}
			var names []string
			for _, tool := range list.Tools {
				names = append(names, tool.Name)
			}
			want := []string{"hello"}
			if tc.seat != "" {
				want = append(want, tc.seat+".on")
			}
			if !slices.Equal(names, want) {
				t.Errorf("tools/list names %q, want %q", names, want)
			}
			if got := resultText(t, answers[3]); !strings.Contains(got, "x") {
				t.Errorf("hello answered %q, want a text holding the name x", got)
			}
			if tc.seat == "" {
				// ".on" is no tool of a bundle without a seat.
				if answers[4].Error == nil {
					t.Errorf("calling .on answered %s, want an error", answers[4].Result)
				}
			} else if got := resultText(t, answers[4]); got != tc.seat+" is on" {
				t.Errorf("%s.on answered %q", tc.seat, got)
			}
		})
	}
}

func TestCreateRefuses(t *testing.T) {
	root := repoRoot(t)
	parent := t.TempDir()
	if err := os.MkdirAll(filepath.Join(parent, "taken", "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(parent, "afile"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ok := Options{Lang: "python", Name: "fine", Dir: parent, SDKRoot: root}
	for _, tc := range []struct {
		what string
		edit func(*Options)
		want string
	}{
		{"unknown language", func(o *Options) { o.Lang = "rust" }, `unknown language "rust"`},
		{"templates folder as language", func(o *Options) { o.Lang = "common" }, `unknown language "common"`},
		{"empty name", func(o *Options) { o.Name = "" }, `bad bundle name ""`},
		{"dotted name", func(o *Options) { o.Name = "a.b" }, `bad bundle name "a.b"`},
		{"name with a slash", func(o *Options) { o.Name = "../up" }, `bad bundle name "../up"`},
		{"name too long", func(o *Options) { o.Name = strings.Repeat("n", 65) }, "bad bundle name"},
		{"dotted seat", func(o *Options) { o.Seat = "lamp.on" }, `bad seat "lamp.on"`},
		{"relative SDK root", func(o *Options) { o.SDKRoot = "../.." }, "absolute path"},
		{"SDK root with a space", func(o *Options) { o.SDKRoot = "/opt/tool node" }, `because of " "`},
		{"SDK root without the SDK", func(o *Options) { o.SDKRoot = parent }, "has no Python SDK"},
		{"Go without go.mod", func(o *Options) { o.Lang, o.SDKRoot = "go", fakeGoRoot(t) }, "go.mod"},
		{"existing folder", func(o *Options) { o.Name = "taken" }, "already exists and is not empty"},
		{"existing file", func(o *Options) { o.Name = "afile" }, "already exists and is not a folder"},
	} {
		t.Run(tc.what, func(t *testing.T) {
			opts := ok
			tc.edit(&opts)
			dir, err := Create(opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Create(%+v) = %q, %v; want an error with %q", opts, dir, err, tc.want)
			}
		})
	}
	entries, err := os.ReadDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 {
		t.Errorf("refused calls left files behind: %v", entries)
	}
	if entries, _ := os.ReadDir(filepath.Join(parent, "taken")); len(entries) != 1 {
		t.Errorf("the existing folder was changed: %v", entries)
	}
}

// gofmtClean fails the test for each Go file in dir that gofmt would change.
func gofmtClean(t *testing.T, dir string) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if out, err := format.Source(src); err != nil || !bytes.Equal(out, src) {
			t.Errorf("%s is not gofmt-clean (%v)", filepath.Base(f), err)
		}
	}
}

// goListDepsOwnOnly checks that a Go bundle builds on the SDK module alone: nothing of the
// node (its NATS, OpenTelemetry and OIDC dependencies among them) is in its build.
func goListDepsOwnOnly(t *testing.T, dir string) {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", ".")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), sdkModule+"/bundle\n") {
		t.Errorf("go list -deps does not name %s/bundle:\n%s", sdkModule, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, bad := range []string{"github.com/nats-io/", "go.opentelemetry.io/", "github.com/coreos/go-oidc", "github.com/toolnode/toolnode/runtime"} {
			if strings.HasPrefix(pkg, bad) {
				t.Errorf("a Go bundle builds with %s", pkg)
			}
		}
	}
}

// fakeGoRoot is a folder with the Go SDK's directory but no go.mod.
func fakeGoRoot(t *testing.T) string {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "sdk-go", "bundle"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestCreateIntoEmptyFolder(t *testing.T) {
	parent := t.TempDir()
	if err := os.Mkdir(filepath.Join(parent, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	dir, err := Create(Options{Lang: "c", Name: "empty", Dir: parent, SDKRoot: repoRoot(t)})
	if err != nil {
		t.Fatalf("an empty folder should be filled: %v", err)
	}
	m, err := manifest.Load(filepath.Join(dir, manifest.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "empty" || !slices.Equal(m.Command, []string{"./build/empty"}) || len(m.Seats) != 0 {
		t.Errorf("manifest %+v", m)
	}
}
