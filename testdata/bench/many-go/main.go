// Command many-go is a bundle with many tools, for benchmarks of large catalogs:
// `many-go N` offers the tools t000 ... t(N-1), each with a description and an input
// schema of the size real tools have, and each answering its own name.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"

	"github.com/toolnode/toolnode/sdk-go/bundle"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

const schema = `{"type":"object","properties":{` +
	`"query":{"type":"string","description":"What to look for"},` +
	`"limit":{"type":"integer","minimum":1,"maximum":100,"description":"Most results to return"},` +
	`"cursor":{"type":"string","description":"Where the previous page ended"}},` +
	`"required":["query"]}`

func main() {
	n := 100
	if len(os.Args) > 1 {
		var err error
		if n, err = strconv.Atoi(os.Args[1]); err != nil || n < 1 || n > 10000 {
			fmt.Fprintln(os.Stderr, "usage: many-go [TOOLS]  (1 to 10000, default 100)")
			os.Exit(2)
		}
	}
	s := bundle.NewServer(bundle.Options{Name: "many-go", Version: "0.1.0"})
	for i := range n {
		name := fmt.Sprintf("t%03d", i)
		err := s.AddTool(mcp.Tool{
			Name:        name,
			Description: fmt.Sprintf("Tool number %d of %d: looks up a query and answers its name.", i, n),
			InputSchema: json.RawMessage(schema),
		}, func(context.Context, *bundle.Call) (*mcp.CallToolResult, error) {
			return mcp.TextResult(name), nil
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, "many-go:", err)
			os.Exit(1)
		}
	}
	if err := s.ServeStdio(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "many-go:", err)
		os.Exit(1)
	}
}
