package runtime_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// maxFuncLines is the most lines a function of the node or its test kit may span, from
// its func keyword to its closing brace: past it a function does several jobs, which a
// reader must tell apart.
const maxFuncLines = 120

// longFuncs are the functions allowed past maxFuncLines for now, by file and name, each
// with the reason. Keep it short: a new entry needs a reason a reviewer accepts.
var longFuncs = map[string]string{}

// The node's functions, and every function of its test kit, fit in maxFuncLines: tests
// of the node itself are left out (a table test may be long), the kit's are not.
func TestNoFunctionIsLongerThanTheLimit(t *testing.T) {
	fset := token.NewFileSet()
	var over []string
	seen := map[string]bool{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		kit := strings.HasPrefix(filepath.ToSlash(path), "internal/testkit/")
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") && !kit {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			start, end := fset.Position(fn.Pos()), fset.Position(fn.End())
			lines := end.Line - start.Line + 1
			key := filepath.ToSlash(path) + " " + fn.Name.Name
			_, allowed := longFuncs[key]
			seen[key] = seen[key] || allowed
			switch {
			case lines > maxFuncLines && !allowed:
				over = append(over, fmt.Sprintf("%s %s: %d lines, more than %d: split it by job", start, fn.Name.Name, lines, maxFuncLines))
			case lines <= maxFuncLines && allowed:
				over = append(over, fmt.Sprintf("%s %s: %d lines, within the limit: take it out of longFuncs", start, fn.Name.Name, lines))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(over)
	for _, o := range over {
		t.Error(o)
	}
	for key := range longFuncs {
		if !seen[key] {
			t.Errorf("longFuncs names %q, which is no function now: take it out", key)
		}
	}
}
