package testkit

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// What a test asks of processes it cannot be told about: whether one has ended, which run
// with a mark in their environment. Linux's /proc answers; elsewhere the tests that ask are
// skipped.

// Mark returns an environment variable, as NAME and VALUE, unique to this call: given to
// the bundles of a test, it finds their processes and every process they start.
func Mark(t testing.TB) (name, value string) {
	t.Helper()
	return "TOOLNODE_MARK", fmt.Sprintf("%d-%s", time.Now().UnixNano(), strings.NewReplacer("/", "-", " ", "-").Replace(t.Name()))
}

// Marked lists the live processes whose environment holds name=value (a zombie has ended
// already and is not listed).
func Marked(name, value string) []int {
	entries, _ := os.ReadDir("/proc")
	mark := []byte(name + "=" + value + "\x00")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err == nil && bytes.Contains(env, mark) && Alive(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// Alive reports whether pid is a running process: not gone, not a zombie.
func Alive(pid int) bool {
	st, ok := state(pid)
	return ok && st != "Z"
}

// Exited reports whether process pid ends (or is left a zombie) within d.
func Exited(pid int, within time.Duration) bool {
	return Until(within, func() bool { return !Alive(pid) })
}

// Reaped reports whether process pid is gone from /proc within d: ended and waited for,
// not even a zombie.
func Reaped(pid int, within time.Duration) bool {
	return Until(within, func() bool {
		_, err := os.Stat("/proc/" + strconv.Itoa(pid))
		return err != nil
	})
}

// state reads the state of process pid ("R", "S", "Z" for a zombie...).
func state(pid int) (string, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", false
	}
	i := bytes.LastIndexByte(b, ')') // the name before it may hold anything
	if i < 0 {
		return "", false
	}
	fields := strings.Fields(string(b[i+1:])) // state, ppid, ...
	if len(fields) == 0 {
		return "", false
	}
	return fields[0], true
}

// PidFile waits until the file at path holds n whitespace-separated pids, as a script
// appends them, and returns the nth.
func PidFile(t testing.TB, path string, n int) int {
	t.Helper()
	var pids []string
	Eventually(t, 10*time.Second, func() string {
		b, _ := os.ReadFile(path)
		if pids = strings.Fields(string(b)); len(pids) < n || !bytes.HasSuffix(b, []byte("\n")) {
			return fmt.Sprintf("%s holds %d pids, want %d", path, len(pids), n)
		}
		return ""
	})
	pid, err := strconv.Atoi(pids[n-1])
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return pid
}

// MemoryChecked reports whether a test holds a process to a bound on its memory: not under
// the race detector, which multiplies what a process holds, as the test's log then says.
func MemoryChecked(t testing.TB) bool {
	t.Helper()
	if RaceDetector {
		t.Log("memory not checked: the race detector multiplies what the node holds")
	}
	return !RaceDetector
}

// Kill ends process pid at once (SIGKILL on Unix).
func Kill(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}
