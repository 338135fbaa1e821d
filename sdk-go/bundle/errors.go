package bundle

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// RPCError is a JSON-RPC error. A prompt, resource or completion handler returns one to
// answer with its code; other errors from those handlers answer -32603. Input.Request
// returns one when the client answers with an error.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *RPCError) Error() string { return fmt.Sprintf("%s (JSON-RPC error %d)", e.Message, e.Code) }

// ResourceNotFound returns the error that answers a read of a resource that does not exist:
// -32002 with the URI as data, as the spec says.
func ResourceNotFound(uri string) *RPCError {
	data, _ := json.Marshal(map[string]string{"uri": uri})
	return &RPCError{Code: mcp.CodeResourceNotFound, Message: fmt.Sprintf("resource %q not found", uri), Data: data}
}

func errorf(code int, format string, args ...any) *RPCError {
	return &RPCError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// toRPCError answers err: as itself when it is an *RPCError, else as an internal error.
func toRPCError(err error) *RPCError {
	if e, ok := errors.AsType[*RPCError](err); ok {
		return e
	}
	return &RPCError{Code: mcp.CodeInternalError, Message: err.Error()}
}

// protect runs a handler, turning a panic into an error so that one bad handler cannot
// take the bundle down.
func protect[T any](log *slog.Logger, what string, h func() (T, error)) (res T, err error) {
	defer func() {
		if r := recover(); r != nil {
			log.Error(what+" panicked", "panic", r, "stack", string(debug.Stack()))
			err = fmt.Errorf("%s failed: %v", what, r)
		}
	}()
	return h()
}
