package codemode

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"go.starlark.net/resolve"
	"go.starlark.net/syntax"
)

// Before a program runs, every call in its text that names a tool (meos.speed(...),
// call("meos.speed", {...}), the items of parallel([...])) is checked: the tool must exist
// and be the caller's to call, required arguments must be given, arguments the schema does
// not take must not be, and arguments written as literals must have the schema's types.
// What only running tells (an argument computed from a result) is checked before each call
// is sent. A program with any problem runs nothing.

// check lists the problems of the calls in the resolved program f.
func (r *run) check(f *syntax.File) []ProgramProblem {
	var probs []ProgramProblem
	syntax.Walk(f, func(n syntax.Node) bool {
		if call, ok := n.(*syntax.CallExpr); ok {
			probs = append(probs, r.checkCall(call)...)
		}
		return true
	})
	sort.SliceStable(probs, func(i, j int) bool {
		return probs[i].Line < probs[j].Line || probs[i].Line == probs[j].Line && probs[i].Column < probs[j].Column
	})
	return probs
}

// checkCall checks one call of the program's text.
func (r *run) checkCall(call *syntax.CallExpr) []ProgramProblem {
	pos := syntax.Start(call)
	if id, ok := call.Fn.(*syntax.Ident); ok && predeclared(id) {
		switch id.Name {
		case "call":
			if len(call.Args) == 0 {
				return nil
			}
			name, ok := literal(call.Args[0])
			tool, isString := name.(string)
			if !ok || !isString {
				return nil
			}
			var args syntax.Expr
			if len(call.Args) > 1 {
				args = call.Args[1]
				if b, ok := args.(*syntax.BinaryExpr); ok && b.Op == syntax.EQ {
					args = b.Y // args=...
				}
			}
			return r.checkByName(pos, tool, args)
		case "parallel":
			return r.checkParallel(call)
		}
	}
	path, ours := r.toolPath(call.Fn)
	if !ours {
		return nil
	}
	tool, ok := r.names.Tool(path)
	if !ok {
		return []ProgramProblem{{Line: int(pos.Line), Column: int(pos.Col), Tool: path, Reason: r.unknown(path)}}
	}
	if _, may := r.host.Tool(tool); !may {
		return []ProgramProblem{{Line: int(pos.Line), Column: int(pos.Col), Tool: path, Reason: r.unknown(path)}}
	}
	given := map[string]syntax.Expr{}
	open, positional := false, false
	for _, a := range call.Args {
		switch a := a.(type) {
		case *syntax.BinaryExpr:
			if a.Op == syntax.EQ {
				given[a.X.(*syntax.Ident).Name] = a.Y
				continue
			}
		case *syntax.UnaryExpr:
			if a.Op == syntax.STARSTAR || a.Op == syntax.STAR {
				open = true
				continue
			}
		}
		positional = true
	}
	if positional {
		return []ProgramProblem{{Line: int(pos.Line), Column: int(pos.Col), Tool: path,
			Reason: "tools take keyword arguments only, e.g. " + path + "(name=value)"}}
	}
	return r.checkArgs(pos, tool, given, open, true)
}

// checkByName checks a call of a tool by its name with the arguments args (a dict, or nil
// for none), as call() and parallel() make it.
func (r *run) checkByName(pos syntax.Position, tool string, args syntax.Expr) []ProgramProblem {
	if _, may := r.host.Tool(tool); !may {
		return []ProgramProblem{{Line: int(pos.Line), Column: int(pos.Col), Tool: tool, Reason: "no tool is named " + tool + "; search() finds tools"}}
	}
	given := map[string]syntax.Expr{}
	open := false
	switch a := args.(type) {
	case nil:
	case *syntax.DictExpr:
		for _, e := range a.List {
			entry := e.(*syntax.DictEntry)
			k, ok := literal(entry.Key)
			ks, isString := k.(string)
			if !ok || !isString {
				open = true
				continue
			}
			given[ks] = entry.Value
		}
	case *syntax.Ident:
		if a.Name != "None" || !universal(a) {
			open = true
		}
	default:
		open = true
	}
	return r.checkArgs(pos, tool, given, open, false)
}

// checkParallel checks the calls a parallel() lists in its text.
func (r *run) checkParallel(call *syntax.CallExpr) []ProgramProblem {
	if len(call.Args) != 1 {
		return nil
	}
	var items []syntax.Expr
	switch l := call.Args[0].(type) {
	case *syntax.ListExpr:
		items = l.List
	case *syntax.TupleExpr:
		items = l.List
	default:
		return nil
	}
	var probs []ProgramProblem
	for _, it := range items {
		inner := it
		for p, ok := inner.(*syntax.ParenExpr); ok; p, ok = inner.(*syntax.ParenExpr) {
			inner = p.X
		}
		fn, args := inner, syntax.Expr(nil)
		var parts []syntax.Expr
		switch t := inner.(type) {
		case *syntax.TupleExpr:
			parts = t.List
		case *syntax.ListExpr:
			parts = t.List
		}
		if parts != nil {
			if len(parts) == 0 || len(parts) > 2 {
				continue
			}
			fn = parts[0]
			if len(parts) == 2 {
				args = parts[1]
			}
		}
		pos := syntax.Start(it)
		if name, ok := literal(fn); ok {
			if tool, isString := name.(string); isString {
				probs = append(probs, r.checkByName(pos, tool, args)...)
			}
			continue
		}
		path, ours := r.toolPath(fn)
		if !ours {
			continue
		}
		tool, ok := r.names.Tool(path)
		if _, may := r.host.Tool(tool); !ok || !may {
			probs = append(probs, ProgramProblem{Line: int(pos.Line), Column: int(pos.Col), Tool: path, Reason: r.unknown(path)})
			continue
		}
		probs = append(probs, r.checkByName(pos, tool, args)...)
	}
	return probs
}

// checkArgs checks the arguments given of a call of tool at pos: their names (a map of
// the expressions given), whether more may come that the text does not name (open), and
// whether None stands for an argument not given (keyword calls).
func (r *run) checkArgs(pos syntax.Position, tool string, given map[string]syntax.Expr, open, noneIsAbsent bool) []ProgramProblem {
	schema, _ := r.host.Tool(tool)
	var s struct {
		Properties           map[string]json.RawMessage `json:"properties"`
		Required             []string                   `json:"required"`
		AdditionalProperties *bool                      `json:"additionalProperties"`
	}
	_ = json.Unmarshal(schema, &s)
	problem := func(path, reason string) ProgramProblem {
		return ProgramProblem{Line: int(pos.Line), Column: int(pos.Col), Tool: tool, Path: path, Reason: reason}
	}
	var probs []ProgramProblem
	literals := map[string]any{}
	present := map[string]bool{}
	for name, x := range given {
		v, ok := literal(x)
		if ok && v == nil && noneIsAbsent {
			continue
		}
		present[name] = true
		if ok {
			literals[name] = v
		}
		if _, known := s.Properties[name]; !known && s.AdditionalProperties != nil && !*s.AdditionalProperties {
			probs = append(probs, problem("arguments."+name, fmt.Sprintf("%s takes no argument %q; it takes %s", tool, name, names(s.Properties))))
		}
	}
	if !open {
		for _, req := range s.Required {
			if !present[req] {
				probs = append(probs, problem("arguments", fmt.Sprintf("the required argument %q is missing", req)))
			}
		}
	}
	if len(literals) > 0 {
		body, _ := json.Marshal(literals)
		for _, p := range r.host.Check(tool, body) {
			// The object's own problems (missing or unknown members) were found above,
			// knowing what the text gives that is no literal.
			if p.Path != "arguments" {
				probs = append(probs, problem(p.Path, p.Reason))
			}
		}
	}
	return probs
}

// names lists the properties of a schema, for an error.
func names(props map[string]json.RawMessage) string {
	if len(props) == 0 {
		return "none"
	}
	out := make([]string, 0, len(props))
	for p := range props {
		out = append(out, p)
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// toolPath reads a callee written as a dotted name rooted in a tool namespace of the
// program's world (meos.speed), as its path; ours is false for anything else.
func (r *run) toolPath(x syntax.Expr) (path string, ours bool) {
	var segs []string
	for {
		switch e := x.(type) {
		case *syntax.DotExpr:
			segs = append(segs, e.Name.Name)
			x = e.X
			continue
		case *syntax.Ident:
			if !predeclared(e) {
				return "", false
			}
			if slices.Contains(builtins, e.Name) {
				return "", false
			}
			segs = append(segs, e.Name)
		default:
			return "", false
		}
		break
	}
	for i, j := 0, len(segs)-1; i < j; i, j = i+1, j-1 {
		segs[i], segs[j] = segs[j], segs[i]
	}
	return strings.Join(segs, "."), true
}

// unknown says that path names no tool the caller may call.
func (r *run) unknown(path string) string {
	if _, space := r.names.Space(path); space {
		return path + " is a namespace of tools, not a tool"
	}
	return "no tool " + path + "; search() finds tools"
}

// predeclared reports whether an identifier names a value of the program's world.
func predeclared(id *syntax.Ident) bool {
	b, ok := id.Binding.(*resolve.Binding)
	return ok && b.Scope == resolve.Predeclared
}

// universal reports whether an identifier names a builtin of the language (True, None).
func universal(id *syntax.Ident) bool {
	b, ok := id.Binding.(*resolve.Binding)
	return ok && b.Scope == resolve.Universal
}
