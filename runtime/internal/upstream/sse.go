package upstream

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/toolnode/toolnode/runtime/internal/rpc"
)

// errEventTooLong ends a stream whose event is over the longest message accepted.
var errEventTooLong = errors.New("event over the size limit")

// readSSE reads a Server-Sent Events stream to its end, handing on the JSON-RPC message of
// each "message" event (events without a type are messages too). Comments, ids and retry
// fields carry nothing for the node. An event over maxBody ends the stream with
// errEventTooLong; the call it was for then fails. io.EOF is a normal end and gives nil.
func (t *httpTransport) readSSE(r io.Reader, forID rpc.ID) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), t.maxBody+64)
	var data bytes.Buffer
	event := ""
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 { // the event is complete
			if data.Len() > 0 && (event == "" || event == "message") {
				t.dispatch(bytes.Clone(data.Bytes()), forID)
			}
			data.Reset()
			event = ""
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "data":
			if data.Len()+len(value) > t.maxBody {
				return t.tooLong(forID)
			}
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.Write(value)
		case "event":
			event = string(value)
		}
	}
	if errors.Is(sc.Err(), bufio.ErrTooLong) {
		return t.tooLong(forID)
	}
	if data.Len() > 0 && (event == "" || event == "message") {
		t.dispatch(bytes.Clone(data.Bytes()), forID)
	}
	return sc.Err()
}

func (t *httpTransport) tooLong(forID rpc.ID) error {
	if !forID.IsZero() {
		t.fail(forID, fmt.Errorf("%w: remote bundle %q sent an event of over %d bytes", rpc.ErrBadAnswer, t.name, t.maxBody))
	}
	return errEventTooLong
}
