package rpc

import (
	"encoding/json"
	"math"
	"strconv"

	"github.com/toolnode/toolnode/sdk-go/mcp"
	"github.com/toolnode/toolnode/sdk-go/rawjson"
)

// ID is a request id as it travels: an integer or a string in canonical JSON form, or null in
// an answer to a request that could not be read. The zero ID means "no id" (a
// notification). IDs are comparable and serve as map keys.
//
// An integer from 0 to 2^64-2, the id nearly every client and the node itself count with,
// is kept as a number: reading it from a message and writing it into one make no string.
// Any other id is kept as its JSON text.
type ID struct {
	raw string // the id as JSON, when it is not kept as a number
	num uint64 // the id n kept as a number, as n+1; 0 when it is not one
}

// NullID is the id of an answer to a request whose id could not be read.
var NullID = ID{raw: "null"}

// Int returns the id n.
func Int(n uint64) ID {
	if n == math.MaxUint64 {
		return ID{raw: strconv.FormatUint(n, 10)}
	}
	return ID{num: n + 1}
}

// String returns the id s.
func String(s string) ID {
	b, _ := json.Marshal(s)
	return ID{raw: string(b)}
}

// IsZero reports whether there is no id.
func (id ID) IsZero() bool { return id.raw == "" && id.num == 0 }

// IsNull reports whether the id is JSON null.
func (id ID) IsNull() bool { return id.raw == "null" }

// Uint returns the id as an unsigned integer, when it is one.
func (id ID) Uint() (uint64, bool) {
	if id.num != 0 {
		return id.num - 1, true
	}
	if id.raw == "" || id.raw[0] == '"' || id.raw[0] == '-' {
		return 0, false
	}
	n, err := strconv.ParseUint(id.raw, 10, 64)
	return n, err == nil
}

// String returns the id as JSON (a number, a quoted string or null).
func (id ID) String() string {
	if id.num != 0 {
		return strconv.FormatUint(id.num-1, 10)
	}
	return id.raw
}

// append appends the id as JSON.
func (id ID) append(b []byte) []byte {
	if id.num != 0 {
		return strconv.AppendUint(b, id.num-1, 10)
	}
	return append(b, id.raw...)
}

// MarshalJSON implements json.Marshaler; the zero ID encodes as null.
func (id ID) MarshalJSON() ([]byte, error) {
	if id.IsZero() {
		return []byte("null"), nil
	}
	return id.append(nil), nil
}

// UnmarshalJSON implements json.Unmarshaler with the rules of Parse.
func (id *ID) UnmarshalJSON(b []byte) error {
	v, err := parseID(b)
	if err != nil {
		return err
	}
	*id = v
	return nil
}

// parseID checks a raw id: an integer, a string (escapes resolved to a canonical form, so
// that "\u0061" and "a" are one id) or null.
func parseID(b []byte) (ID, error) {
	if len(b) == 0 {
		return ID{}, ErrInvalidRequest
	}
	switch c := b[0]; {
	case c == 'n' && string(b) == "null":
		return NullID, nil
	case c == '"':
		for _, x := range b[1 : len(b)-1] {
			if x == '\\' {
				var s string
				if json.Unmarshal(b, &s) != nil {
					return ID{}, Errorf(mcp.CodeInvalidRequest, "invalid request: bad id %s", clip(b, 80))
				}
				return String(s), nil
			}
		}
		return ID{raw: string(b)}, nil
	case c == '-' || c >= '0' && c <= '9':
		for i, x := range b {
			if !(x >= '0' && x <= '9' || x == '-' && i == 0) {
				return ID{}, Errorf(mcp.CodeInvalidRequest, "invalid request: id %s is not an integer", clip(b, 80))
			}
		}
		if n, ok := smallUint(b); ok {
			return Int(n), nil
		}
		return ID{raw: string(b)}, nil
	}
	return ID{}, Errorf(mcp.CodeInvalidRequest, "invalid request: id must be an integer or a string, not %s", clip(b, 80))
}

// smallUint reads the digits b as an integer Int keeps as a number: written as
// FormatUint writes it (no sign, no leading zero), below 2^64-1.
func smallUint(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 20 || b[0] == '-' || b[0] == '0' && len(b) > 1 {
		return 0, false
	}
	var n uint64
	for _, x := range b {
		d := uint64(x - '0')
		if n > (math.MaxUint64-1-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

// Message is one JSON-RPC message. A request has an ID and a Method, a notification a
// Method only, a response an ID and either Result or Error. Params and Result are raw JSON,
// passed on as they came.
type Message struct {
	ID     ID
	Method string
	Params json.RawMessage
	Result json.RawMessage
	Error  *Error
}

// IsRequest reports whether m is a request.
func (m *Message) IsRequest() bool { return m.Method != "" && !m.ID.IsZero() }

// IsNotification reports whether m is a notification.
func (m *Message) IsNotification() bool { return m.Method != "" && m.ID.IsZero() }

// IsResponse reports whether m is an answer to a request.
func (m *Message) IsResponse() bool { return m.Method == "" }

// Append appends m encoded as one line of JSON, without a newline. Raw params and results
// are copied as they are: they were checked when they were read.
func (m *Message) Append(b []byte) []byte {
	return m.appendEdited(b, nil)
}

// appendEdited is Append with the params of a request edited on the way, as
// rawjson.PutMembers edits them, in the one copy that writes them: a relayed call's new
// name and progress token go straight into the line. Params that are not an object are
// written as they are. The edits' values must not lie in b.
func (m *Message) appendEdited(b []byte, edits []rawjson.Edit) []byte {
	b = append(b, `{"jsonrpc":"2.0"`...)
	if !m.ID.IsZero() {
		b = m.ID.append(append(b, `,"id":`...))
	} else if m.Method == "" {
		b = append(b, `,"id":null`...)
	}
	if m.Method != "" {
		b = rawjson.AppendString(append(b, `,"method":`...), m.Method)
		if len(m.Params) > 0 {
			b = append(b, `,"params":`...)
			ok := false
			if len(edits) > 0 {
				b, ok = rawjson.AppendPutMembers(b, m.Params, edits...)
			}
			if !ok {
				b = append(b, m.Params...)
			}
		}
		return append(b, '}')
	}
	if m.Error != nil {
		e, err := json.Marshal(m.Error)
		if err != nil {
			e = []byte(`{"code":-32603,"message":"unencodable error"}`)
		}
		return append(append(append(b, `,"error":`...), e...), '}')
	}
	res := m.Result
	if len(res) == 0 {
		res = json.RawMessage("{}")
	}
	return append(append(append(b, `,"result":`...), res...), '}')
}

// Encode returns m as one line of JSON with its newline.
func (m *Message) Encode() []byte {
	n := 64 + len(m.Params) + len(m.Result) + len(m.Method)
	return append(m.Append(make([]byte, 0, n)), '\n')
}

// Request returns a request message. params may be nil.
func Request(id ID, method string, params json.RawMessage) *Message {
	return &Message{ID: id, Method: method, Params: params}
}

// Notification returns a notification message. params may be nil.
func Notification(method string, params json.RawMessage) *Message {
	return &Message{Method: method, Params: params}
}

// Result returns the answer to id carrying result.
func Result(id ID, result json.RawMessage) *Message {
	return &Message{ID: id, Result: result}
}

// Failure returns the answer to id carrying err (turned into a JSON-RPC error by AsError).
func Failure(id ID, err error) *Message {
	if id.IsZero() {
		id = NullID
	}
	return &Message{ID: id, Error: AsError(err)}
}

// Marshal encodes v for params or a result: raw JSON is taken as it is.
func Marshal(v any) (json.RawMessage, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		return x, nil
	case []byte:
		return x, nil
	}
	return json.Marshal(v)
}
