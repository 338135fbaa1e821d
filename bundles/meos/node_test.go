package meos_test

// The MEOS bundle served by the real node and called with the official Go SDK client: every
// case of tests/cases.json, the same expectations tests/test_bundle.py checks on the bare
// bundle, now against meos.<tool>.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// node is the toolnode binary TestMain builds.
var node string

func TestMain(m *testing.M) {
	if _, err := os.Stat(filepath.Join("build", "meos-bundle")); err != nil {
		fmt.Fprintln(os.Stderr, "FAIL: the MEOS bundle is not built; run make -C bundles/meos")
		os.Exit(1)
	}
	dir, err := os.MkdirTemp("", "meos-node-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	node = filepath.Join(dir, "toolnode")
	build := exec.Command("go", "build", "-o", node, "./runtime/cmd/toolnode")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: go build ./runtime/cmd/toolnode: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// The format of tests/cases.json; its "about" field describes it. Unknown members are an
// error, so an expectation added to the file cannot be skipped here unnoticed.
type casesFile struct {
	About    string            `json:"about"`
	Fixtures map[string]string `json:"fixtures"`
	Cases    []testCase        `json:"cases"`
}

type testCase struct {
	Name      string         `json:"name"`
	Tool      string         `json:"tool"`
	Arguments map[string]any `json:"arguments"`
	Expect    struct {
		Error        *string     `json:"error"`
		Text         *string     `json:"text"`
		TextContains []string    `json:"text_contains"`
		TextRegex    string      `json:"text_regex"`
		JSON         any         `json:"json"`
		Structured   any         `json:"structured"`
		Points       [][]float64 `json:"points"`
	} `json:"expect"`
	Why   string         `json:"why"`
	Leaks string         `json:"leaks"`
	Pad   map[string]int `json:"pad"`
}

func loadCases(t *testing.T) casesFile {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("tests", "cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f casesFile
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		t.Fatalf("tests/cases.json: %v", err)
	}
	return f
}

var fixtureRef = regexp.MustCompile(`\$\{(\w+)\}`)

// arguments returns the case's arguments with ${NAME} fixtures filled in and padding applied.
func (f casesFile) arguments(t *testing.T, c testCase) map[string]any {
	t.Helper()
	var fill func(v any) any
	fill = func(v any) any {
		switch v := v.(type) {
		case string:
			return fixtureRef.ReplaceAllStringFunc(v, func(ref string) string {
				name := fixtureRef.FindStringSubmatch(ref)[1]
				value, ok := f.Fixtures[name]
				if !ok {
					t.Fatalf("case %q uses unknown fixture %s", c.Name, name)
				}
				return value
			})
		case map[string]any:
			out := map[string]any{}
			for k, x := range v {
				out[k] = fill(x)
			}
			return out
		case []any:
			out := make([]any, len(v))
			for i, x := range v {
				out[i] = fill(x)
			}
			return out
		}
		return v
	}
	args := fill(c.Arguments).(map[string]any)
	for k, size := range c.Pad {
		s := args[k].(string)
		args[k] = s + strings.Repeat(" ", max(0, size-len(s)))
	}
	return args
}

func (f casesFile) find(t *testing.T, name string) testCase {
	t.Helper()
	for _, c := range f.Cases {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no case %q in tests/cases.json", name)
	return testCase{}
}

// syncBuffer collects the node's stderr while the node writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// bundleNode is the command of a node serving a folder that holds only this bundle, with
// the flags given.
func bundleNode(t *testing.T, flags ...string) *exec.Cmd {
	t.Helper()
	here, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(here, filepath.Join(dir, "meos")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, append([]string{"serve", "--bundles", dir}, flags...)...)
	// bundle.json lets the bundle inherit MEOS_WAYS: the road network of the network-point
	// tools, here the small one made for the tests.
	cmd.Env = append(os.Environ(), "MEOS_WAYS="+filepath.Join(here, "tests", "data", "ways.csv"))
	return cmd
}

// startHTTP starts cmd, a node given --http 127.0.0.1:0, and returns the URL of its HTTP
// front once it has logged it, and its log. When the test ends the node is interrupted and
// waited for.
func startHTTP(t *testing.T, cmd *exec.Cmd) (string, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() })
	re := regexp.MustCompile(`url=(http://\S+/mcp)`)
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if m := re.FindStringSubmatch(logs.String()); m != nil {
			return m[1], logs
		}
	}
	t.Fatalf("the node did not start its HTTP front:\n%s", logs)
	return "", nil
}

// startNode serves a folder holding only this bundle and connects the Go SDK client to the
// node's stdio front. The node's log is shown when the test fails.
func startNode(t *testing.T) *mcp.ClientSession {
	t.Helper()
	// Every tool listed, under the names the documentation gives them (clients_test.go
	// tests what the defaults list).
	cmd := bundleNode(t, "--names", "canonical", "--view", "full")
	logs := &syncBuffer{}
	cmd.Stderr = logs
	client := mcp.NewClient(&mcp.Implementation{Name: "meos-node-test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to the node: %v\nnode log:\n%s", err, logs)
	}
	t.Cleanup(func() {
		s.Close()
		if t.Failed() {
			t.Logf("node log:\n%s", logs)
		}
	})
	return s
}

// call calls the bundle's tool by its own name.
func call(t *testing.T, s *mcp.ClientSession, tool string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	return callTool(t, s, "meos."+tool, args)
}

// callTool calls a tool of the node by its full name; a call that gets no result fails the
// test.
func callTool(t *testing.T, s *mcp.ClientSession, tool string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("call %s %v: %v", tool, args, err)
	}
	return res
}

// approx compares numbers as the Python checker does: within 1e-6, relative past 1.
var approx = cmp.Comparer(func(a, b float64) bool {
	return math.Abs(a-b) <= 1e-6*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
})

// subset keeps of got only what want names, so that cmp.Diff checks want as a subset of got.
func subset(want, got any) any {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return got
		}
		out := map[string]any{}
		for k := range w {
			if v, ok := g[k]; ok {
				out[k] = subset(w[k], v)
			}
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return got
		}
		out := make([]any, len(g))
		for i := range g {
			out[i] = subset(w[i], g[i])
		}
		return out
	}
	return got
}

var pointRE = regexp.MustCompile(`POINT(?: ?Z)?\(([^()]*)\)`)

// points reads the coordinates of each POINT(...) in text, keeping as many of each as the
// matching wanted point has (a wanted x y may match a POINT Z).
func points(text string, want [][]float64) [][]float64 {
	var out [][]float64
	for i, m := range pointRE.FindAllStringSubmatch(text, -1) {
		var p []float64
		for _, f := range strings.Fields(m[1]) {
			v, err := strconv.ParseFloat(f, 64)
			if err != nil {
				v = math.NaN()
			}
			p = append(p, v)
		}
		if i < len(want) && len(p) > len(want[i]) {
			p = p[:len(want[i])]
		}
		out = append(out, p)
	}
	return out
}

// check reports how res differs from what c expects.
func check(t *testing.T, c testCase, res *mcp.CallToolResult) {
	t.Helper()
	var text string
	if len(res.Content) > 0 {
		if tc, ok := res.Content[0].(*mcp.TextContent); ok {
			text = tc.Text
		}
	}
	e := c.Expect
	if e.Error != nil {
		if !res.IsError || !strings.Contains(text, *e.Error) {
			t.Errorf("want an error containing %q, got isError %v: %q", *e.Error, res.IsError, text)
		}
		return
	}
	if res.IsError {
		t.Fatalf("unexpected error: %q", text)
	}
	if res.StructuredContent != nil {
		var fromText any
		if err := json.Unmarshal([]byte(text), &fromText); err != nil {
			t.Errorf("text block beside structuredContent is not JSON: %v", err)
		} else if d := cmp.Diff(res.StructuredContent, fromText); d != "" {
			t.Errorf("text block differs from structuredContent (-structured +text):\n%s", d)
		}
	}
	if e.Text != nil && text != *e.Text {
		t.Errorf("text (-want +got):\n%s", cmp.Diff(*e.Text, text))
	}
	for _, part := range e.TextContains {
		if !strings.Contains(text, part) {
			t.Errorf("want %q in %q", part, text)
		}
	}
	if e.TextRegex != "" && !regexp.MustCompile(e.TextRegex).MatchString(text) {
		t.Errorf("%q does not match %q", text, e.TextRegex)
	}
	if e.JSON != nil {
		var got any
		if err := json.Unmarshal([]byte(text), &got); err != nil {
			t.Errorf("text is not JSON: %v: %q", err, text)
		} else if d := cmp.Diff(e.JSON, subset(e.JSON, got), approx); d != "" {
			t.Errorf("JSON text (-want +got):\n%s", d)
		}
	}
	if e.Structured != nil {
		if d := cmp.Diff(e.Structured, subset(e.Structured, res.StructuredContent), approx); d != "" {
			t.Errorf("structuredContent (-want +got):\n%s", d)
		}
	}
	if e.Points != nil {
		if d := cmp.Diff(e.Points, points(text, e.Points), approx); d != "" {
			t.Errorf("points in %q (-want +got):\n%s", text, d)
		}
	}
}

// Every case, in the file's order, through one node; after each error the next good call
// must still work.
func TestCasesThroughTheNode(t *testing.T) {
	f := loadCases(t)
	good := f.find(t, "length of a 3-4-5 segment")
	s := startNode(t)
	errorCases := 0
	for _, c := range f.Cases {
		t.Run(c.Name, func(t *testing.T) {
			check(t, c, call(t, s, c.Tool, f.arguments(t, c)))
			if c.Expect.Error != nil {
				errorCases++
				t.Run("then a good call", func(t *testing.T) {
					check(t, good, call(t, s, good.Tool, f.arguments(t, good)))
				})
			}
		})
	}
	if errorCases < 30 {
		t.Errorf("only %d error cases in tests/cases.json, want more than 30", errorCases)
	}
}

// Besides its own tools, the node lists exactly those the README documents and the
// generated ones, under the bundle's name.
func TestListedToolsAreTheDocumentedOnes(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	var documented []string
	for _, m := range regexp.MustCompile(`(?m)^### (meos\.\w+)$`).FindAllSubmatch(readme, -1) {
		documented = append(documented, string(m[1]))
	}
	if len(documented) != 19 {
		t.Errorf("README documents %d tools, want 19: %v", len(documented), documented)
	}
	// The generated tools are documented in docs/functions.md, one row each.
	b, err := os.ReadFile(filepath.Join("build", "gen", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var manifest []struct{ Name, Function string }
	if err := json.Unmarshal(b, &manifest); err != nil {
		t.Fatalf("build/gen/manifest.json: %v", err)
	}
	table, err := os.ReadFile(filepath.Join("docs", "functions.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range manifest {
		// The row of the function it calls; an aggregate's row names the tool.
		row := regexp.MustCompile("(?m)^\\| `" + regexp.QuoteMeta(m.Function) + "` \\|.*$").Find(table)
		switch {
		case row == nil:
			t.Errorf("docs/functions.md has no row for %s", m.Function)
		case m.Name != m.Function && !strings.Contains(string(row), "`meos."+m.Name+"`"):
			t.Errorf("the row of %s does not name its tool meos.%s: %s", m.Function, m.Name, row)
		}
		documented = append(documented, "meos."+m.Name)
	}
	s := startNode(t)
	var listed []string
	for tool, err := range s.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatalf("list tools: %v", err)
		}
		if strings.HasPrefix(tool.Name, "toolnode.") {
			continue // the node's own tools
		}
		listed = append(listed, tool.Name)
		schema, _ := tool.InputSchema.(map[string]any)
		if tool.Description == "" || schema["type"] != "object" {
			t.Errorf("%s: want a description and an object input schema, got %q and %v", tool.Name, tool.Description, tool.InputSchema)
		}
	}
	slices.Sort(documented)
	slices.Sort(listed)
	if d := cmp.Diff(documented, listed); d != "" {
		t.Errorf("listed tools (-documented +listed):\n%s", d)
	}
}

// The node's search filters by the category each tool carries in its _meta: a client is
// given the MEOS aggregates, or the MEOS tools of any other category, without the list of
// every tool.
func TestSearchByCategory(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("build", "gen", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var manifest []struct{ Name, Category string }
	if err := json.Unmarshal(b, &manifest); err != nil {
		t.Fatal(err)
	}
	var aggregates []string
	for _, m := range manifest {
		if m.Category == "aggregates" {
			aggregates = append(aggregates, "meos."+m.Name)
		}
	}
	if len(aggregates) < 10 || len(aggregates) > 100 {
		t.Fatalf("%d aggregates in the manifest; the test lists them in one page of at most 100", len(aggregates))
	}
	s := startNode(t)
	search := func(args map[string]any) (results []struct{ Name, Category string }, categories []string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "toolnode.search", Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("toolnode.search %v: %v %v", args, err, res)
		}
		raw, _ := json.Marshal(res.StructuredContent)
		var out struct {
			Results    []struct{ Name, Category string }
			Categories []string
		}
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatal(err)
		}
		return out.Results, out.Categories
	}

	listed, _ := search(map[string]any{"query": "", "category": "aggregates", "limit": 100})
	var names []string
	for _, r := range listed {
		names = append(names, r.Name)
	}
	slices.Sort(aggregates)
	if d := cmp.Diff(aggregates, names); d != "" {
		t.Errorf("the aggregates listed (-manifest +search):\n%s", d)
	}
	found, _ := search(map[string]any{"query": "temporal average", "category": "aggregates", "limit": 3})
	if len(found) == 0 || found[0].Name != "meos.tnumber_tavg_agg" || found[0].Category != "aggregates" {
		t.Errorf("temporal average among the aggregates: %v, want meos.tnumber_tavg_agg first", found)
	}
	none, categories := search(map[string]any{"query": "", "category": "aggregate"})
	if len(none) != 0 || !slices.Contains(categories, "aggregates") || !slices.Contains(categories, "spatial relationships") {
		t.Errorf("an unknown category: results %v, categories %v; want none, and the categories there are", none, categories)
	}
}
