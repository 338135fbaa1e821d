package rpc

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/sourcegraph/jsonrpc2"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// Error is a JSON-RPC error object: jsonrpc2's, so that it encodes as the spec says, with
// errors.Is comparing codes (errors.Is(err, rpc.ErrInvalidParams)).
type Error jsonrpc2.Error

// Error implements error as jsonrpc2 does.
func (e *Error) Error() string { return (*jsonrpc2.Error)(e).Error() }

// Sentinels for errors.Is; compare, never modify or send them.
var (
	ErrParse          = &Error{Code: mcp.CodeParseError, Message: "parse error"}
	ErrInvalidRequest = &Error{Code: mcp.CodeInvalidRequest, Message: "invalid request"}
	ErrMethodNotFound = &Error{Code: mcp.CodeMethodNotFound, Message: "method not found"}
	ErrInvalidParams  = &Error{Code: mcp.CodeInvalidParams, Message: "invalid params"}
	ErrInternal       = &Error{Code: mcp.CodeInternalError, Message: "internal error"}
)

// Errorf returns an error with code and a formatted message.
func Errorf(code int64, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Is reports whether target is an *Error with the same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t != nil && e != nil && t.Code == e.Code
}

// WithData returns a copy of e carrying data (valid JSON).
func (e *Error) WithData(data json.RawMessage) *Error {
	c := *e
	raw := json.RawMessage(data)
	c.Data = &raw
	return &c
}

// AsError returns err as a JSON-RPC error: itself when it is one (or wraps one), else an
// internal error carrying its text. nil stays nil.
func AsError(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return Errorf(mcp.CodeInternalError, "%s", err.Error())
}

// decodeError reads an error object; a malformed one becomes an internal error quoting it.
func decodeError(raw []byte) *Error {
	var e Error
	if err := json.Unmarshal(raw, &e); err != nil {
		return Errorf(mcp.CodeInternalError, "malformed error object: %s", clip(raw, 200))
	}
	return &e
}

func clip(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}
