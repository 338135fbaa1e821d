// Package jsonl frames JSON-RPC messages as newline-delimited JSON, the MCP stdio transport,
// for github.com/sourcegraph/jsonrpc2.
//
// jsonrpc2's own plain stream decodes with one json.Decoder, which cannot find its footing
// again after a line that is not JSON. Stream reads whole lines instead, of any length up to
// a limit, and hands lines it cannot use to a callback rather than ending the session.
package jsonl

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// DefaultMaxLine is the longest line read by default. Tool results carry images and files,
// so this is far above bufio.Scanner's 64 KiB.
const DefaultMaxLine = 128 << 20

// errLineTooLong is passed to the junk callback for a line over the limit; the line is
// discarded up to its newline.
var errLineTooLong = errors.New("line too long")

// IsLineTooLong reports whether err says that a line was over the limit.
func IsLineTooLong(err error) bool { return errors.Is(err, errLineTooLong) }

// Options configures a Stream. The zero value is usable.
type Options struct {
	// MaxLine is the longest line accepted, in bytes. Default DefaultMaxLine.
	MaxLine int
	// OnJunk is called, on the reading goroutine, with each line that is not a JSON-RPC
	// message (or a prefix of it, when too long) and why; the line is then skipped. Nil
	// skips silently.
	OnJunk func(line []byte, err error)
	// Intercept, when set, is shown each line that is a JSON object before it is decoded
	// and takes it (the line is not decoded) by returning true: a way around jsonrpc2 for
	// the messages of a hot path. It runs on the reading goroutine; the line is valid until
	// it returns.
	Intercept func(line []byte) bool
	// Splice names the top-level members ("params", "result") whose value is kept out of
	// the decoded message and replaced by a placeholder that Take turns back into the
	// bytes; see splice.go. A message has at most one of them. Empty splices nothing.
	Splice []string
}

// Stream is a jsonrpc2.ObjectStream over newline-delimited JSON. ReadObject must be called
// from one goroutine; WriteObject and WriteLine are safe for concurrent use; Close may be
// called more than once.
type Stream struct {
	r      *bufio.Reader
	w      io.Writer
	closer io.Closer
	opts   Options

	wmu      sync.Mutex
	pipeSize int // guarded by wmu
	sp       *splicer
	fl       lane

	closeOnce sync.Once
	closeErr  error
}

// New returns a Stream reading r and writing w; Close closes closer (which may be nil).
func New(r io.Reader, w io.Writer, closer io.Closer, opts Options) *Stream {
	if opts.MaxLine <= 0 {
		opts.MaxLine = DefaultMaxLine
	}
	return &Stream{r: bufio.NewReaderSize(r, 64<<10), w: w, closer: closer, opts: opts, sp: newSplicer()}
}

// Take returns the payload a placeholder in a decoded message stands for, once; any other
// value comes back as it is.
func (s *Stream) Take(raw json.RawMessage) json.RawMessage {
	if v, ok := s.sp.take(raw); ok {
		return v
	}
	return raw
}

// Hold returns a placeholder to give jsonrpc2 instead of payload; WriteObject writes the
// payload in its place. A placeholder that is never written must be given to Take.
func (s *Stream) Hold(payload json.RawMessage) json.RawMessage { return s.sp.hold(payload) }

// cutPayload replaces the value of the spliced member of line by a placeholder, which it
// returns too (nil when nothing was cut).
func (s *Stream) cutPayload(line []byte) ([]byte, []byte) {
	var start, end int
	ok := false
	for _, key := range s.opts.Splice {
		if start, end, ok = memberSpan(line, key); ok {
			break
		}
	}
	if !ok || !json.Valid(line[start:end]) {
		return line, nil // leave it to the decoder, which reports what is wrong
	}
	ph := s.sp.hold(bytes.Clone(line[start:end]))
	out := make([]byte, 0, start+len(ph)+len(line)-end)
	return append(append(append(out, line[:start]...), ph...), line[end:]...), ph
}

// ReadObject reads the next line that decodes into v, passing the others to OnJunk.
func (s *Stream) ReadObject(v any) error {
	for {
		line, err := s.ReadLine()
		if IsLineTooLong(err) {
			s.junk(line, err)
			continue
		}
		if err != nil {
			s.failAll(fmt.Errorf("%w: %v", ErrClosed, err))
			return err
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if line[0] != '{' && line[0] != '[' {
			s.junk(line, errors.New("not a JSON object"))
			continue
		}
		if s.deliver(line) || s.opts.Intercept != nil && s.opts.Intercept(line) {
			continue
		}
		cut, ph := s.cutPayload(line)
		if err := json.Unmarshal(cut, v); err != nil {
			if ph != nil {
				s.Take(ph) // nobody will ask for it
			}
			s.junk(line, err)
			continue
		}
		return nil
	}
}

func (s *Stream) junk(line []byte, err error) {
	if s.opts.OnJunk != nil {
		s.opts.OnJunk(line, err)
	}
}

// ReadLine returns the next line without its newline. The slice is valid until the next
// read. A line over MaxLine is consumed to its end and reported with an error for which
// IsLineTooLong is true, together with its first bytes. A last line without a newline is
// returned before io.EOF.
func (s *Stream) ReadLine() ([]byte, error) {
	frag, err := s.r.ReadSlice('\n')
	if err == nil && len(frag) <= s.opts.MaxLine+1 {
		return frag[:len(frag)-1], nil
	}
	if err == nil {
		return frag[:min(len(frag), 200)], s.tooLong()
	}
	var buf []byte
	for errors.Is(err, bufio.ErrBufferFull) {
		if len(buf)+len(frag) > s.opts.MaxLine {
			head := append([]byte(nil), buf[:min(len(buf), 200)]...)
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = s.r.ReadSlice('\n')
			}
			return head, s.tooLong()
		}
		buf = append(buf, frag...)
		frag, err = s.r.ReadSlice('\n')
	}
	buf = append(buf, frag...)
	if err == nil {
		return buf[:len(buf)-1], nil
	}
	if len(buf) > 0 && errors.Is(err, io.EOF) {
		return buf, nil
	}
	return nil, err
}

func (s *Stream) tooLong() error {
	return fmt.Errorf("%w: over %d bytes", errLineTooLong, s.opts.MaxLine)
}

// WriteObject writes v as one line.
func (s *Stream) WriteObject(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode message: %w", err)
	}
	return s.WriteLine(s.sp.splice(b))
}

// WriteLine writes b, which must be one JSON value without a newline, and a newline, in a
// single write so that concurrent writers never interleave. It may append to b's array.
func (s *Stream) WriteLine(b []byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	// One write per message: a second syscall for the newline costs as much as the message.
	_, err := s.w.Write(append(b, '\n'))
	return err
}

// TryWriteLine writes b and a newline, as WriteLine does, when that cannot block: when the
// writer is a pipe with room for it. It reports whether it wrote; a caller that must not
// wait (the goroutine reading a client) writes elsewhere when it did not.
func (s *Stream) TryWriteLine(b []byte) (bool, error) {
	f, ok := s.w.(*os.File)
	if !ok {
		return false, nil
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if room, ok := pipeRoom(f, &s.pipeSize); !ok || room < len(b)+1 {
		return false, nil
	}
	_, err := s.w.Write(append(b, '\n'))
	return true, err
}

// Close closes the underlying closer once.
func (s *Stream) Close() error {
	s.failAll(ErrClosed)
	s.closeOnce.Do(func() {
		if s.closer != nil {
			s.closeErr = s.closer.Close()
		}
	})
	return s.closeErr
}

// SetIntercept sets Options.Intercept; call it before the first read.
func (s *Stream) SetIntercept(f func(line []byte) bool) { s.opts.Intercept = f }
