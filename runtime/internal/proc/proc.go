// Package proc starts a bundle's process and stops it the way the MCP stdio transport asks:
// close its stdin, wait, SIGTERM, wait, SIGKILL. Each process leads its own process group
// and every signal goes to the whole group, so wrappers such as `sh -c`, `npx` or `uv run`
// cannot leave the real server behind. Each process's descendants are followed too, so that
// a daemon that left the group (`setsid`) is stopped with its bundle: on Linux the node is a
// child subreaper that orphans come back to, and reaps them (family_linux.go), and where it
// may, starts each process in a cgroup of its own that nothing leaves (cgroup_linux.go); on macOS
// orphans go to launchd, and the node finds them in the process table by the tag they
// inherited (family_unix.go). If the node dies without stopping its bundles, Linux sends
// each bundle process SIGTERM (the parent-death signal); macOS has no such signal, and a
// watchdog process stops their groups instead (watchdog_unix.go). Elsewhere the group is
// what is stopped.
//
// The macOS supervision builds on Linux too, with the build tag toolnode_darwin_proc: its
// process table is then read from /proc instead of sysctl(3), and everything else is the
// code macOS runs, so that the test suites run against it here.
package proc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/toolnode/toolnode/runtime/internal/sandbox"
)

// TagVar names the variable that marks every process of one bundle process's family. A
// daemon the bundle starts inherits it, which tells it apart once it has left both the
// bundle's process tree and its group.
const TagVar = "TOOLNODE_PROCESS_TAG"

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
	// StderrLineMax bounds a stderr line: the first StderrLineMax bytes of a longer one are
	// logged, marked as cut, and the rest of it is dropped and counted, so a bundle that
	// never writes a newline (a "\r" progress bar) cannot grow the node. Default 64 KiB.
	StderrLineMax int
	// Sandbox bounds what the process may take and touch (package sandbox); nil or a zero
	// Policy for none. A setting this machine cannot enforce is left out (Confined says
	// which), unless the Policy requires it: then Start refuses.
	Sandbox *sandbox.Policy
	// TrackEvery is how often the process's descendants are looked for (and those that
	// were orphaned and exited, reaped), where the platform can. Default 2s.
	TrackEvery time.Duration
}

// DefaultStderrLineMax is the default of Config.StderrLineMax: far above any log line a
// person reads, small enough to hold for every process of a large node.
const DefaultStderrLineMax = 64 << 10

// Process is a running child. Its methods are safe for concurrent use.
type Process struct {
	cmd   *exec.Cmd
	grace time.Duration

	stdin  *os.File
	stdout *os.File

	done     chan struct{} // closed once Wait has returned
	waitErr  error
	stderrIn chan struct{} // closed once stderr has been read to its end

	tailMu sync.Mutex
	tail   []string // the last StderrTailLines lines of stderr, oldest first

	stopOnce sync.Once
	stopErr  error

	fam *family // the process's descendants, as far as the platform can follow them

	confined *sandbox.Confined // the process's sandbox, nil without one
	cause    string            // why the process ended, where its sandbox knows; set before done
}

// Start starts the process in a new process group with pipes for stdin, stdout and stderr.
func Start(cfg Config) (*Process, error) {
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.Grace <= 0 {
		cfg.Grace = 3 * time.Second
	}
	if cfg.StderrLineMax <= 0 {
		cfg.StderrLineMax = DefaultStderrLineMax
	}
	if cfg.TrackEvery <= 0 {
		cfg.TrackEvery = 2 * time.Second
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
	fam, env, err := newFamily(cfg.Env, cfg.Grace)
	if err != nil {
		closeAll(inR, inW, outR, outW, errR, errW)
		return nil, err
	}
	var confined *sandbox.Confined
	if cfg.Sandbox != nil && !cfg.Sandbox.Zero() {
		confined, err = sandbox.Confine(*cfg.Sandbox, path, cfg.Dir, fam.cgroupDir())
		if err != nil {
			fam.unplace()
			closeAll(inR, inW, outR, outW, errR, errW)
			return nil, fmt.Errorf("start %s: %w", path, err)
		}
	}
	command := func(placed bool) (*exec.Cmd, error) {
		cmd := exec.Command(path, cfg.Args...)
		cmd.Dir = cfg.Dir
		cmd.Env = env
		// *os.File ends make exec hand the descriptors over as they are, without copying
		// goroutines that would tie Wait to grandchildren holding the pipes open.
		cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
		cmd.SysProcAttr = sysProcAttr()
		if placed {
			fam.place(cmd.SysProcAttr)
		}
		if confined != nil {
			return cmd, confined.Apply(cmd)
		}
		return cmd, nil
	}
	cmd, err := command(true)
	if err == nil {
		err = cmd.Start()
		if err != nil && fam.unplace() {
			// A kernel that cannot start a process in a cgroup: started as elsewhere.
			if cmd, err = command(false); err == nil {
				err = cmd.Start()
			}
		}
	}
	if err != nil {
		fam.unplace()
		confined.Close()
		closeAll(inR, inW, outR, outW, errR, errW)
		return nil, fmt.Errorf("start %s: %w", path, err)
	}
	closeAll(inR, outW, errW)
	p := &Process{cmd: cmd, grace: cfg.Grace, stdin: inW, stdout: outR, done: make(chan struct{}), stderrIn: make(chan struct{}), fam: fam, confined: confined}
	fam.follow(cmd.Process.Pid, cfg.TrackEvery)
	go p.logStderr(errR, cfg.Logger, cfg.StderrLineMax)
	go func() {
		p.waitErr = cmd.Wait()
		p.cause = confined.Ended() // read before Stop removes the cgroups
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
	status := "exit status 0"
	var ee *exec.ExitError
	switch {
	case p.waitErr == nil:
	case errors.As(p.waitErr, &ee):
		status = ee.ProcessState.String()
	default:
		status = p.waitErr.Error()
	}
	if p.cause != "" {
		return p.cause + ", " + status
	}
	return status
}

// Cause says why the process ended where its sandbox knows ("killed at its memory bound of
// 512 MiB"), once it has; else "".
func (p *Process) Cause() string {
	select {
	case <-p.done:
		return p.cause
	default:
		return ""
	}
}

// Sandbox is what enforces the process's sandbox here, nil without one.
func (p *Process) Sandbox() *sandbox.Confined { return p.confined }

// logStderr relays the child's stderr to its logger line by line, at the level a line names
// ("[WARN] ...", "ERROR: ...") or Info. A line longer than max is logged cut, and the rest
// of it dropped and counted: the reader's buffer is all the memory a line ever takes.
func (p *Process) logStderr(r io.ReadCloser, log hclog.Logger, max int) {
	defer close(p.stderrIn)
	defer r.Close()
	br := bufio.NewReaderSize(r, max)
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			level, msg := levelOf(string(line))
			log.Log(level, msg, "stderr_line_cut_at", len(line))
			p.keep(string(line))
			dropped := 0
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = br.ReadSlice('\n')
				dropped += len(line)
			}
			log.Warn("dropped the rest of a stderr line too long to log", "bytes", dropped, "limit", max)
		} else if text := strings.TrimRight(string(line), "\r\n"); text != "" {
			level, msg := levelOf(text)
			log.Log(level, msg)
			p.keep(text)
		}
		if err != nil {
			return
		}
	}
}

// StderrTailLines is how many of its last stderr lines a Process keeps for StderrTail.
const StderrTailLines = 5

// stderrTailLineMax bounds each line kept for StderrTail.
const stderrTailLineMax = 500

// keep remembers line among the last StderrTailLines lines of stderr.
func (p *Process) keep(line string) {
	if len(line) > stderrTailLineMax {
		line = line[:stderrTailLineMax] + "..."
	}
	p.tailMu.Lock()
	p.tail = append(p.tail, line)
	if len(p.tail) > StderrTailLines {
		p.tail = p.tail[len(p.tail)-StderrTailLines:]
	}
	p.tailMu.Unlock()
}

// StderrTail returns the last lines (at most StderrTailLines) the process wrote on stderr,
// oldest first: what says why a process that exited at once failed (a Python traceback, the
// dynamic loader's "cannot open shared object file"). Once the process has exited it waits
// a moment for the rest of stderr, which a grandchild holding the pipe may keep open.
func (p *Process) StderrTail() []string {
	select {
	case <-p.done:
		t := time.NewTimer(200 * time.Millisecond)
		select {
		case <-p.stderrIn:
		case <-t.C:
		}
		t.Stop()
	default:
	}
	p.tailMu.Lock()
	defer p.tailMu.Unlock()
	return append([]string(nil), p.tail...)
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
	defer p.confined.Close() // after the family's cgroup: what the sandbox made goes last
	defer p.fam.close()
	p.stdin.Close()
	if !p.waitFor(ctx, p.grace) {
		p.fam.signal(syscall.SIGTERM)
		if !p.waitFor(ctx, p.grace) {
			p.fam.signal(syscall.SIGKILL)
			<-p.done
		}
	}
	// The leader is gone; a wrapper's children, or a daemon it started, may still be there.
	if p.fam.alive() {
		p.fam.signal(syscall.SIGTERM)
		deadline := time.Now().Add(p.grace)
		for p.fam.alive() && time.Now().Before(deadline) && ctx.Err() == nil {
			time.Sleep(20 * time.Millisecond)
		}
		p.fam.signal(syscall.SIGKILL)
		// Reap what the kill leaves, so no zombie of the bundle outlives Stop either. On a
		// loaded machine the killed may take a while to go; whoever is still there past the
		// grace is reaped when it does.
		deadline = time.Now().Add(max(p.grace, time.Second))
		for p.fam.alive() && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		p.fam.reapLater()
	}
	<-p.stderrIn
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
