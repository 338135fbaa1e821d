package app

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnode/toolnode/sdk-go/app/provider"
)

// bombSchema has a $defs entry whose default holds 20,000 numbers (109 KB of JSON), named by
// refs properties: with 1,600 of them, 136 KB of tools/list that inlines to 174 MB.
func bombSchema(refs int) map[string]any {
	big := make([]any, 20_000)
	for i := range big {
		big[i] = i
	}
	props := map[string]any{}
	for i := range refs {
		props[fmt.Sprintf("p%d", i)] = map[string]any{"$ref": "#/$defs/big"}
	}
	return map[string]any{"type": "object", "properties": props,
		"$defs": map[string]any{"big": map[string]any{"type": "array", "items": map[string]any{"type": "integer"}, "default": big}}}
}

// rssKiB is this process's resident memory, as Linux's /proc reports it; 0 elsewhere.
func rssKiB() int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kib, _ := strconv.Atoi(f[1])
			return kib
		}
	}
	return 0
}

func TestASchemaBombIsLeftOutByNameAndTheRequestStaysBounded(t *testing.T) {
	const wide = 20 // each under the bound of one tool (9 copies, about 980 KB), together past the bound of all
	s := newServer(t, "")
	s.mcp.AddTool(&mcp.Tool{Name: "bomb", InputSchema: bombSchema(1_600)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	for i := range wide {
		s.mcp.AddTool(&mcp.Tool{Name: fmt.Sprintf("wide%02d", i), InputSchema: bombSchema(9)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
	}
	n, err := New(Config{URL: s.http.URL + "/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if _, err := n.Tools(context.Background()); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	before := rssKiB()
	d, err := n.Definitions(context.Background(), provider.OpenAI, false)
	if err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(d.Tools) // what the application sends the model API
	if err != nil {
		t.Fatal(err)
	}
	grew := rssKiB() - before
	if err := d.LeftOut["bomb"]; err == nil || !strings.Contains(err.Error(), "tool bomb left out") ||
		!strings.Contains(err.Error(), "expands past 1048576 bytes") {
		t.Errorf("the bomb: %v", err)
	}
	over := 0
	for name, err := range d.LeftOut {
		if strings.Contains(err.Error(), "allowed in all") {
			over++
			if !strings.HasPrefix(name, "wide") {
				t.Errorf("%s left out by the bound in all: %v", name, err)
			}
		}
	}
	if _, given := d.Schemas["a.echo"]; over == 0 || !given {
		t.Errorf("left out %v; given %d tools", d.LeftOut, len(d.Tools))
	}
	if len(body) > 17<<20 {
		t.Errorf("the definitions take %d bytes of JSON", len(body))
	}
	// The 16 MiB the bound in all lets through, and the encoder's buffers.
	if grew > 96<<10 {
		t.Errorf("resident memory grew %d KiB making and encoding the definitions", grew)
	}
	t.Logf("%d wide tools left out by the bound in all; definitions %d bytes; grew %d KiB", over, len(body), grew)
}
