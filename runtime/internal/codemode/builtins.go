package codemode

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	starjson "go.starlark.net/lib/json"
	"go.starlark.net/starlark"

	"github.com/toolnode/toolnode/sdk-go/rawjson"
)

// What a program has besides the language: its tools as functions under their namespaces,
// call, search, parallel, is_error and json.

// predeclared returns the names of the program's world: the builtins, and the top of every
// namespace holding a tool the caller may call.
func (r *run) predeclared() starlark.StringDict {
	d := starlark.StringDict{
		"call":     starlark.NewBuiltin("call", r.callBuiltin),
		"search":   starlark.NewBuiltin("search", r.searchBuiltin),
		"parallel": starlark.NewBuiltin("parallel", r.parallelBuiltin),
		"is_error": starlark.NewBuiltin("is_error", isErrorBuiltin),
		"json":     starjson.Module,
	}
	top, _ := r.names.Space("")
	for _, seg := range top {
		if v := r.member("", seg); v != nil {
			d[seg] = v
		}
	}
	return d
}

// member is what path parent.seg names for this caller: a tool it may call, a namespace
// holding one, or nil.
func (r *run) member(parent, seg string) starlark.Value {
	path := seg
	if parent != "" {
		path = parent + "." + seg
	}
	if tool, ok := r.names.Tool(path); ok {
		if _, may := r.host.Tool(tool); may {
			return &toolFunc{r: r, tool: tool, path: path}
		}
		return nil
	}
	if r.reach(path) {
		return &namespace{r: r, path: path}
	}
	return nil
}

// reach reports whether the caller may call a tool under the namespace path. A namespace
// may hold most of the catalog (meos), and a program may name it in a loop: the answer is
// kept for the run, so that each name costs one look at its tools, not one per use. Only
// the Starlark thread calls it.
func (r *run) reach(path string) bool {
	if may, ok := r.reachable[path]; ok {
		return may
	}
	may := slices.ContainsFunc(r.names.Under(path), func(tool string) bool {
		_, may := r.host.Tool(tool)
		return may
	})
	if r.reachable == nil {
		r.reachable = map[string]bool{}
	}
	r.reachable[path] = may
	return may
}

// namespace is a dotted prefix of tool names: meos, go.node_lamp.
type namespace struct {
	r    *run
	path string
}

func (ns *namespace) String() string        { return "<tools " + ns.path + ">" }
func (ns *namespace) Type() string          { return "tools" }
func (ns *namespace) Freeze()               {}
func (ns *namespace) Truth() starlark.Bool  { return true }
func (ns *namespace) Hash() (uint32, error) { return starlark.String(ns.path).Hash() }

// Attr is the tool or namespace under ns named name.
func (ns *namespace) Attr(name string) (starlark.Value, error) {
	if v := ns.r.member(ns.path, name); v != nil {
		return v, nil
	}
	return nil, fmt.Errorf("no tool %s.%s; search() finds tools", ns.path, name)
}

// AttrNames lists what the caller may reach under ns.
func (ns *namespace) AttrNames() []string {
	members, _ := ns.r.names.Space(ns.path)
	var out []string
	for _, m := range members {
		if ns.r.member(ns.path, m) != nil {
			out = append(out, m)
		}
	}
	return out
}

// toolFunc is a tool as a function of the program, called with keyword arguments.
type toolFunc struct {
	r    *run
	tool string // the catalog's name
	path string // the program's
}

func (f *toolFunc) String() string        { return "<tool " + f.tool + ">" }
func (f *toolFunc) Type() string          { return "tool" }
func (f *toolFunc) Freeze()               {}
func (f *toolFunc) Truth() starlark.Bool  { return true }
func (f *toolFunc) Hash() (uint32, error) { return starlark.String(f.tool).Hash() }
func (f *toolFunc) Name() string          { return f.path }

// CallInternal calls the tool with the keyword arguments given; an argument given None is
// left out, as if not given.
func (f *toolFunc) CallInternal(_ *starlark.Thread, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(args) > 0 {
		return nil, fmt.Errorf("%s takes keyword arguments only, e.g. %s(name=value)", f.path, f.path)
	}
	d := starlark.NewDict(len(kwargs))
	for _, kv := range kwargs {
		if kv[1] != starlark.None {
			_ = d.SetKey(kv[0], kv[1])
		}
	}
	body, err := f.r.arguments(f.tool, d)
	if err != nil {
		return nil, err
	}
	return f.r.invoke(f.tool, body)
}

// arguments writes a call's arguments as the JSON object the tool is sent, within the
// bytes bound.
func (r *run) arguments(tool string, d *starlark.Dict) (json.RawMessage, error) {
	body, err := toJSON(d, r.b.Bytes)
	if errors.Is(err, errTooLarge) {
		return nil, r.halt(boundError(BoundBytes, fmt.Sprintf("the arguments of a call of %s are more than %d bytes of JSON", tool, r.b.Bytes)))
	}
	if err != nil {
		return nil, fmt.Errorf("the arguments of %s: %w", tool, err)
	}
	return body, nil
}

// callBuiltin is call(name, args): a tool by its name, with a dict of arguments.
func (r *run) callBuiltin(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var name string
	var argv starlark.Value = starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "name", &name, "args?", &argv); err != nil {
		return nil, err
	}
	body, err := r.dictArguments(name, argv)
	if err != nil {
		return nil, err
	}
	return r.invoke(name, body)
}

// dictArguments writes the arguments dict (or None) of a call of tool by its name.
func (r *run) dictArguments(tool string, argv starlark.Value) (json.RawMessage, error) {
	switch a := argv.(type) {
	case starlark.NoneType:
		return json.RawMessage("{}"), nil
	case *starlark.Dict:
		return r.arguments(tool, a)
	}
	return nil, fmt.Errorf("the arguments of %s must be a dict, not a %s", tool, argv.Type())
}

// searchBuiltin is search(query, limit=10): the tools that fit a task, best first, each
// with its name, description, signature and input schema.
func (r *run) searchBuiltin(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var query string
	limit := 10
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "query", &query, "limit?", &limit); err != nil {
		return nil, err
	}
	if err := r.begin(); err != nil {
		return nil, err
	}
	res, err := r.host.Search(query, limit)
	if err != nil {
		return nil, err
	}
	if err := r.take(len(res)); err != nil {
		return nil, err
	}
	return fromJSON(res)
}

// parallelBuiltin is parallel(calls): each call a tool (or a tool's name) alone or with
// its arguments, (meos.speed, {"point": p}); their results in order.
func (r *run) parallelBuiltin(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var list starlark.Iterable
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "calls", &list); err != nil {
		return nil, err
	}
	var calls []*parallelCall
	it := list.Iterate()
	defer it.Done()
	var item starlark.Value
	for i := 0; it.Next(&item); i++ {
		if len(calls) == r.b.Parallel {
			return nil, r.halt(boundError(BoundParallel, fmt.Sprintf("parallel() was given more than the %d calls a run makes at once", r.b.Parallel)))
		}
		fn, argv := item, starlark.Value(starlark.None)
		if t, ok := item.(starlark.Indexable); ok && (item.Type() == "tuple" || item.Type() == "list") {
			if t.Len() < 1 || t.Len() > 2 {
				return nil, fmt.Errorf("parallel: call %d is a %s of %d; give (tool, {arguments})", i, item.Type(), t.Len())
			}
			fn = t.Index(0)
			if t.Len() == 2 {
				argv = t.Index(1)
			}
		}
		var name string
		switch f := fn.(type) {
		case *toolFunc:
			name = f.tool
		case starlark.String:
			name = string(f)
		default:
			return nil, fmt.Errorf("parallel: call %d names no tool: a %s; give a tool (meos.speed) or its name", i, fn.Type())
		}
		body, err := r.dictArguments(name, argv)
		if err != nil {
			return nil, fmt.Errorf("parallel: call %d: %w", i, err)
		}
		calls = append(calls, &parallelCall{name: name, args: body})
	}
	return r.parallel(calls)
}

func isErrorBuiltin(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var v starlark.Value
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &v); err != nil {
		return nil, err
	}
	_, is := v.(*toolError)
	return starlark.Bool(is), nil
}

// toolError is an inner call that failed, as the program sees it: r.kind, r.dispatched
// (false: nothing ran), r.message, r.details, r.tool. It is false as a condition.
type toolError struct {
	tool string
	f    Failure
}

func (e *toolError) String() string {
	return fmt.Sprintf("tool_error(tool=%q, kind=%q, dispatched=%v, message=%q)", e.tool, e.f.Kind, e.f.Dispatched, e.f.Message)
}
func (e *toolError) Type() string          { return "tool_error" }
func (e *toolError) Freeze()               {}
func (e *toolError) Truth() starlark.Bool  { return false }
func (e *toolError) Hash() (uint32, error) { return 0, errors.New("unhashable type: tool_error") }
func (e *toolError) AttrNames() []string {
	return []string{"details", "dispatched", "kind", "message", "tool"}
}

func (e *toolError) Attr(name string) (starlark.Value, error) {
	switch name {
	case "tool":
		return starlark.String(e.tool), nil
	case "kind":
		return starlark.String(e.f.Kind), nil
	case "dispatched":
		return starlark.Bool(e.f.Dispatched), nil
	case "message":
		return starlark.String(e.f.Message), nil
	case "details":
		if e.f.Details == nil {
			return starlark.None, nil
		}
		b, err := json.Marshal(e.f.Details)
		if err != nil {
			return starlark.None, nil
		}
		return fromJSON(b)
	}
	return nil, nil
}

// json is the error as a program's answer gives it: {"error": {...}}.
func (e *toolError) json() []byte {
	b, _ := json.Marshal(struct {
		Error any `json:"error"`
	}{struct {
		Tool string `json:"tool"`
		Failure
	}{e.tool, e.f}})
	return b
}

// resultValue is an inner call's outcome as the program sees it: the tool's structured
// content when it gives one, else its text (or its content list, when not all text); a
// failure or an isError result as a *toolError.
func resultValue(tool string, res CallResult) (starlark.Value, error) {
	if res.Failure != nil {
		return &toolError{tool: tool, f: *res.Failure}, nil
	}
	structured, hasStructured := rawjson.Member(res.Result, "structuredContent")
	if hasStructured && string(structured) == "null" {
		hasStructured = false
	}
	content, _ := rawjson.Member(res.Result, "content")
	if v, ok := rawjson.Member(res.Result, "isError"); ok && string(v) == "true" {
		f := Failure{Kind: KindToolError, Dispatched: true, Message: texts(content)}
		if hasStructured {
			f.Details = structured
		}
		return &toolError{tool: tool, f: f}, nil
	}
	if hasStructured {
		return fromJSON(structured)
	}
	var items []struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(content, &items)
	for _, it := range items {
		if it.Type != "text" {
			return fromJSON(content)
		}
	}
	return starlark.String(texts(content)), nil
}

// texts joins the text items of a result's content.
func texts(content json.RawMessage) string {
	var items []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(content, &items)
	var parts []string
	for _, it := range items {
		if it.Type == "text" {
			parts = append(parts, it.Text)
		}
	}
	return strings.Join(parts, "\n")
}
