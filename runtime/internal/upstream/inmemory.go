package upstream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/rpc"
)

// Serve is a bundle served in the node's own process: it speaks MCP on stdin and stdout,
// one JSON message per line, as a bundle's process does, until stdin ends or ctx is done.
// The method value of an sdk-go bundle.Server's Serve is one.
type Serve func(ctx context.Context, stdin io.Reader, stdout io.Writer) error

// inMemory is the transport to a bundle served in the node's process: a pair of in-process
// pipes in place of a process's stdin and stdout. It ends as a process does: when serve
// returns (its stdout closes), or when it is stopped: its stdin closes, and past the grace
// period its ctx is cancelled, as a process is sent SIGTERM.
type inMemory struct {
	*rpc.Conn
	name     string
	stdin    *io.PipeWriter
	cancel   context.CancelFunc
	grace    time.Duration
	served   chan struct{}
	err      error // serve's, once served is closed
	stopOnce sync.Once
}

func startInMemory(cfg Config, h hooks) *inMemory {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	t := &inMemory{name: cfg.Name, stdin: inW, cancel: cancel, grace: cfg.Process.Grace, served: make(chan struct{})}
	// Closing the connection closes both pipes, so that a bundle still writing is not
	// left blocked on a stdout nobody reads.
	closer := rpc.Closers{inW, outR}
	t.Conn = rpc.NewConn(outR, inW, closer, h.connOptions(cfg))
	go func() {
		t.err = cfg.InMemory(ctx, inR, outW)
		inR.Close()
		outW.Close()
		close(t.served)
	}()
	return t
}

func (t *inMemory) setEra(Era, string) {}
func (t *inMemory) opened()            {}
func (t *inMemory) pid() int           { return 0 }

func (t *inMemory) gone() error {
	select {
	case <-t.served:
		if t.err != nil {
			return fmt.Errorf("%w: in-memory bundle %q ended: %w", ErrGone, t.name, t.err)
		}
		return fmt.Errorf("%w: in-memory bundle %q ended", ErrGone, t.name)
	default:
		return fmt.Errorf("%w: in-memory bundle %q closed its stdout", ErrGone, t.name)
	}
}

func (t *inMemory) status() string {
	select {
	case <-t.served:
		if t.err != nil && !errors.Is(t.err, context.Canceled) {
			return "ended: " + t.err.Error()
		}
		return "ended"
	default:
		return "running"
	}
}

// stop closes the bundle's stdin and waits for it to end, up to the grace period (or ctx);
// then it cancels the bundle's context, waits as long again, and ends the connection.
func (t *inMemory) stop(ctx context.Context) error {
	t.stopOnce.Do(func() {
		t.stdin.Close()
		for _, end := range []func(){func() {}, t.cancel} {
			end()
			timer := time.NewTimer(t.grace)
			select {
			case <-t.served:
			case <-timer.C:
			case <-ctx.Done():
			}
			timer.Stop()
		}
		t.cancel()
		t.Conn.Close()
	})
	return nil
}
