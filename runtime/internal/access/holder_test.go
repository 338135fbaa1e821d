package access

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	// Write beside and rename, as editors do, so a reader never sees half a file.
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

const (
	fileA = `{"clients": [{"name": "a", "allow": ["x.*"]}]}`
	fileB = `{"clients": [{"name": "b", "allow": ["y.*"]}]}`
	fileC = `{"clients": [{"name": "c", "allow": ["*"]}]}`
)

func TestReloadKeepsLastGood(t *testing.T) {
	path := filepath.Join(t.TempDir(), "access.json")
	writeFile(t, path, fileA)
	var logs bytes.Buffer // Reload runs on this goroutine: no lock needed
	var changes []string
	h, err := Open(path, hclog.New(&hclog.LoggerOptions{Output: &logs}), func(p *Policy) {
		changes = append(changes, p.Clients()[0].Name)
	})
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		content string // "" removes the file
		changed bool
		bad     bool
		client  string
	}{
		{fileA, false, false, "a"},                         // unchanged
		{fileB, true, false, "b"},                          // good
		{`{"clients": [{"nme": "b"}]}`, false, true, "b"},  // bad: keeps b
		{`{"clients": [{"nme": "b"}]}`, false, false, "b"}, // same bad file: nothing new
		{"", false, true, "b"},                             // removed: keeps b
		{fileC, true, false, "c"},                          // good again
	}
	for i, s := range steps {
		if s.content == "" {
			os.Remove(path)
		} else {
			writeFile(t, path, s.content)
		}
		changed, err := h.Reload()
		if changed != s.changed || (err != nil) != s.bad {
			t.Errorf("step %d: Reload() = %v, %v; want changed %v, bad %v", i, changed, err, s.changed, s.bad)
		}
		if got := h.Policy().Clients()[0].Name; got != s.client {
			t.Errorf("step %d: policy has client %q, want %q", i, got, s.client)
		}
	}
	if strings.Join(changes, ",") != "b,c" {
		t.Errorf("onChange saw %v, want [b c]", changes)
	}
	log := logs.String()
	if n := strings.Count(log, "access file is bad; keeping the last good one"); n != 1 {
		t.Errorf("bad file logged %d times, want once:\n%s", n, log)
	}
	if !strings.Contains(log, `unknown key \"nme\" (did you mean \"name\"?)`) {
		t.Errorf("log does not say why the file is bad:\n%s", log)
	}
	if !strings.Contains(log, "cannot read the access file") {
		t.Errorf("log does not report the removed file:\n%s", log)
	}
}

func TestOpenRejectsBadFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "access.json")
	writeFile(t, path, `{"clients": []}`)
	if _, err := Open(path, nil, nil); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("Open: %v, want an error naming the file", err)
	}
	if _, err := Open(filepath.Join(t.TempDir(), "missing.json"), nil, nil); err == nil {
		t.Error("Open of a missing file succeeded")
	}
}

// TestWatch edits the file under a running watcher and waits for the policy to follow.
func TestWatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "access.json")
	writeFile(t, path, fileA)
	changed := make(chan string, 4)
	h, err := Open(path, nil, func(p *Policy) { changed <- p.Clients()[0].Name })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- h.Watch(ctx, 20*time.Millisecond) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	// The watch starts asynchronously: write again until a write is seen, within a generous
	// bound. The holder compares with what it last read, so any write of B is a change.
	deadline := time.After(10 * time.Second)
	for {
		writeFile(t, path, fileB)
		select {
		case name := <-changed:
			if name != "b" {
				t.Fatalf("reloaded to %q, want b", name)
			}
			return
		case <-time.After(200 * time.Millisecond):
		case <-deadline:
			t.Fatal("the policy never followed the file")
		}
	}
}
