package examples_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// langs are the example bundles, each a directory beside this file.
var langs = []string{"go", "c", "python"}

// buildErrs holds, by language, why TestMain could not build an example.
var buildErrs = map[string]error{}

func TestMain(m *testing.M) {
	build := map[string][]string{
		"go": {"go", "build", "-o", "go/build/example-go", "./go"},
		"c":  {"make", "-C", "c"},
	}
	for lang, argv := range build {
		if _, err := os.Stat(filepath.Join(lang, "bundle.json")); err != nil {
			continue // reported by the tests, with how to fix it
		}
		if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
			buildErrs[lang] = fmt.Errorf("%s: %v\n%s", strings.Join(argv, " "), err, out)
		}
	}
	os.Exit(m.Run())
}

// howToBuild says how to get an example ready to run.
func howToBuild(lang string) string {
	if lang == "go" {
		return "build it with `make` or `go build -o examples/go/build/example-go ./examples/go`"
	}
	return fmt.Sprintf("build it with `make` or `make -C examples/%s`", lang)
}

// manifest is the part of bundle.json that starting the bundle needs.
type manifest struct {
	Command []string          `json:"command"`
	Env     map[string]string `json:"env"`
}

// exampleCommand returns the command that runs an example bundle, as its bundle.json says:
// command[0] is relative to the bundle directory when it starts with ./, else found on PATH.
func exampleCommand(lang string) (*exec.Cmd, error) {
	if err := buildErrs[lang]; err != nil {
		return nil, fmt.Errorf("building the %s example failed:\n%v", lang, err)
	}
	dir, err := filepath.Abs(lang)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(filepath.Join(dir, "bundle.json"))
	if err != nil {
		return nil, fmt.Errorf("the %s example is missing (%v): %s", lang, err, howToBuild(lang))
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil || len(m.Command) == 0 {
		return nil, fmt.Errorf("examples/%s/bundle.json has no command (%v)", lang, err)
	}
	prog := m.Command[0]
	if strings.HasPrefix(prog, "./") {
		prog = filepath.Join(dir, prog)
		if _, err := os.Stat(prog); err != nil {
			return nil, fmt.Errorf("%v: %s", err, howToBuild(lang))
		}
	} else if prog, err = exec.LookPath(prog); err != nil {
		return nil, err
	}
	args := m.Command[1:]
	// The C SDK's tests run its example under valgrind this way.
	if wrap := strings.Fields(os.Getenv("EXAMPLE_C_WRAPPER")); lang == "c" && len(wrap) > 0 {
		args = append(append(wrap[1:], prog), args...)
		prog = wrap[0]
	}
	cmd := exec.Command(prog, args...)
	cmd.Dir = dir
	cmd.Env = os.Environ()
	for k, v := range m.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	return cmd, nil
}

func TestVectors(t *testing.T) {
	files, err := filepath.Glob("../testdata/vectors/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no vectors under testdata/vectors (%v)", err)
	}
	for _, lang := range langs {
		t.Run(lang, func(t *testing.T) {
			t.Parallel()
			if _, err := exampleCommand(lang); err != nil {
				t.Fatal(err)
			}
			for _, file := range files {
				name := strings.TrimSuffix(filepath.Base(file), ".json")
				t.Run(name, func(t *testing.T) {
					readVector(t, file).run(t, startBundle(t, lang))
				})
			}
		})
	}
}

// syncBuffer collects a child's stderr while the test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// bundleProc is a running example bundle and the messages it sent that no step took yet.
type bundleProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *syncBuffer
	hint   string      // how to build the bundle, for when it does not start
	lines  chan []byte // stdout, line by line; closed at its end
	ended  bool        // lines is closed
	inbox  []map[string]any
}

const exitTimeout = 10 * time.Second

// startBundle starts an example with pipes; the test's cleanup stops it if the case did not.
func startBundle(t *testing.T, lang string) *bundleProc {
	t.Helper()
	cmd, err := exampleCommand(lang)
	if err != nil {
		t.Fatal(err)
	}
	p := &bundleProc{t: t, cmd: cmd, stderr: &syncBuffer{}, hint: howToBuild(lang), lines: make(chan []byte, 64)}
	cmd.Stderr = p.stderr
	cmd.WaitDelay = time.Second
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", cmd.Path, err)
	}
	go func() {
		defer close(p.lines)
		r := bufio.NewReader(stdout)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				p.lines <- line
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			p.cmd.Process.Kill()
			for range p.lines {
			}
			p.cmd.Wait()
		}
		if t.Failed() && p.stderr.String() != "" {
			t.Logf("stderr of %s:\n%s", filepath.Base(cmd.Path), p.stderr.String())
		}
	})
	return p
}

func (p *bundleProc) send(line []byte) {
	p.t.Helper()
	if _, err := p.stdin.Write(append(line, '\n')); err != nil {
		p.t.Fatalf("writing to the bundle: %v", err)
	}
}

// recv returns the next message, or false at the deadline or when stdout has ended.
func (p *bundleProc) recv(deadline time.Time) (map[string]any, bool) {
	p.t.Helper()
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	for !p.ended {
		select {
		case line, ok := <-p.lines:
			if !ok {
				p.ended = true
				break
			}
			var m map[string]any
			if err := json.Unmarshal(line, &m); err != nil {
				p.t.Errorf("stdout line is not a JSON object: %q", line)
				continue
			}
			return m, true
		case <-timer.C:
			return nil, false
		}
	}
	return nil, false
}

// finish closes stdin, as a client ending the session does, and checks that the bundle
// exits cleanly without answers nobody expected.
func (p *bundleProc) finish() {
	p.t.Helper()
	p.stdin.Close()
	deadline := time.Now().Add(exitTimeout * slowdown())
	for {
		m, ok := p.recv(deadline)
		if !ok {
			break
		}
		p.inbox = append(p.inbox, m)
	}
	if !p.ended {
		p.t.Errorf("the bundle did not close stdout within %v of the end of its input", exitTimeout)
		p.cmd.Process.Kill()
	}
	for _, m := range p.inbox {
		if _, isAnswer := m["id"]; isAnswer && m["method"] == nil {
			p.t.Errorf("answer that no step expected: %v", m)
		}
	}
	if err := p.cmd.Wait(); err != nil {
		p.t.Errorf("the bundle exited with %v", err)
	}
}
