package argcheck

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/toolnode/toolnode/runtime/internal/catalog"
)

var tools = map[string]string{
	"geo.buffer": `{"name":"geo.buffer","inputSchema":{"type":"object",
		"properties":{
			"distance":{"type":"number","minimum":0},
			"unit":{"enum":["m","km"]},
			"points":{"type":"array","items":{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"}},"required":["x","y"]}},
			"odd key":{"type":"string"}
		},
		"required":["distance"],"additionalProperties":false}}`,
	"free":      `{"name":"free","inputSchema":{"type":"object"}}`,
	"noschema":  `{"name":"noschema"}`,
	"broken":    `{"name":"broken","inputSchema":{"type":12}}`,
	"remote":    `{"name":"remote","inputSchema":{"$ref":"https://example.com/schema.json"}}`,
	"defs":      `{"name":"defs","inputSchema":{"$schema":"https://json-schema.org/draft/2020-12/schema","$defs":{"pos":{"type":"integer","exclusiveMinimum":0}},"type":"object","properties":{"n":{"$ref":"#/$defs/pos"}}}}`,
	"draft7":    `{"name":"draft7","inputSchema":{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"a":{"type":"string"}},"required":["a"]}}`,
	"notobject": `[1,2]`,
}

func lookup(name string) (json.RawMessage, bool) {
	s, ok := tools[name]
	return json.RawMessage(s), ok
}

func TestCheck(t *testing.T) {
	c := New(lookup)
	tests := []struct {
		name, tool, args string
		want             []Problem // nil: valid
	}{
		{"valid", "geo.buffer", `{"distance": 2, "unit": "km", "points": [{"x": 1, "y": 2}]}`, nil},
		{"missing required", "geo.buffer", `{}`, []Problem{{"arguments", "missing property 'distance'"}}},
		{"empty arguments count as {}", "geo.buffer", ``, []Problem{{"arguments", "missing property 'distance'"}}},
		{"null arguments count as {}", "geo.buffer", `null`, []Problem{{"arguments", "missing property 'distance'"}}},
		{"wrong type", "geo.buffer", `{"distance": "far"}`, []Problem{{"arguments.distance", "is a string, must be a number"}}},
		{"below minimum", "geo.buffer", `{"distance": -1}`, []Problem{{"arguments.distance", "is -1, must be at least 0"}}},
		{"enum", "geo.buffer", `{"distance": 1, "unit": "mi"}`, []Problem{{"arguments.unit", "value must be one of 'm', 'km'"}}},
		{"nested path", "geo.buffer", `{"distance": 1, "points": [{"x": 1, "y": 2}, {"x": "a"}]}`, []Problem{
			{"arguments.points[1]", "missing property 'y'"},
			{"arguments.points[1].x", "is a string, must be a number"},
		}},
		{"unknown member", "geo.buffer", `{"distance": 1, "colour": "red"}`, []Problem{{"arguments", "has member 'colour', which the tool does not take"}}},
		{"quoted member", "geo.buffer", `{"distance": 1, "odd key": 3}`, []Problem{{`arguments["odd key"]`, "is a number, must be a string"}}},
		{"not an object", "free", `[1]`, []Problem{{"arguments", "is an array, must be an object"}}},
		{"not JSON", "free", `{"a":`, []Problem{{"arguments", "not valid JSON: unexpected EOF"}}},
		{"no schema holds nothing", "noschema", `{"x": 1}`, nil},
		{"local $defs", "defs", `{"n": 0}`, []Problem{{"arguments.n", "is 0, must be greater than 0"}}},
		{"draft-07 named in $schema", "draft7", `{}`, []Problem{{"arguments", "missing property 'a'"}}},
		// The validator makes an exact fraction of a bounded number: one it cannot make
		// (it used to panic) or that would take long is refused first.
		{"an exponent the validator cannot take", "geo.buffer", `{"distance":1e1000001}`, []Problem{{"arguments.distance", tooLarge}}},
		{"a large exponent deep down", "geo.buffer", `{"distance":1,"points":[{"x":1,"y":-2E-99999}]}`, []Problem{{"arguments.points[0].y", tooLarge}}},
		{"too many digits", "geo.buffer", `{"distance":` + strings.Repeat("9", 1001) + `}`, []Problem{{"arguments.distance", tooLarge}}},
		{"an exponent within bounds is checked", "geo.buffer", `{"distance":1e400}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := c.Check(tt.tool, json.RawMessage(tt.args))
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Check: %v, want valid", err)
				}
				return
			}
			var ie *InvalidError
			if !errors.As(err, &ie) {
				t.Fatalf("Check: %v, want an *InvalidError", err)
			}
			if diff := cmp.Diff(tt.want, ie.Problems); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			if ie.Tool != tt.tool {
				t.Errorf("tool %q, want %q", ie.Tool, tt.tool)
			}
		})
	}
}

func TestCheckErrors(t *testing.T) {
	c := New(lookup)
	if err := c.Check("nope", nil); !errors.Is(err, ErrUnknownTool) {
		t.Errorf("unknown tool: %v, want ErrUnknownTool", err)
	}
	for _, name := range []string{"broken", "remote", "notobject"} {
		var se *SchemaError
		if err := c.Check(name, json.RawMessage(`{}`)); !errors.As(err, &se) || se.Tool != name {
			t.Errorf("%s: %v, want a *SchemaError naming the tool", name, err)
		}
	}
}

func TestErrorMessage(t *testing.T) {
	err := New(lookup).Check("geo.buffer", json.RawMessage(`{"distance": "far", "unit": "mi"}`))
	want := "invalid arguments for geo.buffer: arguments.distance: is a string, must be a number; arguments.unit: value must be one of 'm', 'km'"
	if err == nil || err.Error() != want {
		t.Errorf("message:\n got %v\nwant %s", err, want)
	}
}

// TestCompiledOnce checks that racing first calls share one compilation and later calls
// reuse it (run with -race).
func TestCompiledOnce(t *testing.T) {
	var mu sync.Mutex
	lookups := 0
	c := New(func(name string) (json.RawMessage, bool) {
		mu.Lock()
		lookups++
		mu.Unlock()
		return lookup(name)
	})
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				_ = c.Check("geo.buffer", json.RawMessage(`{"distance": 1}`))
			}
		}()
	}
	wg.Wait()
	if lookups != 1 {
		t.Errorf("schema looked up %d times, want once", lookups)
	}
}

// tooLarge is the reason given for a number beyond what Check takes.
const tooLarge = "is a number with more than 1000 digits or an exponent beyond ±10000, which the node does not check"

func FuzzCheck(f *testing.F) {
	for _, s := range []string{`{"distance": 1}`, `{"points":[{"x":1}]}`, `null`, `[]`, `{"a":`, `"x"`, `{"distance":1e400}`} {
		f.Add(s)
	}
	c := New(lookup)
	f.Fuzz(func(t *testing.T, args string) {
		err := c.Check("geo.buffer", json.RawMessage(args))
		var ie *InvalidError
		if err != nil && !errors.As(err, &ie) {
			t.Fatalf("Check(%q): %v, want nil or *InvalidError", args, err)
		}
		if ie != nil && len(ie.Problems) == 0 {
			t.Fatalf("Check(%q): invalid without a problem", args)
		}
	})
}

func BenchmarkCheck(b *testing.B) {
	c := New(lookup)
	args := json.RawMessage(`{"distance": 2, "unit": "km", "points": [{"x": 1, "y": 2}, {"x": 3, "y": 4}]}`)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if err := c.Check("geo.buffer", args); err != nil {
			b.Fatal(err)
		}
	}
}

func TestForCatalog(t *testing.T) {
	cat, _ := catalog.Build([]catalog.Source{{Bundle: "geo", Tools: []json.RawMessage{json.RawMessage(tools["geo.buffer"])}}})
	c := ForCatalog(cat)
	// The catalog exposes the bundle's "geo.buffer" as "geo.geo.buffer".
	if err := c.Check("geo.geo.buffer", json.RawMessage(`{"distance": 1}`)); err != nil {
		t.Errorf("valid call: %v", err)
	}
	var ie *InvalidError
	if err := c.Check("geo.geo.buffer", json.RawMessage(`{}`)); !errors.As(err, &ie) {
		t.Errorf("invalid call: %v, want *InvalidError", err)
	}
	if err := c.Check("geo.buffer", nil); !errors.Is(err, ErrUnknownTool) {
		t.Errorf("unexposed name: %v, want ErrUnknownTool", err)
	}
}

// A panic of the validator is a problem with the arguments, not the end of the node: the
// number Check now refuses first is what made it panic.
func TestValidatePanicIsAProblem(t *testing.T) {
	schema, err := New(lookup).compiled("geo.buffer")
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(`{"distance":1e1000001}`))
	if err != nil {
		t.Fatal(err)
	}
	var p *Problem
	if err := validate(schema, inst); !errors.As(err, &p) || p.Path != "arguments" {
		t.Fatalf("validate: %v, want a *Problem with the arguments", err)
	}
}
