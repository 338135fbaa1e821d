package upstream

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/toolnode/toolnode/runtime/internal/rpc"
)

// Link is a connection to a bundle served by another node of a cluster. It carries
// newline-delimited JSON-RPC messages both ways, as a process's stdin and stdout do: what
// the session writes goes to the far side, and the far side's messages are read. Close
// ends reading with io.EOF and may be called more than once.
type Link interface {
	io.ReadWriteCloser
	// Where names what serves the bundle, for logs and status.
	Where() string
	// Why says why the bundle is no longer reached, "" while it is: the error of calls
	// once the link has ended.
	Why() string
}

// linked is the transport to a bundle over a Link.
type linked struct {
	*rpc.Conn
	name     string
	link     Link
	stopOnce sync.Once
}

func startLink(cfg Config, h hooks) *linked {
	t := &linked{name: cfg.Name, link: cfg.Link}
	t.Conn = rpc.NewConn(cfg.Link, cfg.Link, cfg.Link, h.connOptions(cfg))
	return t
}

func (t *linked) setEra(Era, string) {}
func (t *linked) opened()            {}
func (t *linked) gone() error {
	if why := t.link.Why(); why != "" {
		return fmt.Errorf("%w: %s", ErrGone, why)
	}
	return fmt.Errorf("%w: the link to bundle %q (%s) ended", ErrGone, t.name, t.link.Where())
}
func (t *linked) pid() int { return 0 }
func (t *linked) status() string {
	select {
	case <-t.Conn.Done():
		return "link closed"
	default:
		return "running"
	}
}

func (t *linked) stop(context.Context) error {
	t.stopOnce.Do(func() { t.Conn.Close() })
	return nil
}
