package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/proc"
	"github.com/toolnode/toolnode/runtime/internal/rpc"
	"github.com/toolnode/toolnode/sdk-go/rawjson"
)

// stdio is the transport to a bundle process: newline-delimited JSON on its stdin and
// stdout.
type stdio struct {
	*rpc.Conn
	name     string
	proc     *proc.Process
	goneOnce func() error // why calls fail once the bundle has gone, worked out once
}

func startStdio(cfg Config, h hooks) (*stdio, error) {
	p, err := proc.Start(cfg.Process)
	if err != nil {
		return nil, err
	}
	t := &stdio{name: cfg.Name, proc: p}
	t.goneOnce = sync.OnceValue(t.goneError)
	opts := h.connOptions(cfg)
	opts.Batch = cfg.Batch // a process's writes are gathered with those of its neighbours
	t.Conn = rpc.NewConn(p.Stdout(), p.Stdin(), p.Stdin(), opts)
	go t.closeOnExit()
	return t, nil
}

// Request sends a request, naming the bundle's stdin when the bundle does not read it.
func (t *stdio) Request(id rpc.ID, method string, params json.RawMessage) error {
	return t.requestEdited(id, method, params)
}

// requestEdited is Request with params edited as the line is written (see
// rpc.Conn.RequestEdited).
func (t *stdio) requestEdited(id rpc.ID, method string, params json.RawMessage, edits ...rawjson.Edit) error {
	err := t.Conn.RequestEdited(id, method, params, edits...)
	if errors.Is(err, rpc.ErrNotReading) {
		return fmt.Errorf("bundle %q is not reading its stdin: %w", t.name, err)
	}
	return err
}

// closeOnExit closes the session once the process is gone, even if a grandchild still holds
// its stdout open, so that calls in flight fail at once instead of hanging.
func (t *stdio) closeOnExit() {
	<-t.proc.Done()
	select {
	case <-t.Conn.Done():
	case <-time.After(100 * time.Millisecond):
		// Give the reader a moment to take what the bundle wrote before exiting.
	}
	t.Conn.Close()
}

func (t *stdio) goneError() error {
	select {
	case <-t.proc.Done():
	case <-time.After(time.Second):
		return fmt.Errorf("%w: bundle %q closed its stdout (process still running)", ErrGone, t.name)
	}
	if cause := t.proc.Cause(); cause != "" {
		// The kernel ended it mid-call: what the call had done by then stays done.
		return fmt.Errorf("%w: bundle %q was %s; the call may have acted before it ended", ErrGone, t.name, cause)
	}
	return fmt.Errorf("%w: bundle %q exited (%s)%s", ErrGone, t.name, t.proc.ExitStatus(), LastWords(t.proc.StderrTail()))
}

// LastWords quotes the last line of a bundle's stderr tail, which is where a program that
// fails at once says why (Python's ModuleNotFoundError, the dynamic loader's missing
// library), as a clause to append to an error: "" when there is none.
func LastWords(tail []string) string {
	if len(tail) == 0 {
		return ""
	}
	return fmt.Sprintf("; its stderr ended with %q", tail[len(tail)-1])
}

func (t *stdio) setEra(Era, string) {}
func (t *stdio) opened()            {}
func (t *stdio) gone() error {
	return t.goneOnce()
}
func (t *stdio) pid() int       { return t.proc.Pid() }
func (t *stdio) status() string { return t.proc.ExitStatus() }

// stop stops the process (stdin closed, then SIGTERM, then SIGKILL, each after the grace
// period) and ends the connection.
func (t *stdio) stop(ctx context.Context) error {
	err := t.proc.Stop(ctx)
	t.Conn.Close()
	return err
}
