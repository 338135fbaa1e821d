// Package argcheck validates a tool call's arguments against the tool's input schema before
// anything is sent to a bundle, for toolnode.execute.
//
// A Checker belongs to one catalog: it compiles each tool's schema the first time that tool
// is called and keeps the compiled form for as long as the catalog lives, so a new catalog
// gets a new Checker and nothing is ever invalidated by hand. Schemas are compiled with the
// JSON Schema 2020-12 dialect unless they name another in "$schema", and never load
// anything from the network or the disk: a "$ref" outside the schema is a schema error.
package argcheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// ErrUnknownTool is returned for a name the catalog does not hold.
var ErrUnknownTool = errors.New("unknown tool")

// Lookup returns the definition of a tool as tools/list gives it (the object holding
// "inputSchema"), and whether the tool exists.
type Lookup func(name string) (json.RawMessage, bool)

// Checker validates arguments for the tools of one catalog. It is safe for concurrent use.
type Checker struct {
	lookup  Lookup
	printer *message.Printer // words the validator's reasons in English

	mu    sync.Mutex
	cache map[string]*entry
}

// entry is one tool's compiled schema, compiled once even when calls race for it.
type entry struct {
	once   sync.Once
	schema *jsonschema.Schema
	err    error
}

// New returns a Checker over the tools lookup finds.
func New(lookup Lookup) *Checker {
	return &Checker{lookup: lookup, printer: message.NewPrinter(language.English), cache: map[string]*entry{}}
}

// Problem is one way the arguments break the schema.
type Problem struct {
	// Path is where in the arguments, written as arguments.points[0].x; "arguments" is
	// the whole object.
	Path string `json:"path"`
	// Reason says what is wrong, in plain words.
	Reason string `json:"reason"`
}

// InvalidError lists the problems with a call's arguments; its message names each with its
// path and reason, fit for the model that made the call to correct it.
type InvalidError struct {
	Tool     string
	Problems []Problem
}

func (e *InvalidError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "invalid arguments for %s: ", e.Tool)
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(p.Path + ": " + p.Reason)
	}
	return b.String()
}

// SchemaError says that a tool's own input schema cannot be compiled: the bundle's fault,
// not the caller's.
type SchemaError struct {
	Tool string
	Err  error
}

func (e *SchemaError) Error() string {
	return fmt.Sprintf("the input schema of %s is not a usable JSON Schema: %v", e.Tool, e.Err)
}

func (e *SchemaError) Unwrap() error { return e.Err }

// Check validates args (a JSON object; empty or null counts as {}) against the input
// schema of the named tool. It returns nil when they are valid, ErrUnknownTool (wrapped)
// when the tool does not exist, a *SchemaError when the tool's schema is broken, and an
// *InvalidError naming every problem otherwise.
func (c *Checker) Check(name string, args json.RawMessage) error {
	schema, err := c.compiled(name)
	if err != nil {
		return err
	}
	if schema == nil {
		return nil
	}
	if len(bytes.TrimSpace(args)) == 0 || bytes.Equal(bytes.TrimSpace(args), []byte("null")) {
		args = json.RawMessage("{}")
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		return &InvalidError{Tool: name, Problems: []Problem{{Path: "arguments", Reason: "not valid JSON: " + err.Error()}}}
	}
	if probs := outOfRange(inst); len(probs) > 0 {
		return &InvalidError{Tool: name, Problems: probs}
	}
	err = validate(schema, inst)
	var verr *jsonschema.ValidationError
	var failed *Problem
	switch {
	case errors.As(err, &verr):
		return &InvalidError{Tool: name, Problems: problems(verr, c.printer)}
	case errors.As(err, &failed):
		return &InvalidError{Tool: name, Problems: []Problem{*failed}}
	}
	if err != nil {
		return fmt.Errorf("validate the arguments of %s: %w", name, err)
	}
	return nil
}

// Bounds of the numbers Check takes: the validator turns a number a keyword bounds into an
// exact fraction, whose size, and the time to make it, grow with the number's exponent and
// digits (past a decimal exponent of a million it cannot make one, and used to panic).
const (
	maxExponent = 10_000
	maxDigits   = 1_000
)

// outOfRange lists the numbers of inst (as jsonschema.UnmarshalJSON gives it) beyond what
// Check takes, sorted by path.
func outOfRange(inst any) []Problem {
	var out []Problem
	var walk func(v any, loc []string)
	walk = func(v any, loc []string) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				walk(x, append(loc, k))
			}
		case []any:
			for i, x := range v {
				walk(x, append(loc, strconv.Itoa(i)))
			}
		case json.Number:
			if !inRange(string(v)) {
				out = append(out, Problem{Path: path(loc), Reason: fmt.Sprintf(
					"is a number with more than %d digits or an exponent beyond ±%d, which the node does not check", maxDigits, maxExponent)})
			}
		}
	}
	walk(inst, nil)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// inRange reports whether the JSON number n is within maxDigits and maxExponent.
func inRange(n string) bool {
	if len(n) > maxDigits {
		return false
	}
	i := strings.IndexAny(n, "eE")
	if i < 0 {
		return true
	}
	exp, err := strconv.Atoi(n[i+1:])
	return err == nil && exp >= -maxExponent && exp <= maxExponent
}

// validate is schema.Validate, which must not take the node down with it: a panic of the
// validator on some arguments is returned as a *Problem with them.
func validate(schema *jsonschema.Schema, inst any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &Problem{Path: "arguments", Reason: fmt.Sprintf("could not be checked against the tool's schema: %v", r)}
		}
	}()
	return schema.Validate(inst)
}

// Error makes a Problem an error, for validate.
func (p *Problem) Error() string { return p.Path + " " + p.Reason }

// compiled returns the tool's compiled schema, nil when it has none to check against.
func (c *Checker) compiled(name string) (*jsonschema.Schema, error) {
	c.mu.Lock()
	e, ok := c.cache[name]
	if !ok {
		e = &entry{}
		c.cache[name] = e
	}
	c.mu.Unlock()
	e.once.Do(func() { e.schema, e.err = c.compile(name) })
	return e.schema, e.err
}

func (c *Checker) compile(name string) (*jsonschema.Schema, error) {
	def, ok := c.lookup(name)
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownTool, name)
	}
	var tool struct {
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	if err := json.Unmarshal(def, &tool); err != nil {
		return nil, &SchemaError{Tool: name, Err: err}
	}
	if len(tool.InputSchema) == 0 {
		return nil, nil // tools/list requires one; without it there is nothing to hold the call to
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(tool.InputSchema))
	if err != nil {
		return nil, &SchemaError{Tool: name, Err: err}
	}
	comp := jsonschema.NewCompiler()
	comp.DefaultDraft(jsonschema.Draft2020)
	const url = "toolnode:///input-schema.json"
	if err := comp.AddResource(url, doc); err != nil {
		return nil, &SchemaError{Tool: name, Err: err}
	}
	s, err := comp.Compile(url)
	if err != nil {
		return nil, &SchemaError{Tool: name, Err: err}
	}
	return s, nil
}

// problems flattens a validation error into its leaves: the failures that say something
// about the arguments, not the schema keywords that grouped them.
func problems(verr *jsonschema.ValidationError, printer *message.Printer) []Problem {
	var out []Problem
	seen := map[Problem]bool{}
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		p := Problem{Path: path(e.InstanceLocation), Reason: reason(e.ErrorKind, printer)}
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	walk(verr)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// path writes an instance location as arguments.a[0].b, quoting members that are not plain
// identifiers (arguments["odd key"]).
func path(loc []string) string {
	var b strings.Builder
	b.WriteString("arguments")
	for _, tok := range loc {
		if _, err := strconv.Atoi(tok); err == nil {
			b.WriteString("[" + tok + "]")
		} else if plain(tok) {
			b.WriteString("." + tok)
		} else {
			b.WriteString("[" + strconv.Quote(tok) + "]")
		}
	}
	return b.String()
}

func plain(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9' {
			continue
		}
		return false
	}
	return true
}
