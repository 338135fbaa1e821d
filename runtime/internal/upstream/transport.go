package upstream

import (
	"context"
	"encoding/json"

	"github.com/toolnode/toolnode/runtime/internal/rpc"
)

// transport carries one session's messages to a bundle and back: a process's stdin and
// stdout, or HTTP requests to a remote server. The session logic above it (the era, the
// handshake, stamping requests, relaying the bundle's own requests) is the same for both.
type transport interface {
	// Expect, Request and Forget are rpc.Peer's: the table of calls waiting for answers.
	Expect(done rpc.Done) (rpc.ID, error)
	// ExpectTo is Expect with the outcome given to a (see rpc.Answerer).
	ExpectTo(a rpc.Answerer) (rpc.ID, error)
	Request(id rpc.ID, method string, params json.RawMessage) error
	Forget(id rpc.ID) bool
	Notify(method string, params json.RawMessage) error
	Reply(id rpc.ID, result json.RawMessage) error
	ReplyError(id rpc.ID, err error) error
	// Done is closed when the transport has ended; every call waiting has then ended.
	Done() <-chan struct{}
	Queued() int
	Waiting() int

	// setEra tells the transport which era the session speaks, and in a session the
	// revision agreed, for what it adds around messages (HTTP headers, the GET stream).
	setEra(era Era, version string)
	// opened is told that the handshake is over.
	opened()
	// gone says why calls fail once the transport has ended.
	gone() error
	// stop ends the transport and what is behind it (the process, the HTTP session).
	stop(ctx context.Context) error
	// pid is the process's id, 0 for a remote bundle.
	pid() int
	// status describes how the transport ended, or "running".
	status() string
}

// connOptions are the options of a connection of cfg's bounds that hands its messages to
// h: the part the transports over a stream of lines (a process, a link, a pipe) share.
func (h hooks) connOptions(cfg Config) rpc.ConnOptions {
	return rpc.ConnOptions{MaxLine: cfg.MaxLine, MaxQueue: cfg.MaxQueue, Limits: cfg.Limits,
		Handle: h.handle, Lend: true, OnInvalid: h.invalid, OnUnmatched: h.unmatched}
}

// hooks are what a transport hands the session, on the goroutine that read the message.
type hooks struct {
	// handle receives the bundle's requests and notifications; it must not block, nor keep
	// the message itself past its return (see rpc.ConnOptions.Lend).
	handle func(m *rpc.Message)
	// invalid is told of a message that failed the checks.
	invalid func(line []byte, m *rpc.Message, err *rpc.Error)
	// unmatched is told of an answer no call waits for.
	unmatched func(m *rpc.Message)
}
