// Package audit writes the --audit log: one JSON line per tool call, saying who called
// what, served by which bundle, with what outcome and how long it took.
//
// Recording never waits on the disk: records go into a queue, bounded in records and in
// bytes, that one goroutine drains to the file. A record that does not fit is dropped and
// counted, and the log itself says so: the next line the writer can write is a line of
// its own giving how many records were lost and why. The node's log gets the count too,
// at most once per DropReport, so a slow disk costs audit lines, never call latency or
// the node's memory. Arguments and results over MaxValue bytes are left out of their line,
// which names them and their size under "truncated". The file is rotated when full.
package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

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
	// MissingCapability: the tool requires a task and the client did not declare MCP's
	// tasks extension.
	MissingCapability = "missing_capability"
	// NeedsApproval: the call waits for an approver (an access file's approval rule);
	// Refused: an approver refused it, or its approval expired.
	NeedsApproval = "needs_approval"
	Refused       = "refused"
	// ApprovalRequested, ApprovalApproved, ApprovalRefused, ApprovalWithdrawn and
	// ApprovalExpired are the records of a request for approval: made by a call, approved
	// or refused by an approver, withdrawn by its caller (it declined to wait), or expired
	// undecided or unused.
	ApprovalRequested = "approval_requested"
	ApprovalApproved  = "approved"
	ApprovalRefused   = "approval_refused"
	ApprovalWithdrawn = "approval_withdrawn"
	ApprovalExpired   = "approval_expired"
)

// Why records were dropped, as a drop line of the log names it.
const (
	// DroppedQueueFull: calls came faster than the disk took their lines, and the queue
	// (Buffer records, QueueBytes bytes) was full.
	DroppedQueueFull = "queue_full"
	// DroppedWriteError: the file refused the lines (a full disk, an I/O error).
	DroppedWriteError = "write_error"
)

// Defaults of Config.
const (
	DefaultBuffer     = 4096
	DefaultQueueBytes = 32 << 20
	DefaultMaxValue   = 64 << 10
	DefaultMaxSize    = 100 << 20
	DefaultKeep       = 5
)

// MaxToolBytes is the longest tool name written whole; a longer one (a client may call
// any name) is cut, and the line says so under "truncated".
const MaxToolBytes = 256

// recordOverhead is what a record costs in the queue besides its strings and values.
const recordOverhead = 256

// Record is one call.
type Record struct {
	// Time is when the call arrived.
	Time time.Time `json:"time"`
	// Client is the access file's name of the caller, "" without an access file.
	Client string `json:"client,omitempty"`
	// Tool is the exposed name called; Via is "toolnode.execute" when called through it.
	Tool string `json:"tool"`
	Via  string `json:"via,omitempty"`
	// Run names the toolnode.run the record is of, or made the call (Via toolnode.run).
	Run string `json:"run,omitempty"`
	// Task is the id of the task the call ran as (MCP's tasks extension); "" for a call
	// answered with its result.
	Task string `json:"task,omitempty"`
	// Bundle serves the tool, "" when the call never reached one (unknown tool).
	Bundle string `json:"bundle,omitempty"`
	// Outcome is one of the outcome constants.
	Outcome string `json:"outcome"`
	// Duration is how long the call took, written as duration_ms.
	Duration time.Duration `json:"-"`
	// Arguments and Result are written only when the log is opened with Args.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	// Skill is the skill (a skills/get, Tool "skills/get") or skill file (a read, Tool
	// "resources/read") of MCP's skills extension the record is of, by the node's URI.
	Skill string `json:"skill,omitempty"`
	// Approval names the request for approval a record of one is about (see the
	// Approval* outcomes); Approver is who decided it.
	Approval string `json:"approval,omitempty"`
	Approver string `json:"approver,omitempty"`
	// Truncated names the members Record cut short or left out, with their size in
	// bytes: "arguments" and "result" over Config.MaxValue are left out, a "tool" name
	// over MaxToolBytes is cut to that. Set by Record; nil when nothing was cut.
	Truncated map[string]int `json:"truncated,omitempty"`
}

// MarshalJSON writes the record as one audit line's object, the duration in milliseconds.
func (r Record) MarshalJSON() ([]byte, error) {
	type plain Record
	return json.Marshal(struct {
		plain
		DurationMS float64 `json:"duration_ms"`
	}{plain(r), float64(r.Duration.Microseconds()) / 1000})
}

// size is what r holds in the queue, in bytes.
func (r *Record) size() int64 {
	return int64(recordOverhead + len(r.Client) + len(r.Tool) + len(r.Via) + len(r.Run) + len(r.Task) + len(r.Bundle) +
		len(r.Outcome) + len(r.Arguments) + len(r.Result) + len(r.Approval) + len(r.Approver))
}

func (r *Record) truncated(member string, size int) {
	if r.Truncated == nil {
		r.Truncated = map[string]int{}
	}
	r.Truncated[member] = size
}

// dropLine is the line that says records were lost: how many since the last such line,
// by reason.
type dropLine struct {
	Time    time.Time         `json:"time"`
	Dropped map[string]uint64 `json:"dropped"`
}

// Config sets up a Log. Zero values take the defaults noted.
type Config struct {
	// Args writes the arguments and results of calls. Default false: they may hold what
	// the log's readers must not see.
	Args bool
	// MaxValue is the most bytes of a call's arguments, and of its result, that a line
	// holds; a larger one is left out and named with its size under "truncated".
	// Default DefaultMaxValue.
	MaxValue int
	// Buffer is how many records may wait for the disk. Default DefaultBuffer.
	Buffer int
	// QueueBytes is how many bytes of records (names, arguments, results) may wait for
	// the disk; what the node holds for the log is bounded by it. Default
	// DefaultQueueBytes, and never less than four records of MaxValue arguments and
	// results.
	QueueBytes int64
	// MaxSize is the size in bytes at which Open's file is rotated: it is renamed FILE.1
	// (FILE.1 becoming FILE.2, and so on) and a new FILE started. A file holds at least
	// one line. Pipes and devices are not rotated. Default DefaultMaxSize.
	MaxSize int64
	// Keep is how many rotated files are kept; the oldest beyond it is removed. Default
	// DefaultKeep.
	Keep int
	// DropReport is how often a count of dropped records is logged. Default 10s.
	DropReport time.Duration
	// Log receives drop counts, rotations and write errors. Default: discarded.
	Log hclog.Logger
}

func (cfg *Config) defaults() {
	if cfg.MaxValue <= 0 {
		cfg.MaxValue = DefaultMaxValue
	}
	if cfg.Buffer <= 0 {
		cfg.Buffer = DefaultBuffer
	}
	if cfg.QueueBytes <= 0 {
		cfg.QueueBytes = DefaultQueueBytes
	}
	// A record whose values are each just under MaxValue must fit, or it would always
	// be dropped.
	cfg.QueueBytes = max(cfg.QueueBytes, 4*(2*int64(cfg.MaxValue)+recordOverhead+MaxToolBytes))
	if cfg.MaxSize <= 0 {
		cfg.MaxSize = DefaultMaxSize
	}
	if cfg.Keep <= 0 {
		cfg.Keep = DefaultKeep
	}
	if cfg.DropReport <= 0 {
		cfg.DropReport = 10 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = hclog.NewNullLogger()
	}
}

// Log is an audit log. Record is safe for concurrent use, and may be called after Close
// (the record is dropped).
type Log struct {
	cfg    Config
	out    io.Writer
	file   *file // nil when writing to a writer given to New
	w      *bufio.Writer
	closer io.Closer
	ch     chan Record
	done   chan struct{}

	mu     sync.RWMutex // held for reading while sending, for writing to close ch
	closed bool

	queued   atomic.Int64  // bytes of the records in ch
	full     atomic.Uint64 // records dropped for a full queue
	dropped  atomic.Uint64 // records lost for any reason
	written  atomic.Uint64
	failures atomic.Uint64

	// The writer goroutine's alone.
	line      bytes.Buffer
	enc       *json.Encoder // encodes into line
	pending   uint64        // lines in w since the last flush
	unwritten uint64        // records lost to write errors and not yet said in the file
	saidFull  uint64        // queue_full drops said in the file
	inW       struct {      // drops said by a drop line still in w
		full, unwritten uint64
	}
}

// Open appends to the file at path, creating it (mode 0600: it names clients and tools),
// and rotates it at cfg.MaxSize.
func Open(path string, cfg Config) (*Log, error) {
	cfg.defaults()
	f, err := openFile(path, cfg.MaxSize, cfg.Keep, cfg.Log)
	if err != nil {
		return nil, err
	}
	l := newLog(f, f, cfg)
	l.file = f
	go l.run()
	return l, nil
}

// New writes to w, without rotation; Close closes closer when it is not nil.
func New(w io.Writer, closer io.Closer, cfg Config) *Log {
	cfg.defaults()
	l := newLog(w, closer, cfg)
	go l.run()
	return l
}

func newLog(w io.Writer, closer io.Closer, cfg Config) *Log {
	l := &Log{cfg: cfg, out: w, w: bufio.NewWriterSize(w, 64<<10), closer: closer,
		ch: make(chan Record, cfg.Buffer), done: make(chan struct{})}
	l.enc = json.NewEncoder(&l.line)
	return l
}

// Record queues r for writing, without waiting: if the queue is full, r is dropped and
// counted. Arguments and results are removed unless the log was opened with Args, and
// left out when over MaxValue; a zero Time is taken as now. Record keeps no reference to
// r's arguments and result: the queue holds copies of what it writes, so a small value
// cut from a large message does not keep the message.
func (l *Log) Record(r Record) {
	if r.Time.IsZero() {
		r.Time = time.Now()
	}
	r.Truncated = nil
	if l.cfg.Args {
		r.Arguments = l.value(&r, "arguments", r.Arguments)
		r.Result = l.value(&r, "result", r.Result)
	} else {
		r.Arguments, r.Result = nil, nil
	}
	if len(r.Tool) > MaxToolBytes {
		r.truncated("tool", len(r.Tool))
		r.Tool = strings.Clone(cut(r.Tool, MaxToolBytes)) // not a slice of the whole name
	}
	size := r.size()
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		l.dropped.Add(1)
		return
	}
	if l.queued.Add(size) > l.cfg.QueueBytes {
		l.queued.Add(-size)
		l.full.Add(1)
		l.dropped.Add(1)
		return
	}
	select {
	case l.ch <- r:
	default:
		l.queued.Add(-size)
		l.full.Add(1)
		l.dropped.Add(1)
	}
}

// value is a copy of v for the line, or nil (and a note in r.Truncated) when v is over
// MaxValue.
func (l *Log) value(r *Record, member string, v json.RawMessage) json.RawMessage {
	if len(v) > l.cfg.MaxValue {
		r.truncated(member, len(v))
		return nil
	}
	if v == nil {
		return nil
	}
	return append(json.RawMessage(nil), v...)
}

// cut returns the longest prefix of s of at most n bytes that does not split a UTF-8
// sequence; len(s) > n.
func cut(s string, n int) string {
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Dropped is the number of records lost so far: for a full queue, after Close, or to a
// write error.
func (l *Log) Dropped() uint64 { return l.dropped.Load() }

// Written is the number of records written to the file so far.
func (l *Log) Written() uint64 { return l.written.Load() }

// Queued is the number of bytes of records waiting for the disk; QueueBytes is its bound.
func (l *Log) Queued() int64 { return l.queued.Load() }

// QueueBytes is the most bytes of records that may wait for the disk (Config.QueueBytes,
// with its default and floor applied).
func (l *Log) QueueBytes() int64 { return l.cfg.QueueBytes }

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

// run drains the queue: it writes every record waiting, and when none is left says the
// drops not yet said and flushes; it reports drops to the node's log.
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
	for {
		select {
		case r, ok := <-l.ch:
			if !ok {
				l.sayDrops()
				l.flush()
				report()
				return
			}
			l.sayDrops() // before the record, so the drop line comes where they happened
			l.write(r)
			l.queued.Add(-r.size())
			if len(l.ch) == 0 {
				l.flush() // one write to the file per burst of calls, not per call
			}
		case <-tick.C:
			if l.sayDrops() {
				l.flush()
			}
			report()
		}
	}
}

// write encodes r as a line and puts it in w.
func (l *Log) write(r Record) {
	l.line.Reset()
	err := l.enc.Encode(r)
	if err != nil && (r.Arguments != nil || r.Result != nil) {
		// Arguments that are not JSON must not cost the line that says the call happened.
		r.Arguments, r.Result = nil, nil
		err = l.enc.Encode(r)
	}
	if err != nil {
		l.dropped.Add(1)
		l.unwritten++
		l.fail(err)
		return
	}
	l.put(l.line.Bytes())
	l.pending++
}

// sayDrops puts a drop line in w for the records lost and not yet said, and reports
// whether there was one.
func (l *Log) sayDrops() bool {
	full := l.full.Load() - l.saidFull - l.inW.full
	unwritten := l.unwritten - l.inW.unwritten
	if full == 0 && unwritten == 0 {
		return false
	}
	d := dropLine{Time: time.Now(), Dropped: map[string]uint64{}}
	if full > 0 {
		d.Dropped[DroppedQueueFull] = full
	}
	if unwritten > 0 {
		d.Dropped[DroppedWriteError] = unwritten
	}
	l.line.Reset()
	if err := l.enc.Encode(d); err != nil {
		return false // a map of counts always encodes
	}
	l.put(l.line.Bytes())
	l.inW.full += full
	l.inW.unwritten += unwritten
	return true
}

// put writes one line to w, rotating the file first when the line would take it past
// its size.
func (l *Log) put(line []byte) {
	if l.file != nil && l.file.full(l.w.Buffered(), len(line)) {
		l.flush()
		l.file.rotate()
	}
	_, _ = l.w.Write(line) // an error stays in w and comes out of the next Flush
}

func (l *Log) flush() {
	n := l.pending
	said := l.inW
	l.pending = 0
	l.inW.full, l.inW.unwritten = 0, 0
	if err := l.w.Flush(); err != nil {
		// The lines in w are lost, a drop line among them included: what it said is
		// said again once the disk takes lines.
		l.dropped.Add(n)
		l.unwritten += n
		l.fail(err)
		l.w.Reset(l.out) // a bufio.Writer keeps its error; start afresh for the next lines
		return
	}
	l.saidFull += said.full
	l.unwritten -= said.unwritten
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
