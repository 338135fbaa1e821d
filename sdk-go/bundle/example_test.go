package bundle_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/toolnode/toolnode/sdk-go/bundle"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

func Example() {
	s := bundle.NewServer(bundle.Options{Name: "hello", Version: "1.0.0"})
	err := s.AddTool(mcp.Tool{
		Name:        "greet",
		Description: "Say hello",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
	}, func(ctx context.Context, call *bundle.Call) (*mcp.CallToolResult, error) {
		var args struct {
			Name string `json:"name"`
		}
		if err := call.Bind(&args); err != nil {
			return nil, err
		}
		return mcp.TextResult("Hello, " + args.Name + "!"), nil
	})
	if err != nil {
		fmt.Println(err)
		return
	}

	// A real bundle calls s.ServeStdio(ctx); here the client's lines come from a string.
	in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{"name":"Ada"}}}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"greet","arguments":{}}}
`)
	if err := s.Serve(context.Background(), in, os.Stdout); err != nil {
		fmt.Println(err)
	}
	// Unordered output:
	// {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Hello, Ada!"}]}}
	// {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"missing required argument \"name\""}],"isError":true}}
}
