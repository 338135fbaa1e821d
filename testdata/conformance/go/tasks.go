package main

import (
	"context"
	"fmt"
	"time"

	"github.com/toolnode/toolnode/sdk-go/bundle"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// The tools of the tasks extension's scenarios (SEP-2663). The bundle holds no tasks
// itself: a node in front of it does, and each tool only says whether it allows or
// requires a task, reports its status and asks for input, in whichever era it is called.

func execution(support string) *mcp.ToolExecution { return &mcp.ToolExecution{TaskSupport: support} }

// sleep waits d, or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

var (
	askConfirm = question(mcp.MethodElicitation, `{"message":"Delete the file?",
		"requestedSchema":{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}}`)
	askInput = func(n int) mcp.InputRequest {
		return question(mcp.MethodElicitation, fmt.Sprintf(`{"message":"Input %d, please",
			"requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}`, n))
	}
)

func taskTools() []tool {
	return []tool{
		{mcp.Tool{Name: "greet", Description: "Greets someone at once; never a task", Execution: execution(mcp.TaskForbidden),
			InputSchema: compact(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)},
			func(_ context.Context, c *bundle.Call) (*mcp.CallToolResult, error) {
				var a struct{ Name string }
				if err := c.Bind(&a); err != nil {
					return nil, err
				}
				return mcp.TextResult("Hello, " + a.Name + "!"), nil
			}},
		{mcp.Tool{Name: "slow_compute", Description: "Computes for the given seconds", Execution: execution(mcp.TaskOptional),
			InputSchema: compact(`{"type":"object","properties":{"seconds":{"type":"number"},"label":{"type":"string"}}}`)},
			func(ctx context.Context, c *bundle.Call) (*mcp.CallToolResult, error) {
				var a struct {
					Seconds float64
					Label   string
				}
				if err := c.Bind(&a); err != nil {
					return nil, err
				}
				if err := c.Status("computing " + a.Label); err != nil {
					return nil, err
				}
				if err := sleep(ctx, time.Duration(a.Seconds*float64(time.Second))); err != nil {
					return nil, err
				}
				return mcp.TextResult(fmt.Sprintf("computed %s in %gs", a.Label, a.Seconds)), nil
			}},
		{mcp.Tool{Name: "failing_job", Description: "Fails as a tool after a second", Execution: execution(mcp.TaskRequired), InputSchema: noArgs},
			func(ctx context.Context, c *bundle.Call) (*mcp.CallToolResult, error) {
				if err := c.Status("working"); err != nil {
					return nil, err
				}
				if err := sleep(ctx, time.Second); err != nil {
					return nil, err
				}
				return mcp.ErrorResult("the job failed, as it always does"), nil
			}},
		{mcp.Tool{Name: "protocol_error_job", Description: "Fails with a JSON-RPC error", Execution: execution(mcp.TaskOptional), InputSchema: noArgs},
			func(ctx context.Context, c *bundle.Call) (*mcp.CallToolResult, error) {
				if err := c.Status("working"); err != nil {
					return nil, err
				}
				return nil, bundle.CallError(mcp.CodeInternalError, "the job broke down")
			}},
		{mcp.Tool{Name: "confirm_delete", Description: "Asks to confirm a deletion", Execution: execution(mcp.TaskOptional),
			InputSchema: compact(`{"type":"object","properties":{"filename":{"type":"string"}}}`)},
			func(ctx context.Context, c *bundle.Call) (*mcp.CallToolResult, error) {
				var a struct{ Filename string }
				if err := c.Bind(&a); err != nil {
					return nil, err
				}
				if err := c.Status("about to delete " + a.Filename); err != nil {
					return nil, err
				}
				answers, err := c.Ask(ctx, mcp.InputRequests{"confirm": askConfirm})
				if err != nil {
					return nil, err
				}
				if fieldBool(answers["confirm"], "confirm") {
					return mcp.TextResult("deleted " + a.Filename), nil
				}
				return mcp.TextResult("kept " + a.Filename), nil
			}},
		{mcp.Tool{Name: "multi_input", Description: "Asks two questions at once", Execution: execution(mcp.TaskOptional), InputSchema: noArgs},
			func(ctx context.Context, c *bundle.Call) (*mcp.CallToolResult, error) {
				if err := c.Status("asking"); err != nil {
					return nil, err
				}
				answers, err := c.Ask(ctx, mcp.InputRequests{"first": askInput(1), "second": askInput(2)})
				if err != nil {
					return nil, err
				}
				return mcp.TextResult(field(answers["first"], "name") + " and " + field(answers["second"], "name")), nil
			}},
		{mcp.Tool{Name: "test_tool_with_task", Description: "Asks a name, then works on as a task", Execution: execution(mcp.TaskRequired), InputSchema: noArgs},
			func(ctx context.Context, c *bundle.Call) (*mcp.CallToolResult, error) {
				// The question comes first, asked on the client's request: only then is
				// there work for a task.
				answers, err := c.Ask(ctx, mcp.InputRequests{"user_name": askName})
				if err != nil {
					return nil, err
				}
				name := field(answers["user_name"], "name")
				if err := c.Status("greeting " + name); err != nil {
					return nil, err
				}
				if err := sleep(ctx, 200*time.Millisecond); err != nil {
					return nil, err
				}
				return mcp.TextResult("Hello, " + name + "!"), nil
			}},
	}
}
