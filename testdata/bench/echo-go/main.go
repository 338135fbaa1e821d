// Command echo-go is the smallest useful bundle written with the Go SDK: its one tool
// answers the text it is given, so what a benchmark over it measures is the call path.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/toolnode/toolnode/sdk-go/bundle"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

func main() {
	s := bundle.NewServer(bundle.Options{Name: "echo-go", Version: "0.1.0"})
	err := s.AddTool(mcp.Tool{
		Name:        "echo",
		Description: "Answer the text given.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
	}, func(_ context.Context, call *bundle.Call) (*mcp.CallToolResult, error) {
		var args struct {
			Text string `json:"text"`
		}
		if err := call.Bind(&args); err != nil {
			return nil, err
		}
		return mcp.TextResult(args.Text), nil
	})
	if err == nil {
		err = s.ServeStdio(context.Background())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "echo-go:", err)
		os.Exit(1)
	}
}
