// Package proc starts a bundle's process and stops it the way the MCP stdio transport asks:
// close its stdin, wait, SIGTERM, wait, SIGKILL. Each process leads its own process group
// and every signal goes to the whole group, so wrappers such as `sh -c`, `npx` or `uv run`
// cannot leave the real server behind.
package proc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Config says what to run.
type Config struct {
	// Path is the program, resolved by exec.LookPath when it has no slash.
	Path string
	// Args are the arguments after the program name.
	Args []string
	// Dir is the working directory.
	Dir string
	// Env is the whole environment of the process ("K=V").
	Env []string
	// Logger receives each line the process writes on stderr. Default: discard.
	Logger hclog.Logger
	// Grace is how long each step of Stop waits before the next. Default 3s.
	Grace time.Duration
}

// Process is a running child. Its methods are safe for concurrent use.
type Process struct {
	cmd   *exec.Cmd
	grace time.Duration

	stdin  *os.File
	stdout *os.File

	done     chan struct{} // closed once Wait has returned
	waitErr  error
	stderrWG sync.WaitGroup

	stopOnce sync.Once
	stopErr  error
}

// Start starts the process in a new process group with pipes for stdin, stdout and stderr.
func Start(cfg Config) (*Process, error) {
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.Grace <= 0 {
		cfg.Grace = 3 * time.Second
	}
	path := cfg.Path
	if !strings.ContainsRune(path, '/') {
		// Look up in the bundle's own PATH, not the node's.
		p, err := lookPath(path, cfg.Env)
		if err != nil {
			return nil, err
		}
		path = p
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("stdin pipe: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW)
		return nil, fmt.Errorf("stdout pipe: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW)
		return nil, fmt.Errorf("stderr pipe: %w", err)
	}
	cmd := exec.Command(path, cfg.Args...)
	cmd.Dir = cfg.Dir
	cmd.Env = cfg.Env
	// *os.File ends make exec hand the descriptors over as they are, without copying
	// goroutines that would tie Wait to grandchildren holding the pipes open.
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Setpgid: true,
		// If the node dies without stopping it, the bundle is told rather than orphaned.
		Pdeathsig: syscall.SIGTERM,
	}
	if err := cmd.Start(); err != nil {
		closeAll(inR, inW, outR, outW, errR, errW)
		return nil, fmt.Errorf("start %s: %w", path, err)
	}
	closeAll(inR, outW, errW)
	p := &Process{cmd: cmd, grace: cfg.Grace, stdin: inW, stdout: outR, done: make(chan struct{})}
	p.stderrWG.Add(1)
	go p.logStderr(errR, cfg.Logger)
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

func lookPath(name string, env []string) (string, error) {
	pathEnv := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathEnv = v
		}
	}
	for _, dir := range strings.Split(pathEnv, ":") {
		if dir == "" {
			continue
		}
		p := dir + "/" + name
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%q not found on the bundle's PATH (%s)", name, pathEnv)
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		f.Close()
	}
}

// Stdin is the write end of the child's stdin.
func (p *Process) Stdin() io.WriteCloser { return p.stdin }

// Stdout is the read end of the child's stdout.
func (p *Process) Stdout() io.ReadCloser { return p.stdout }

// Pid is the child's process id, which is also its process group id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Done is closed when the child has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// ExitStatus describes how the child ended ("exit status 1", "signal: killed"), or
// "running".
func (p *Process) ExitStatus() string {
	select {
	case <-p.done:
	default:
		return "running"
	}
	if p.waitErr == nil {
		return "exit status 0"
	}
	var ee *exec.ExitError
	if errors.As(p.waitErr, &ee) {
		return ee.ProcessState.String()
	}
	return p.waitErr.Error()
}

// logStderr relays the child's stderr to its logger line by line, at the level a line names
// ("[WARN] ...", "ERROR: ...") or Info.
func (p *Process) logStderr(r *os.File, log hclog.Logger) {
	defer p.stderrWG.Done()
	defer r.Close()
	br := bufio.NewReaderSize(r, 16<<10)
	for {
		line, err := br.ReadString('\n')
		if line = strings.TrimRight(line, "\r\n"); line != "" {
			level, msg := levelOf(line)
			log.Log(level, msg)
		}
		if err != nil {
			return
		}
	}
}

// Stop ends the process as the MCP stdio transport says: close its stdin and give it the
// grace period to exit; then SIGTERM to its group and another grace period; then SIGKILL.
// Whatever else is left in the group (children of a wrapper) gets the same signals, so no
// process of the bundle outlives Stop. Cancelling ctx skips to SIGKILL. Stop may be called
// many times and from many goroutines; a process that already exited is not an error.
func (p *Process) Stop(ctx context.Context) error {
	p.stopOnce.Do(func() { p.stopErr = p.stop(ctx) })
	return p.stopErr
}

func (p *Process) stop(ctx context.Context) error {
	pgid := p.Pid()
	p.stdin.Close()
	if !p.waitFor(ctx, p.grace) {
		signalGroup(pgid, syscall.SIGTERM)
		if !p.waitFor(ctx, p.grace) {
			signalGroup(pgid, syscall.SIGKILL)
			<-p.done
		}
	}
	// The leader is gone; a wrapper's children may still be there.
	if groupAlive(pgid) {
		signalGroup(pgid, syscall.SIGTERM)
		deadline := time.Now().Add(p.grace)
		for groupAlive(pgid) && time.Now().Before(deadline) && ctx.Err() == nil {
			time.Sleep(20 * time.Millisecond)
		}
		signalGroup(pgid, syscall.SIGKILL)
	}
	p.stderrWG.Wait()
	p.stdout.Close()
	return nil
}

// waitFor waits up to d for the process to exit and reports whether it did.
func (p *Process) waitFor(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.done:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}

func signalGroup(pgid int, sig syscall.Signal) { _ = syscall.Kill(-pgid, sig) }

// groupAlive reports whether a process of the group is still running. kill(-pgid, 0) alone
// would count zombies, which linger when the orphaned children of a wrapper are reparented
// to an init that does not reap them; /proc tells them apart.
func groupAlive(pgid int) bool {
	if syscall.Kill(-pgid, 0) != nil {
		return false
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	for _, e := range entries {
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// The command name may hold spaces and parentheses; the fields after the last ')'
		// are "state ppid pgrp ...".
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) >= 3 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" && f[0] != "X" {
			return true
		}
	}
	return false
}
