package node

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolnode/toolnode/runtime/internal/search"

	"github.com/google/go-cmp/cmp"

	"github.com/toolnode/toolnode/runtime/internal/argcheck"
)

// TestMetaToolDefinitions holds the definitions to what tools/list needs: JSON objects
// named as the constants say, whose input schemas compile and take the documented calls.
func TestMetaToolDefinitions(t *testing.T) {
	defs := map[string]json.RawMessage{SearchToolName: SearchTool(), ExecuteToolName: ExecuteTool()}
	for name, def := range defs {
		var d struct {
			Name        string         `json:"name"`
			Description string         `json:"description"`
			InputSchema map[string]any `json:"inputSchema"`
		}
		if err := json.Unmarshal(def, &d); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if d.Name != name || d.Description == "" || d.InputSchema["type"] != "object" {
			t.Errorf("%s: name %q, description %q, schema %v", name, d.Name, d.Description, d.InputSchema)
		}
	}
	check := argcheck.New(func(name string) (json.RawMessage, bool) { d, ok := defs[name]; return d, ok })
	for _, tt := range []struct {
		tool, args string
		valid      bool
	}{
		{SearchToolName, `{"query": "speed"}`, true},
		{SearchToolName, `{"query": "speed", "limit": 5, "bundle": "meos"}`, true},
		{SearchToolName, `{"query": "", "category": "aggregates"}`, true},
		{SearchToolName, `{"query": "", "category": 3}`, false},
		{SearchToolName, `{"limit": 5}`, false},
		{SearchToolName, `{"query": "x", "limit": 0}`, false},
		{ExecuteToolName, `{"name": "meos.speed", "arguments": {"point": "x"}}`, true},
		{ExecuteToolName, `{"name": "meos.speed", "arguments": [1]}`, false},
		// The bounds the parsers hold, as the schemas state them.
		{SearchToolName, `{"query": "` + strings.Repeat("q", MaxQueryLen) + `", "bundle": "` + strings.Repeat("b", MaxBundleLen) + `"}`, true},
		{SearchToolName, `{"query": "` + strings.Repeat("q", MaxQueryLen+1) + `"}`, false},
		{SearchToolName, `{"query": "q", "bundle": "` + strings.Repeat("b", MaxBundleLen+1) + `"}`, false},
		{SearchToolName, `{"query": "q", "category": "` + strings.Repeat("c", MaxCategoryLen) + `"}`, true},
		{SearchToolName, `{"query": "q", "category": "` + strings.Repeat("c", MaxCategoryLen+1) + `"}`, false},
		{ExecuteToolName, `{"name": "` + strings.Repeat("n", MaxNameLen) + `"}`, true},
		{ExecuteToolName, `{"name": "` + strings.Repeat("n", MaxNameLen+1) + `"}`, false},
	} {
		err := check.Check(tt.tool, json.RawMessage(tt.args))
		if (err == nil) != tt.valid {
			t.Errorf("%s %s: %v, want valid %v", tt.tool, tt.args, err, tt.valid)
		}
	}
}

func TestParseSearch(t *testing.T) {
	tests := []struct {
		args    string
		want    search.Query
		wantErr string
	}{
		{`{"query": "speed"}`, search.Query{Text: "speed", Limit: search.DefaultLimit}, ""},
		{`{"query": "speed", "limit": 3, "bundle": "meos"}`, search.Query{Text: "speed", Limit: 3, Bundles: []string{"meos"}}, ""},
		{`{"query": ""}`, search.Query{Text: "", Limit: search.DefaultLimit}, ""},
		{`{"query": "", "category": "aggregates"}`, search.Query{Text: "", Limit: search.DefaultLimit, Category: "aggregates"}, ""},
		{`{"query": "x", "category": ["a"]}`, search.Query{}, "want a string"},
		{`{"query": "x", "category": "` + strings.Repeat("c", MaxCategoryLen+1) + `"}`, search.Query{}, "category is 101 characters long, more than the 100"},
		{`{}`, search.Query{}, "query is missing"},
		{``, search.Query{}, "query is missing"},
		{`{"query": "x", "limit": 1000}`, search.Query{}, "limit is 1000, must be from 1 to 100"},
		{`{"query": "x", "bundles": ["a"]}`, search.Query{}, `unknown field "bundles"`},
		{`{"query": 3}`, search.Query{}, "want a string"},
		{`{"query": "x", "Query": "y"}`, search.Query{}, `unknown field "Query"`},
		{`{"query": "` + strings.Repeat("é", MaxQueryLen) + `"}`, search.Query{Text: strings.Repeat("é", MaxQueryLen), Limit: search.DefaultLimit}, ""},
		{`{"query": "` + strings.Repeat("x", MaxQueryLen+1) + `"}`, search.Query{}, "query is 1001 characters long, more than the 1000"},
		{`{"query": "` + strings.Repeat("x", 15<<20) + `"}`, search.Query{}, "query is 15728640 characters long"},
		{`{"query": "x", "bundle": "` + strings.Repeat("b", MaxBundleLen+1) + `"}`, search.Query{}, "bundle is 65 characters long, more than the 64"},
	}
	for _, tt := range tests {
		got, err := ParseSearch(json.RawMessage(tt.args))
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseSearch(%s): %v, want an error with %q", tt.args, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseSearch(%s): %v", tt.args, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b func(string) bool) bool { return a == nil && b == nil })); diff != "" {
			t.Errorf("ParseSearch(%s) (-want +got):\n%s", tt.args, diff)
		}
	}
}

func TestParseExecute(t *testing.T) {
	tests := []struct {
		args, name, arguments, wantErr string
	}{
		{`{"name": "meos.speed", "arguments": {"point": "x"}}`, "meos.speed", `{"point": "x"}`, ""},
		{`{"name": "meos.speed"}`, "meos.speed", `{}`, ""},
		{`{"name": "meos.speed", "arguments": null}`, "meos.speed", `{}`, ""},
		{`{"arguments": {}}`, "", "", "name is missing"},
		{`{"name": "a", "arguments": "x"}`, "", "", "arguments must be an object"},
		{`{"name": "a", "args": {}}`, "", "", `unknown field "args"`},
		{`{"name": "` + strings.Repeat("n", MaxNameLen) + `"}`, strings.Repeat("n", MaxNameLen), `{}`, ""},
		{`{"name": "` + strings.Repeat("n", 1<<20) + `"}`, "", "", "name is 1048576 characters long, more than the 256"},
	}
	for _, tt := range tests {
		name, arguments, err := ParseExecute(json.RawMessage(tt.args))
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseExecute(%s): %v, want an error with %q", tt.args, err, tt.wantErr)
			}
			continue
		}
		if err != nil || name != tt.name || string(arguments) != tt.arguments {
			t.Errorf("ParseExecute(%s) = %q, %s, %v; want %q, %s", tt.args, name, arguments, err, tt.name, tt.arguments)
		}
	}
}

func TestExecErrorResult(t *testing.T) {
	e := &ExecError{Kind: KindInvalidArguments, Message: "invalid arguments for a: arguments.x: is a string, must be a number",
		Details: map[string]any{"problems": []argcheck.Problem{{Path: "arguments.x", Reason: "is a string, must be a number"}}}}
	want := `{"content":[{"type":"text","text":"invalid arguments for a: arguments.x: is a string, must be a number"}],` +
		`"structuredContent":{"error":{"kind":"invalid_arguments","dispatched":false,"message":"invalid arguments for a: arguments.x: is a string, must be a number",` +
		`"details":{"problems":[{"path":"arguments.x","reason":"is a string, must be a number"}]}}},"isError":true}`
	if got := string(e.Result()); got != want {
		t.Errorf("Result:\n got %s\nwant %s", got, want)
	}
}
