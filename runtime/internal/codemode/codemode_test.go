package codemode

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// tableHost is a Host over a fixed table of tools: add(a, b) answers structured content,
// echo(text) its text, fail() an isError result, big(n) n bytes; "hidden.tool" exists but
// the caller may not call it. It counts the calls it was sent.
type tableHost struct{ sent atomic.Int64 }

var hostSchemas = map[string]string{
	"m.add":         `{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"],"additionalProperties":false}`,
	"m.echo":        `{"type":"object","properties":{"text":{"type":"string"}}}`,
	"m.fail":        `{"type":"object"}`,
	"m.big":         `{"type":"object","properties":{"n":{"type":"integer"}}}`,
	"node-lamp.on":  `{"type":"object"}`,
	"hidden.tool":   `{"type":"object"}`,
	"odd.a-b":       `{"type":"object","properties":{"x-y":{"type":"string"}}}`,
	"odd.a_b":       `{"type":"object"}`,
	"json.anything": `{"type":"object"}`,
}

func (h *tableHost) Tool(name string) (json.RawMessage, bool) {
	s, ok := hostSchemas[name]
	return json.RawMessage(s), ok && name != "hidden.tool"
}

// Check checks types and required members, enough for these schemas.
func (h *tableHost) Check(name string, args json.RawMessage) []Problem {
	var a map[string]any
	_ = json.Unmarshal(args, &a)
	var probs []Problem
	if name == "m.add" {
		for _, k := range []string{"a", "b"} {
			v, ok := a[k]
			if !ok {
				probs = append(probs, Problem{Path: "arguments", Reason: "missing " + k})
				continue
			}
			if f, isNum := v.(float64); !isNum || f != float64(int64(f)) {
				probs = append(probs, Problem{Path: "arguments." + k, Reason: "must be an integer"})
			}
		}
	}
	if v, ok := a["text"]; ok {
		if _, isString := v.(string); !isString {
			probs = append(probs, Problem{Path: "arguments.text", Reason: "must be a string"})
		}
	}
	return probs
}

func (h *tableHost) Call(ctx context.Context, name string, args json.RawMessage) CallResult {
	if _, ok := h.Tool(name); !ok {
		return CallResult{Failure: &Failure{Kind: "unknown_tool", Message: "no tool " + name}}
	}
	if probs := h.Check(name, args); probs != nil {
		return CallResult{Failure: &Failure{Kind: "invalid_arguments", Message: probs[0].Reason}}
	}
	h.sent.Add(1)
	var a struct {
		A, B int
		Text string
		N    int
	}
	_ = json.Unmarshal(args, &a)
	text := func(s string) CallResult {
		b, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": s}}})
		return CallResult{Result: b}
	}
	switch name {
	case "m.add":
		b, _ := json.Marshal(map[string]any{"content": []any{}, "structuredContent": map[string]any{"sum": a.A + a.B}})
		return CallResult{Result: b}
	case "m.fail":
		return CallResult{Result: json.RawMessage(`{"content":[{"type":"text","text":"it broke"}],"isError":true}`)}
	case "m.big":
		return text(strings.Repeat("x", a.N))
	}
	return text(name + ":" + a.Text)
}

func (h *tableHost) Search(query string, limit int) (json.RawMessage, error) {
	return json.Marshal([]map[string]any{{"name": "m.echo", "signature": "m.echo(text: str = None)"}})
}

// runCode runs code over a tableHost.
func runCode(t testing.TB, b Bounds, code string) (Outcome, *tableHost) {
	t.Helper()
	h := &tableHost{}
	names := make([]string, 0, len(hostSchemas))
	for n := range hostSchemas {
		names = append(names, n)
	}
	return Run(context.Background(), h, NewNames(names), b, code), h
}

func TestRunValues(t *testing.T) {
	for _, tc := range []struct{ name, code, want string }{
		{"structured content", `m.add(a=1, b=2)["sum"]`, `3`},
		{"text", `m.echo(text="hi")`, `"m.echo:hi"`},
		{"a seat's tool", `node_lamp.on()`, `"node-lamp.on:"`},
		{"by name", `call("odd.a-b", {"x-y": "z"})`, `"odd.a-b:"`},
		{"None leaves an argument out", `m.echo(text=None)`, `"m.echo:"`},
		{"a tool error is a value", `r = m.fail()
[is_error(r), r.kind, r.dispatched, r.message, bool(r)]`, `[true,"tool_error",true,"it broke",false]`},
		{"a refused call is a value", `r = call("no" + "such")
[r.kind, r.dispatched]`, `["unknown_tool",false]`},
		{"parallel in order", `[x["sum"] for x in parallel([(m.add, {"a": i, "b": i}) for i in range(5)])]`, `[0,2,4,6,8]`},
		{"search", `search("echo")[0]["signature"]`, `"m.echo(text: str = None)"`},
		{"json", `json.decode(m.echo(text="1")[7:])`, `1`},
		{"no last expression", `x = 1`, `null`},
		{"an error answered", `m.fail()`, `{"error":{"tool":"m.fail","kind":"tool_error","dispatched":true,"message":"it broke"}}`},
		{"big ints", `12345678901234567890123 * 10`, `123456789012345678901230`},
	} {
		out, _ := runCode(t, Bounds{}, tc.code)
		if out.Error != nil {
			t.Errorf("%s: %+v", tc.name, out.Error)
			continue
		}
		if string(out.Value) != tc.want {
			t.Errorf("%s: value %s, want %s", tc.name, out.Value, tc.want)
		}
	}
}

// Programs that cannot run fail before any call, naming each problem at its line.
func TestRunChecksBeforeRunning(t *testing.T) {
	for _, tc := range []struct{ name, code, want string }{
		{"syntax", "m.echo(text=", "line 2:"},
		{"undefined", "nosuch.tool()", "undefined: nosuch"},
		{"a hidden bundle", "hidden.tool()", "undefined: hidden"},
		{"unknown tool", "m.echo(text='a')\nm.ech(text='b')", "line 3:1: m.ech: no tool m.ech"},
		{"missing", "m.add(a=1)", `the required argument "b" is missing`},
		{"None is missing", "m.add(a=1, b=None)", `the required argument "b" is missing`},
		{"unknown argument", "m.add(a=1, b=2, c=3)", `takes no argument "c"`},
		{"wrong literal", "m.add(a=1, b='2')", "arguments.b: must be an integer"},
		{"positional", "m.echo('x')", "keyword arguments only"},
		{"by name", `call("m.add", {"a": 1})`, `"b" is missing`},
		{"by name, hidden", `call("hidden.tool")`, "no tool is named hidden.tool"},
		{"in parallel", `parallel([(m.add, {"a": "x", "b": 1})])`, "arguments.a"},
		{"in a function never called", "def f():\n    return m.echo(text=1)", "line 3:"},
		{"a namespace", "m()", "m is a namespace"},
	} {
		out, h := runCode(t, Bounds{}, "x = m.echo(text='before')\n"+tc.code)
		if out.Error == nil || out.Error.Kind != KindInvalidProgram || out.Error.Dispatched || !strings.Contains(out.Error.Message, tc.want) {
			t.Errorf("%s: %+v, want an invalid program saying %q", tc.name, out.Error, tc.want)
		}
		if h.sent.Load() != 0 {
			t.Errorf("%s: %d calls were sent", tc.name, h.sent.Load())
		}
	}
	// What only running tells is checked before the call, which is not sent.
	out, h := runCode(t, Bounds{}, `r = m.add(a=1, b=str(2))
[r.kind, r.dispatched]`)
	if string(out.Value) != `["invalid_arguments",false]` || h.sent.Load() != 0 {
		t.Errorf("a computed wrong argument: %s %+v, %d sent", out.Value, out.Error, h.sent.Load())
	}
}

func TestRunErrorsHaveTheirLine(t *testing.T) {
	out, _ := runCode(t, Bounds{}, "x = 1\ny = m.echo(text='a')\nz = {}[\"missing\"]")
	if out.Error == nil || out.Error.Kind != KindProgramError || out.Error.Line != 3 || !out.Error.Dispatched {
		t.Errorf("%+v, want a program error at line 3 after a call was sent", out.Error)
	}
	out, _ = runCode(t, Bounds{}, "fail('no good')")
	if out.Error == nil || out.Error.Line != 1 || !strings.Contains(out.Error.Message, "no good") || out.Error.Dispatched {
		t.Errorf("fail(): %+v", out.Error)
	}
}

func TestRunBounds(t *testing.T) {
	b := Bounds{Steps: 5000, Time: 200 * time.Millisecond, Calls: 3, Parallel: 2, Bytes: 1000}
	for _, tc := range []struct{ bound, code string }{
		{BoundSteps, "while True:\n    pass"},
		{BoundCalls, "[m.echo(text='x') for i in range(4)]"},
		{BoundCalls, "[search('x') for i in range(4)]"},
		{BoundParallel, "parallel([m.fail, m.fail, m.fail])"},
		{BoundBytes, "m.big(n=600)\nm.big(n=600)"},
		{BoundBytes, "'x' * 2000"},
		{BoundBytes, "m.echo(text='x' * 2000)"},
		{BoundBytes, "s = 'x'\nfor i in range(20):\n    s += s\n    print(s)"},
	} {
		out, _ := runCode(t, b, tc.code)
		if out.Error == nil || out.Error.Kind != KindBound || out.Error.Bound != tc.bound {
			t.Errorf("%q: %+v, want the %s bound", tc.code, out.Error, tc.bound)
		}
	}
}

// A cancelled run says so.
func TestRunCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out := Run(ctx, &tableHost{}, NewNames([]string{"m.echo"}), Bounds{}, "while True:\n    pass")
	if out.Error == nil || out.Error.Kind != KindCancelled {
		t.Errorf("%+v, want cancelled", out.Error)
	}
}

func TestNames(t *testing.T) {
	n := NewNames([]string{"meos.speed", "node-lamp.on", "go.node-lamp.on", "a.b-c", "a.b_c", "x.y", "x.y.z", "len.x", "b.for", "c.3d"})
	for path, want := range map[string]string{"meos.speed": "meos.speed", "node_lamp.on": "node-lamp.on", "go.node_lamp.on": "go.node-lamp.on",
		"b.for_": "b.for", "c._3d": "c.3d", "x.y.z": "x.y.z"} {
		if got, ok := n.Tool(path); !ok || got != want {
			t.Errorf("%s: %q %v, want %q", path, got, ok, want)
		}
	}
	for _, path := range []string{"a.b_c", "x.y", "len.x"} { // colliding, a namespace too, a builtin's name
		if got, ok := n.Tool(path); ok {
			t.Errorf("%s names %s; want it reached by call() alone", path, got)
		}
	}
	for _, tc := range []struct{ name, schema, want string }{
		{"meos.speed", `{"properties":{"unit":{"type":"string"},"point":{"type":["string","null"]}},"required":["point"]}`, `meos.speed(point: str | None, unit: str = None)`},
		{"a.b-c", `{"properties":{"v":{"type":"integer"}}}`, `call("a.b-c", {"v": int = None})`},
		{"node-lamp.on", `{"properties":{"odd-key":{"type":"array"}},"required":["odd-key"]}`, `call("node-lamp.on", {"odd-key": list})`},
	} {
		if got := n.Signature(tc.name, json.RawMessage(tc.schema)); got != tc.want {
			t.Errorf("Signature(%s) = %s, want %s", tc.name, got, tc.want)
		}
	}
}

// FuzzRun runs any program text: the interpreter never panics, and every bound holds.
func FuzzRun(f *testing.F) {
	for _, seed := range []string{
		`m.add(a=1, b=2)["sum"]`,
		`[m.echo(text=str(i)) for i in range(3)]`,
		`parallel([(m.add, {"a": 1, "b": 2}), ("m.echo", {"text": "x"})])`,
		"r = m.fail()\n[is_error(r), r.kind]",
		"def f(n):\n    return n * 2\nf(21)",
		"s = 'ab'\nfor i in range(12):\n    s += s\ns",
		"while True:\n    m.echo(text='x')",
		`call("odd.a-b", {"x-y": "z"})`,
		`json.encode({"a": [1, 2.5, None, True]})`,
		"x = [1]\nx.append(x)\nx",
		`search("speed", limit=2)`,
		"m.add(a=1)",
		"print('x' * 900)",
	} {
		f.Add(seed)
	}
	// The bounds do not cover memory (docs/codemode.md): a mutated seed that doubles a
	// string 50 times holds what the time bound lets it reach, gigabytes in 2 s, some
	// 250 MiB in 250 ms.
	b := Bounds{Steps: 20_000, Time: 250 * time.Millisecond, Calls: 5, Parallel: 2, Bytes: 1000}
	f.Fuzz(func(t *testing.T, code string) {
		out, h := runCode(t, b, code)
		if out.Calls > b.Calls || int(h.sent.Load()) > b.Calls {
			t.Fatalf("%d calls, %d sent; the bound is %d", out.Calls, h.sent.Load(), b.Calls)
		}
		if int64(len(out.Value)) > b.Bytes || int64(len(out.Output)) > b.Bytes {
			t.Fatalf("a value of %d bytes, output of %d; the bound is %d", len(out.Value), len(out.Output), b.Bytes)
		}
		if out.Error != nil && out.Error.Kind == KindInvalidProgram && h.sent.Load() != 0 {
			t.Fatalf("an invalid program sent %d calls", h.sent.Load())
		}
		if out.Error == nil && !json.Valid(out.Value) {
			t.Fatalf("the value is no JSON: %q", out.Value)
		}
	})
}

// wideHost serves a namespace of many tools of which the caller may call only the last,
// counting how often it is asked whether a tool may be called.
type wideHost struct {
	tableHost
	allowed string
	asked   int
}

func (h *wideHost) Tool(name string) (json.RawMessage, bool) {
	h.asked++
	return json.RawMessage(`{"type":"object"}`), name == h.allowed
}

// A program naming a wide namespace again and again costs one look at its tools per name
// for the whole run, not one per use: the host is asked about each tool a bounded number
// of times, however often the program names the namespace.
func TestNamingANamespaceAgainLooksAtItsToolsOnce(t *testing.T) {
	const tools, uses = 300, 200
	names := make([]string, tools)
	for i := range names {
		names[i] = fmt.Sprintf("wide.sub.t%03d", i)
	}
	h := &wideHost{allowed: names[tools-1]}
	out := Run(context.Background(), h, NewNames(names), Bounds{}, fmt.Sprintf(`
n = 0
for i in range(%d):
    if wide.sub:
        n += 1
n`, uses))
	if out.Error != nil || string(out.Value) != fmt.Sprint(uses) {
		t.Fatalf("outcome %s %+v, want %d", out.Value, out.Error, uses)
	}
	// The check before the run and the two namespaces' first uses each look at every
	// tool once; without the run keeping the answers, every use would.
	if limit := 4 * tools; h.asked > limit {
		t.Errorf("the host was asked %d times whether a tool may be called, want at most %d for %d tools named %d times", h.asked, limit, tools, uses)
	}
}
