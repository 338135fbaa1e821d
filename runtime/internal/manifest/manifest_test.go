package manifest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		json    string
		wantErr string // substring; "" means valid
	}{
		{"minimal", `{"name": "x", "command": ["./run"]}`, ""},
		{"full", `{"name": "x-1_b", "command": ["python3", "s.py"], "env": {"K": "V"}, "inherit_env": ["HOME"],
			"seats": ["node-lamp"], "timeouts": {"start": "2s", "call": "1m", "shutdown": "500ms"}}`, ""},
		{"absolute command", `{"name": "x", "command": ["/bin/cat"]}`, ""},
		{"unknown key", `{"name": "x", "command": ["./run"], "comand": 1}`, `unknown key "comand"`},
		{"missing name", `{"command": ["./run"]}`, `missing "name"`},
		{"dotted name", `{"name": "a.b", "command": ["./run"]}`, `bad name "a.b"`},
		{"missing command", `{"name": "x"}`, `missing "command"`},
		{"empty command", `{"name": "x", "command": []}`, `missing "command"`},
		{"escaping command", `{"name": "x", "command": ["./../x"]}`, "escapes the bundle directory"},
		{"relative without ./", `{"name": "x", "command": ["bin/x"]}`, "start it with ./"},
		{"bad seat", `{"name": "x", "command": ["./run"], "seats": ["a b"]}`, `bad seat "a b"`},
		{"bad duration", `{"name": "x", "command": ["./run"], "timeouts": {"start": "soon"}}`, `"soon" is not a duration`},
		{"unknown timeout", `{"name": "x", "command": ["./run"], "timeouts": {"idle": "1s"}}`, `unknown key "idle" in timeouts (known keys: start, call, call_max, shutdown)`},
		{"timeouts not an object", `{"name": "x", "command": ["./run"], "timeouts": 5}`, `key "timeouts" must be an object`},
		{"isolation client", `{"name": "x", "command": ["./run"], "isolation": "client"}`, ""},
		{"bad isolation", `{"name": "x", "command": ["./run"], "isolation": "process"}`, `isolation "process": use "shared"`},
		{"lazy with idle stop", `{"name": "x", "command": ["./run"], "start": "lazy", "idle_stop": "10m"}`, ""},
		{"eager", `{"name": "x", "command": ["./run"], "start": "eager"}`, ""},
		{"lazy per client", `{"name": "x", "command": ["./run"], "start": "lazy", "isolation": "client"}`, `do not apply with "isolation": "client"`},
		{"idle per client", `{"name": "x", "command": ["./run"], "idle_stop": "1m", "isolation": "client"}`, `do not apply with "isolation": "client"`},
		{"bad start", `{"name": "x", "command": ["./run"], "start": "later"}`, `start "later": use "eager"`},
		{"bad idle_stop", `{"name": "x", "command": ["./run"], "idle_stop": "a while"}`, `"a while" is not a duration`},
		{"idle_stop not a string", `{"name": "x", "command": ["./run"], "idle_stop": 600}`, `a duration must be a string`},
		{"unknown key near start", `{"name": "x", "command": ["./run"], "starts": "lazy"}`, `unknown key "starts"`},
		{"unknown key near featured", `{"name": "x", "command": ["./run"], "featred": ["a"]}`, `unknown key "featred" (known keys: name, command, url, headers, env, inherit_env, seats, timeouts, instances, prefix, isolation, start, idle_stop, tasks, featured, synonyms, sandbox, skills, token_exchange)`},
		{"wrong type", `{"name": "x", "command": "./run"}`, `key "command" must be an array`},
		{"not JSON", `{"name": `, "not valid JSON"},
		{"trailing data", `{"name": "x", "command": ["./run"]} {}`, "unexpected data"},
		{"empty", ``, "empty file"},
		{"synonyms", `{"name": "x", "command": ["./run"], "synonyms": "words/synonyms.txt"}`, ""},
		{"synonyms outside", `{"name": "x", "command": ["./run"], "synonyms": "../synonyms.txt"}`, `synonyms "../synonyms.txt": name a file inside`},
		{"synonyms absolute", `{"name": "x", "command": ["./run"], "synonyms": "/etc/words"}`, `synonyms "/etc/words": name a file inside`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Parse([]byte(tt.json), dir)
			if err == nil && m.Synonyms != "" && m.SynonymsPath() != filepath.Join(dir, m.Synonyms) {
				t.Errorf("SynonymsPath %q, want it under %s", m.SynonymsPath(), dir)
			}
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestDefaultsAreFilledOnParse(t *testing.T) {
	tests := []struct {
		name string
		json string
		want Timeouts
		iso  string
	}{
		{"none given", `{"name": "x", "command": ["./run"]}`,
			Timeouts{Start: DefaultStartTimeout, Call: DefaultCallTimeout, CallMax: DefaultCallMaxTimeout, Shutdown: DefaultShutdownTimeout}, IsolationShared},
		{"some given", `{"name": "x", "command": ["./run"], "timeouts": {"call": "7s", "shutdown": "1s"}, "isolation": "client"}`,
			Timeouts{Start: DefaultStartTimeout, Call: 7 * time.Second, CallMax: DefaultCallMaxTimeout, Shutdown: time.Second}, IsolationClient},
		{"call_max never below call", `{"name": "x", "command": ["./run"], "timeouts": {"call": "1h", "call_max": "1m"}}`,
			Timeouts{Start: DefaultStartTimeout, Call: time.Hour, CallMax: time.Hour, Shutdown: DefaultShutdownTimeout}, IsolationShared},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Parse([]byte(tt.json), t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			if m.Start != StartEager || m.Lazy() || m.IdleAfter() != 0 {
				t.Errorf("start %q idle %v, want %q and 0", m.Start, m.IdleAfter(), StartEager)
			}
			if m.Timeouts != tt.want || m.Isolation != tt.iso {
				t.Errorf("got %+v %q, want %+v %q", m.Timeouts, m.Isolation, tt.want, tt.iso)
			}
			// What is written back reads the same.
			b, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			again, err := Parse(b, m.Dir)
			if err != nil || again.Timeouts != m.Timeouts {
				t.Errorf("round trip of %s: %+v, %v", b, again, err)
			}
		})
	}
}

func TestCommandSymlinkOutsideIsRefused(t *testing.T) {
	dir := t.TempDir()
	if err := os.Symlink("/bin/sh", filepath.Join(dir, "run")); err != nil {
		t.Skipf("cannot make a symbolic link here: %v", err)
	}
	_, err := Parse([]byte(`{"name": "x", "command": ["./run"]}`), dir)
	if err == nil || !strings.Contains(err.Error(), "links outside the bundle directory") {
		t.Fatalf("got %v, want a refusal of the link", err)
	}
}

func TestEnviron(t *testing.T) {
	m := &Manifest{Env: map[string]string{"MINE": "1", "LANG": "C"}, InheritEnv: []string{"WANTED"}}
	node := map[string]string{"PATH": "/p", "HOME": "/h", "LANG": "en", "SECRET": "s", "WANTED": "w"}
	got := strings.Join(m.Environ(func(k string) (string, bool) { v, ok := node[k]; return v, ok }), " ")
	want := "HOME=/h LANG=C MINE=1 PATH=/p WANTED=w"
	if got != want {
		t.Errorf("environment %q, want %q", got, want)
	}
}

func TestDiscover(t *testing.T) {
	root := t.TempDir()
	write := func(sub, body string) {
		t.Helper()
		os.MkdirAll(filepath.Join(root, sub), 0o755)
		os.WriteFile(filepath.Join(root, sub, FileName), []byte(body), 0o644)
	}
	write("a", `{"name": "one", "command": ["./x"]}`)
	write("b", `{"name": "one", "command": ["./x"]}`)
	write("c", `{"name": "two", "command": ["./x"], "oops": true}`)
	write("d", `{"name": "three", "command": ["./x"]}`)
	os.MkdirAll(filepath.Join(root, "not-a-bundle"), 0o755)

	found, problems := Discover(root, filepath.Join(root, "missing"))
	var names []string
	for _, m := range found {
		names = append(names, m.Name)
	}
	if got := strings.Join(names, ","); got != "one,three" {
		t.Errorf("found %s, want one,three", got)
	}
	if len(problems) != 3 {
		t.Fatalf("got %d problems, want 3: %v", len(problems), problems)
	}
	for i, want := range []string{"read bundles folder", `"one" is already taken`, `unknown key "oops"`} {
		if !strings.Contains(problems[i].Error(), want) && !strings.Contains(problemsText(problems), want) {
			t.Errorf("problems lack %q: %v", want, problems)
		}
	}
}

func problemsText(ps []Problem) string {
	var sb strings.Builder
	for _, p := range ps {
		sb.WriteString(p.Error() + "\n")
	}
	return sb.String()
}

func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "claude_desktop_config.json")
	os.WriteFile(p, []byte(`{"mcpServers": {
		"everything": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"]},
		"files": {"command": "npx", "args": ["x"], "env": {"A": "1"}, "cwd": "sub"}}}`), 0o644)
	ms, notes, err := LoadConfig(p)
	if err != nil || len(notes) != 0 {
		t.Fatal(err, notes)
	}
	if len(ms) != 2 || ms[0].Name != "everything" || ms[1].Dir != filepath.Join(dir, "sub") || ms[1].Env["A"] != "1" {
		t.Errorf("unexpected manifests: %+v %+v", ms[0], ms[1])
	}
	if got := strings.Join(ms[0].Command, " "); got != "npx -y @modelcontextprotocol/server-everything" {
		t.Errorf("command %q", got)
	}
}

func TestDiscoverAtABundlesOwnFolderSaysWhatToPassInstead(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "hello")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, FileName), []byte(`{"name": "hello", "command": ["./x"]}`), 0o644)

	found, problems := Discover(dir)
	if len(found) != 0 || len(problems) != 1 {
		t.Fatalf("found %v, problems %v; want no bundle and one problem", found, problems)
	}
	msg := problems[0].Error()
	for _, want := range []string{"is a bundle's own folder", "--bundles " + root, "toolnode check " + dir} {
		if !strings.Contains(msg, want) {
			t.Errorf("the problem %q does not say %q", msg, want)
		}
	}
	if _, problems := Discover(root); len(problems) != 0 {
		t.Errorf("its parent, as the problem says to pass: %v", problems)
	}
}

func TestASkillsFolderStaysInsideTheBundle(t *testing.T) {
	m, err := Parse([]byte(`{"name": "x", "command": ["./run"], "skills": "skills"}`), "/b/x")
	if err != nil || m.SkillsPath() != "/b/x/skills" {
		t.Errorf("skills folder %q, %v", m.SkillsPath(), err)
	}
	for _, bad := range []string{"../elsewhere", "/etc"} {
		if _, err := Parse([]byte(`{"name": "x", "command": ["./run"], "skills": "`+bad+`"}`), "/b/x"); err == nil || !strings.Contains(err.Error(), "inside the bundle's directory") {
			t.Errorf("skills %q: %v", bad, err)
		}
	}
}
