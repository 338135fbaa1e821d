package bundle_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/toolnode/toolnode/sdk-go/bundle"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// A tool says whether its calls may or must become tasks; a task-aware handler reports its
// status (progress counting the reports) and may answer with a JSON-RPC error.
func TestTaskAwareTool(t *testing.T) {
	s := bundle.NewServer(bundle.Options{Name: "t", Version: "1"})
	err := s.AddTool(mcp.Tool{Name: "job", Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskRequired}},
		func(ctx context.Context, c *bundle.Call) (*mcp.CallToolResult, error) {
			if err := c.Status("phase one"); err != nil {
				return nil, err
			}
			if err := c.Status("phase two"); err != nil {
				return nil, err
			}
			if strings.Contains(string(c.Arguments), "break") {
				return nil, bundle.CallError(mcp.CodeInternalError, "the job's store is gone")
			}
			return mcp.TextResult("done"), nil
		})
	if err != nil {
		t.Fatal(err)
	}
	bad := s.AddTool(mcp.Tool{Name: "odd", Execution: &mcp.ToolExecution{TaskSupport: "sometimes"}},
		func(context.Context, *bundle.Call) (*mcp.CallToolResult, error) { return nil, errors.New("never") })
	if bad == nil || !strings.Contains(bad.Error(), `execution.taskSupport "sometimes"`) {
		t.Errorf("a bad taskSupport: %v", bad)
	}
	c := serve(t, t.Context(), s)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	diff(t, decode(t, `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"job","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}}]}}`), c.recv())

	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"job","arguments":{},"_meta":{"progressToken":"p"}}}`)
	for i, msg := range []string{"phase one", "phase two"} {
		diff(t, decode(t, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":`+string(rune('1'+i))+
			`,"message":"`+msg+`","_meta":{"io.toolnode/request":2}}}`), c.recv())
	}
	diff(t, decode(t, `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"done"}]}}`), c.recv())

	c.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"job","arguments":{"break":true}}}`)
	diff(t, decode(t, `{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"the job's store is gone"}}`), c.recv())
}
