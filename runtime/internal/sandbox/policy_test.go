package sandbox_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolnode/toolnode/runtime/internal/sandbox"
)

func TestPolicyReadsTheSandboxObjectOfBundleJSON(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want sandbox.Policy
	}{
		{`{"memory": "512MiB"}`, sandbox.Policy{Memory: 512 << 20}},
		{`{"memory": "1.5GiB", "cpu": 1.5, "pids": 64, "files": 256}`, sandbox.Policy{Memory: 3 << 29, CPU: 1.5, Pids: 64, Files: 256}},
		{`{"memory": "100MB"}`, sandbox.Policy{Memory: 100e6}},
		{`{"memory": 67108864}`, sandbox.Policy{Memory: 64 << 20}},
		{`{"network": "none", "require": true}`, sandbox.Policy{Network: "none", Require: true}},
		{`{"read": []}`, sandbox.Policy{Read: []string{}}},
		{`{"write": ["state", "/var/tmp/x"]}`, sandbox.Policy{Write: []string{"state", "/var/tmp/x"}}},
	} {
		var got sandbox.Policy
		if err := json.Unmarshal([]byte(tc.in), &got); err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", tc.in, d)
		}
	}
}

func TestPolicyRefusesWhatItCannotMeanNamingTheKey(t *testing.T) {
	for in, want := range map[string]string{
		`{"memroy": "1GiB"}`:     `unknown field "memroy"`,
		`{"memory": "lots"}`:     `memory: "lots" is not a size`,
		`{"memory": "1MiB"}`:     "below the 4 MiB",
		`{"memory": true}`:       "neither a size",
		`{"cpu": -1}`:            "cpu -1",
		`{"network": "private"}`: `network "private": use "host" or "none"`,
		`{"pids": -3}`:           "pids must not be negative",
		`{"read": [""]}`:         "must not be empty",
	} {
		var p sandbox.Policy
		err := json.Unmarshal([]byte(in), &p)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want an error with %q", in, err, want)
		}
	}
}

func TestPolicyWritesBackWhatItRead(t *testing.T) {
	in := sandbox.Policy{Memory: 512 << 20, CPU: 0.5, Network: "none", Read: []string{"data"}, Write: []string{}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"memory":"512MiB"`) {
		t.Errorf("memory written as %s", b)
	}
	var out sandbox.Policy
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(in, out); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestProfilesAreOffAndStandard(t *testing.T) {
	if p, err := sandbox.Profile("off"); err != nil || !p.Zero() {
		t.Errorf("off: %+v %v", p, err)
	}
	if p, err := sandbox.Profile("standard"); err != nil || p.Zero() || !p.ConfinesFiles() || p.Memory == 0 {
		t.Errorf("standard: %+v %v", p, err)
	}
	if _, err := sandbox.Profile("strict"); err == nil || !strings.Contains(err.Error(), "use off or standard") {
		t.Errorf("strict: %v", err)
	}
}

func TestDescribeSaysWhatIsNotEnforced(t *testing.T) {
	e := sandbox.Enforcement{Memory: "cgroup v1", Files: "rlimit"}
	p := sandbox.Policy{Memory: 64 << 20, Network: "none", Require: true}
	if got, want := e.Describe(p), "memory 64 MiB (cgroup v1), network none (NOT ENFORCED on this machine)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := e.Unenforced(p); len(got) != 1 || got[0] != "network" {
		t.Errorf("unenforced: %v", got)
	}
	if err := e.RequireError(p); err == nil || !strings.Contains(err.Error(), "requires network") {
		t.Errorf("require: %v", err)
	}
	if e.Describe(sandbox.Policy{}) != "off" {
		t.Errorf("zero policy: %q", e.Describe(sandbox.Policy{}))
	}
}

func TestPathsAddTheInstallationACommandRunsFromButNoHome(t *testing.T) {
	p := sandbox.Policy{Read: []string{"data"}, Write: []string{"/var/tmp/x"}}
	read, write := p.Paths("/srv/b", "/opt/pyenv/shims/python3")
	for _, want := range []string{"/srv/b/data", "/srv/b", "/opt/pyenv/shims/python3", "/opt/pyenv", "/usr"} {
		if !slices.Contains(read, want) {
			t.Errorf("read %v lacks %s", read, want)
		}
	}
	if !slices.Contains(write, "/var/tmp/x") || slices.Contains(write, "/srv/b") {
		t.Errorf("write %v", write)
	}
	for _, prog := range []string{"/home/ada/bin/tool", "/root/bin/tool", "/usr/local/bin/node"} {
		read, _ := p.Paths("/srv/b", prog)
		for _, bad := range []string{"/home/ada", "/root", "/usr/local"} {
			if slices.Contains(read, bad) {
				t.Errorf("%s: read %v holds %s", prog, read, bad)
			}
		}
	}
	if r, w := (sandbox.Policy{}).Paths("/srv/b", "/bin/sh"); r != nil || w != nil {
		t.Errorf("files not confined, yet paths %v %v", r, w)
	}
}
