// Package audit writes the --audit log: one JSON line per tool call, saying who called
// what, served by which bundle, with what outcome and how long it took.
//
// Recording never waits on the disk: records go into a bounded buffer that one goroutine
// drains to the file. When the buffer is full the record is dropped and counted; the count
// is logged at most once per DropReport and when the log closes, so a slow disk costs
// audit lines, never call latency.
package audit

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Outcomes of a call. The kinds of toolnode.execute's errors are outcomes too.
const (
	// OK: the tool answered with a result that is not an error.
	OK = "ok"
	// ToolError: the tool answered with isError true.
	ToolError = "tool_error"
	// UnknownTool, InvalidArguments and Forbidden were refused before being sent.
	UnknownTool      = "unknown_tool"
	InvalidArguments = "invalid_arguments"
	Forbidden        = "forbidden"
	// Failed: the bundle failed after the call was sent (crash, broken pipe, protocol error).
	Failed = "failed"
	// Timeout: the call ran past its time limit.
	Timeout = "timeout"
	// Cancelled: the client cancelled the call.
	Cancelled = "cancelled"
)

// Record is one call.
type Record struct {
	// Time is when the call arrived.
	Time time.Time `json:"time"`
	// Client is the access file's name of the caller, "" without an access file.
	Client string `json:"client,omitempty"`
	// Tool is the exposed name called; Via is "toolnode.execute" when called through it.
	Tool string `json:"tool"`
	Via  string `json:"via,omitempty"`
	// Bundle serves the tool, "" when the call never reached one (unknown tool).
	Bundle string `json:"bundle,omitempty"`
	// Outcome is one of the outcome constants.
	Outcome string `json:"outcome"`
	// Duration is how long the call took, written as duration_ms.
	Duration time.Duration `json:"-"`
	// Arguments and Result are written only when the log is opened with Args.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
}

// MarshalJSON writes the record as one audit line's object, the duration in milliseconds.
func (r Record) MarshalJSON() ([]byte, error) {
	type plain Record
	return json.Marshal(struct {
		plain
		DurationMS float64 `json:"duration_ms"`
	}{plain(r), float64(r.Duration.Microseconds()) / 1000})
}

// Config sets up a Log. Zero values take the defaults noted.
type Config struct {
	// Args writes the arguments and results of calls. Default false: they may hold what
	// the log's readers must not see.
	Args bool
	// Buffer is how many records may wait for the disk. Default 4096.
	Buffer int
	// DropReport is how often a count of dropped records is logged. Default 10s.
	DropReport time.Duration
	// Log receives drop counts and write errors. Default: discarded.
	Log hclog.Logger
}

// Log is an audit log. Record is safe for concurrent use, and may be called after Close
// (the record is dropped).
type Log struct {
	cfg    Config
	out    io.Writer
	w      *bufio.Writer
	closer io.Closer
	ch     chan Record
	done   chan struct{}

	mu     sync.RWMutex // held for reading while sending, for writing to close ch
	closed bool

	dropped  atomic.Uint64
	written  atomic.Uint64
	failures atomic.Uint64
	pending  uint64 // lines encoded since the last flush; the writer goroutine's alone
}

// Open appends to the file at path, creating it (mode 0600: it names clients and tools).
func Open(path string, cfg Config) (*Log, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open audit log: %w", err)
	}
	return New(f, f, cfg), nil
}

// New writes to w; Close closes closer when it is not nil.
func New(w io.Writer, closer io.Closer, cfg Config) *Log {
	if cfg.Buffer <= 0 {
		cfg.Buffer = 4096
	}
	if cfg.DropReport <= 0 {
		cfg.DropReport = 10 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = hclog.NewNullLogger()
	}
	l := &Log{cfg: cfg, out: w, w: bufio.NewWriterSize(w, 64<<10), closer: closer,
		ch: make(chan Record, cfg.Buffer), done: make(chan struct{})}
	go l.run()
	return l
}

// Record queues r for writing, without waiting: if the buffer is full, r is dropped and
// counted. Arguments and results are removed unless the log was opened with Args; a zero
// Time is taken as now.
func (l *Log) Record(r Record) {
	if r.Time.IsZero() {
		r.Time = time.Now()
	}
	if !l.cfg.Args {
		r.Arguments, r.Result = nil, nil
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		l.dropped.Add(1)
		return
	}
	select {
	case l.ch <- r:
	default:
		l.dropped.Add(1)
	}
}

// Dropped is the number of records lost so far: for a full buffer, after Close, or to a
// write error.
func (l *Log) Dropped() uint64 { return l.dropped.Load() }

// Written is the number of records written to the file so far.
func (l *Log) Written() uint64 { return l.written.Load() }

// Close writes what is queued, stops the writer and closes the file. Safe to call more
// than once.
func (l *Log) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		<-l.done
		return nil
	}
	l.closed = true
	close(l.ch)
	l.mu.Unlock()
	<-l.done
	if l.closer != nil {
		if err := l.closer.Close(); err != nil {
			return fmt.Errorf("close audit log: %w", err)
		}
	}
	return nil
}

// run drains the buffer: it writes every record waiting, flushes when none is left, and
// reports drops.
func (l *Log) run() {
	defer close(l.done)
	tick := time.NewTicker(l.cfg.DropReport)
	defer tick.Stop()
	var reported uint64
	report := func() {
		if d := l.dropped.Load(); d > reported {
			l.cfg.Log.Warn("audit records dropped: the audit log could not keep up with the calls or could not write",
				"dropped", d-reported, "dropped_total", d)
			reported = d
		}
	}
	enc := json.NewEncoder(l.w)
	for {
		select {
		case r, ok := <-l.ch:
			if !ok {
				l.flush()
				report()
				return
			}
			l.write(enc, r)
			if len(l.ch) == 0 {
				l.flush() // one write to the file per burst of calls, not per call
			}
		case <-tick.C:
			report()
		}
	}
}

func (l *Log) write(enc *json.Encoder, r Record) {
	err := enc.Encode(r)
	if err != nil && (r.Arguments != nil || r.Result != nil) {
		// Arguments that are not JSON must not cost the line that says the call happened.
		r.Arguments, r.Result = nil, nil
		err = enc.Encode(r)
	}
	if err != nil {
		l.dropped.Add(1)
		l.fail(err)
		return
	}
	l.pending++
}

func (l *Log) flush() {
	n := l.pending
	l.pending = 0
	if err := l.w.Flush(); err != nil {
		l.dropped.Add(n)
		l.fail(err)
		l.w.Reset(l.out) // a bufio.Writer keeps its error; start afresh for the next lines
		return
	}
	l.written.Add(n)
	if l.failures.Swap(0) > 0 {
		l.cfg.Log.Info("the audit log is being written again")
	}
}

// fail logs a write error once per run of failures, so a full disk does not flood the log.
func (l *Log) fail(err error) {
	if l.failures.Add(1) == 1 {
		l.cfg.Log.Error("cannot write the audit log; records are being lost", "error", err)
	}
}
