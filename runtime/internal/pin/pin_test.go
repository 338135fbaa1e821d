package pin

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func tool(name, bundle, def string) Tool {
	return Tool{Name: name, Bundle: bundle, JSON: json.RawMessage(def)}
}

func TestADefinitionHoldsWhatAModelReadsAndNothingElse(t *testing.T) {
	a, err := Definition(json.RawMessage(`{"name":"x","description":"d","inputSchema":{"type":"object","properties":{"n":{"type":"integer","maximum":1.50}}},"execution":{"taskSupport":"optional"},"_meta":{"ui":{"resourceUri":"ui://v"},"other":1}}`))
	if err != nil {
		t.Fatal(err)
	}
	// Renamed, keys in another order, members outside the definition changed: the same.
	b, err := Definition(json.RawMessage(`{"_meta":{"other":2,"ui":{"resourceUri":"ui://v"}},"inputSchema":{"properties":{"n":{"maximum":1.50,"type":"integer"}},"type":"object"},"description":"d","name":"y.x"}`))
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != string(b) || Digest(a) != Digest(b) {
		t.Errorf("the same definition differs:\n%s\n%s", a, b)
	}
	want := `{"_meta.ui":{"resourceUri":"ui://v"},"description":"d","inputSchema":{"properties":{"n":{"maximum":1.50,"type":"integer"}},"type":"object"}}`
	if string(a) != want {
		t.Errorf("definition %s, want %s", a, want)
	}
	for _, changed := range []string{
		`{"name":"x","description":"D","inputSchema":{"type":"object","properties":{"n":{"type":"integer","maximum":1.50}}},"_meta":{"ui":{"resourceUri":"ui://v"}}}`,
		`{"name":"x","description":"d","inputSchema":{"type":"object","properties":{"n":{"type":"integer","maximum":1.5}}},"_meta":{"ui":{"resourceUri":"ui://v"}}}`,
		`{"name":"x","description":"d","inputSchema":{"type":"object","properties":{"n":{"type":"integer","maximum":1.50}}},"_meta":{"ui":{"resourceUri":"ui://w"}}}`,
		`{"name":"x","description":"d","inputSchema":{"type":"object","properties":{"n":{"type":"integer","maximum":1.50}}},"_meta":{"ui":{"resourceUri":"ui://v"}},"annotations":{"destructiveHint":true}}`,
		`{"name":"x","title":"T","description":"d","inputSchema":{"type":"object","properties":{"n":{"type":"integer","maximum":1.50}}},"_meta":{"ui":{"resourceUri":"ui://v"}}}`,
	} {
		c, err := Definition(json.RawMessage(changed))
		if err != nil {
			t.Fatal(err)
		}
		if Digest(c) == Digest(a) {
			t.Errorf("a change went unseen: %s", changed)
		}
	}
}

func TestTheLockHoldsBackNewChangedAndMovedToolsAndNamesTheMissing(t *testing.T) {
	l, err := New([]Tool{
		tool("a.same", "a", `{"name":"same","description":"kept"}`),
		tool("a.edit", "a", `{"name":"edit","description":"reads"}`),
		tool("seat.verb", "a", `{"name":"seat.verb","description":"v"}`),
		tool("a.gone", "a", `{"name":"gone","description":"g"}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	r := l.Check([]Tool{
		tool("a.same", "a", `{"name":"same","description":"kept"}`),
		tool("a.edit", "a", `{"name":"edit","description":"deletes"}`),
		tool("seat.verb", "b", `{"name":"seat.verb","description":"v"}`),
		tool("a.new", "a", `{"name":"new","description":"n"}`),
	})
	var got []string
	for _, h := range r.Held {
		got = append(got, h.Name+":"+h.Why)
	}
	if strings.Join(got, " ") != "a.edit:changed a.new:new seat.verb:moved" {
		t.Errorf("held %v", got)
	}
	if strings.Join(r.Missing, " ") != "a.gone" {
		t.Errorf("missing %v, want a.gone", r.Missing)
	}
	if d := r.Held[0].Diff; d != "  {\n-   \"description\": \"reads\"\n+   \"description\": \"deletes\"\n  }\n" {
		t.Errorf("diff of a.edit:\n%s", d)
	}
}

func TestAcceptingPinsTheMatchingToolsAsTheyAreAndForgetsTheMissing(t *testing.T) {
	l, _ := New([]Tool{tool("a.edit", "a", `{"description":"reads"}`), tool("a.gone", "a", `{}`), tool("b.keep", "b", `{}`)})
	served := []Tool{tool("a.edit", "a", `{"description":"deletes"}`), tool("a.new", "a", `{}`), tool("b.keep", "b", `{}`), tool("c.new", "c", `{}`)}
	pinned, forgot, err := l.Accept(served, []string{"a.*"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(pinned, " ") != "a.edit a.new" || strings.Join(forgot, " ") != "a.gone" {
		t.Errorf("pinned %v forgot %v", pinned, forgot)
	}
	r := l.Check(served)
	if len(r.Held) != 1 || r.Held[0].Name != "c.new" || len(r.Missing) != 0 {
		t.Errorf("after accepting a.*: %+v", r)
	}
}

func TestALockFileReadsBackAsWrittenAndHandEditsAreChecked(t *testing.T) {
	l, _ := New([]Tool{tool("a.x", "a", `{"description":"<b>&"}`)})
	path := filepath.Join(t.TempDir(), FileName)
	if err := l.Write(path); err != nil {
		t.Fatal(err)
	}
	back, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if back.Tools["a.x"].Digest != l.Tools["a.x"].Digest {
		t.Errorf("read back %+v, wrote %+v", back.Tools["a.x"], l.Tools["a.x"])
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), `"description": "<b>&"`) {
		t.Errorf("the file is not readable JSON:\n%s", data)
	}
	for _, c := range []struct{ file, want string }{
		{`{"version":1,"tools":{"a.x":{"bundle":"a","definition":{"description":"edited"}}}}`, ""},
		{`{"version":1,"tools":{"a.x":{"bundle":"a","digest":"sha256:00","definition":{"description":"edited"}}}}`, "remove the digest"},
		{`{"version":1,"tools":{"a.x":{"bundle":"a"}}}`, "neither a digest nor a definition"},
		{`{"version":2,"tools":{}}`, "version 2"},
		{`{"version":1,"tools":{},"extra":1}`, `unknown field "extra"`},
	} {
		l, err := Parse([]byte(c.file))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.file, err)
		case c.want == "" && len(l.Check([]Tool{tool("a.x", "a", `{"description":"edited"}`)}).Held) != 0:
			t.Errorf("%s: the edited definition is not pinned", c.file)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want one saying %q", c.file, err, c.want)
		}
	}
}

// BenchmarkCheck2000 checks 2,000 served tools against a lock pinning them all, as a node
// with --lock does when it builds its catalog the first time (Check2000), and when it
// rebuilds it with the same definitions, a bundle having restarted (Check2000Rebuild).
func BenchmarkCheck2000(b *testing.B) { benchmarkCheck(b, false) }

// BenchmarkCheck2000Rebuild: see BenchmarkCheck2000.
func BenchmarkCheck2000Rebuild(b *testing.B) { benchmarkCheck(b, true) }

func benchmarkCheck(b *testing.B, rebuild bool) {
	tools := make([]Tool, 2000)
	for i := range tools {
		tools[i] = tool(fmt.Sprintf("b%d.tool%d", i/100, i), fmt.Sprintf("b%d", i/100), fmt.Sprintf(
			`{"name":"tool%d","title":"Tool %d","description":"Does thing %d with its arguments, as a typical tool says it.","inputSchema":{"type":"object","properties":{"a":{"type":"string","description":"the first"},"n":{"type":"integer","minimum":0}},"required":["a"]},"annotations":{"readOnlyHint":true}}`, i, i, i))
	}
	l, err := New(tools)
	if err != nil {
		b.Fatal(err)
	}
	var d Digests
	l.CheckWith(tools, &d)
	for b.Loop() {
		if !rebuild {
			d = Digests{}
		}
		if r := l.CheckWith(tools, &d); len(r.Held) != 0 {
			b.Fatal(r.Held[0])
		}
	}
}
