package provider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Formats are the model API formats, as `toolnode tools --format` names them.
var Formats = []string{OpenAI, OpenAIResponses, Anthropic, Gemini}

// The model API formats.
const (
	OpenAI          = "openai"           // OpenAI Chat Completions
	OpenAIResponses = "openai-responses" // OpenAI Responses
	Anthropic       = "anthropic"        // Anthropic Messages
	Gemini          = "gemini"           // Gemini (generateContent)
)

// CheckFormat returns an error naming the formats when f is not one.
func CheckFormat(f string) error {
	for _, known := range Formats {
		if f == known {
			return nil
		}
	}
	return fmt.Errorf("unknown format %q; use one of %s", f, strings.Join(Formats, ", "))
}

// Tool is the part of an MCP tool (a tools/list entry) the definitions are made of.
type Tool struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	InputSchema any    `json:"inputSchema,omitempty"`
}

// DecodeTool decodes a tools/list entry, its schema with numbers kept as written.
func DecodeTool(raw json.RawMessage) (Tool, error) {
	var t struct {
		Name        string          `json:"name"`
		Title       string          `json:"title"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	if err := json.Unmarshal(raw, &t); err != nil {
		return Tool{}, fmt.Errorf("tool: %w", err)
	}
	tool := Tool{Name: t.Name, Title: t.Title, Description: t.Description}
	if len(t.InputSchema) > 0 {
		v, err := DecodeJSON(t.InputSchema)
		if err != nil {
			return Tool{}, fmt.Errorf("tool %s: inputSchema: %w", t.Name, err)
		}
		tool.InputSchema = v
	}
	return tool, nil
}

// DecodeJSON decodes JSON with numbers as json.Number, so they pass through unchanged.
func DecodeJSON(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// Definitions are tools in one API's format, and what it takes to map their calls back.
type Definitions struct {
	Format  string
	Tools   []any             // the request's tools
	Names   *Names            // tool names and the names the API was given
	Schemas map[string]Schema // tool name -> its schema with references inlined
	Strict  map[string]bool   // tools sent in strict mode
	LeftOut map[string]error  // tool name -> why it is not given (see Usable)
}

func describeTool(t Tool) string {
	if t.Description != "" {
		return t.Description
	}
	return t.Title
}

func one(format, name, description string, schema Schema, strict bool) (map[string]any, bool) {
	switch format {
	case OpenAI, OpenAIResponses:
		var params Schema
		if strict {
			params = OpenAIStrictParameters(schema)
		}
		isStrict := params != nil
		if params == nil {
			params = OpenAIParameters(schema)
		}
		fn := map[string]any{"name": name, "parameters": params}
		if description != "" {
			fn["description"] = description
		}
		if format == OpenAI {
			if strict {
				fn["strict"] = isStrict
			}
			return map[string]any{"type": "function", "function": fn}, isStrict
		}
		fn["type"], fn["strict"] = "function", isStrict
		return fn, isStrict
	case Anthropic:
		out := map[string]any{"name": name, "input_schema": AnthropicInputSchema(schema)}
		if description != "" {
			out["description"] = description
		}
		return out, false
	}
	key, params := GeminiParameters(schema)
	decl := map[string]any{"name": name}
	if description != "" {
		decl["description"] = description
	}
	if params != nil {
		decl[key] = params
	}
	return decl, false
}

// Make returns the tools in the format f (see Formats); strict asks OpenAI's strict mode
// where a schema allows it. A tool whose schema cannot be given (see Usable) is left out,
// and named with the reason in LeftOut.
func Make(tools []Tool, f string, strict bool) (*Definitions, error) {
	if err := CheckFormat(f); err != nil {
		return nil, err
	}
	schemas, leftOut := inlineAll(tools, MaxToolBytes, MaxAllBytes)
	var sorted []Tool
	for _, t := range tools {
		if _, ok := schemas[t.Name]; ok {
			sorted = append(sorted, t)
		}
	}
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	names := make([]string, len(sorted))
	for i, t := range sorted {
		names[i] = t.Name
	}
	d := &Definitions{Format: f, Names: MapNames(names), Schemas: schemas, Strict: map[string]bool{}, LeftOut: leftOut}
	var decls []any
	for _, t := range sorted {
		def, isStrict := one(f, d.Names.Render(t.Name), describeTool(t), schemas[t.Name], strict)
		if isStrict {
			d.Strict[t.Name] = true
		}
		decls = append(decls, def)
	}
	if decls == nil {
		decls = []any{}
	}
	if f == Gemini {
		d.Tools = []any{map[string]any{"functionDeclarations": decls}}
	} else {
		d.Tools = decls
	}
	return d, nil
}

// Usable splits tools into those whose schema can be given and the errors, each naming
// its tool, of the others: a schema no format can be made from, one past MaxToolBytes once
// inlined, or one that would take the tools' schemas, by name, past MaxAllBytes together.
func Usable(tools []Tool) ([]Tool, []error) {
	schemas, leftOut := inlineAll(tools, MaxToolBytes, MaxAllBytes)
	var ok []Tool
	var errs []error
	for _, t := range tools {
		if _, given := schemas[t.Name]; given {
			ok = append(ok, t)
		} else if err := leftOut[t.Name]; err != nil {
			errs = append(errs, err)
		}
	}
	return ok, errs
}

// inlineAll inlines the schema of each tool, in order of name, within maxTool bytes each
// and maxAll in all; the errors of those left out name them.
func inlineAll(tools []Tool, maxTool, maxAll int) (map[string]Schema, map[string]error) {
	sorted := append([]Tool(nil), tools...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	schemas := map[string]Schema{}
	leftOut := map[string]error{}
	total := 0
	for _, t := range sorted {
		schema, size, err := InlineSized(t.InputSchema, maxTool)
		switch {
		case err != nil:
			leftOut[t.Name] = fmt.Errorf("tool %s left out: %w", t.Name, err)
		case total+size > maxAll:
			leftOut[t.Name] = fmt.Errorf("tool %s left out: %w: its schema takes %d bytes once inlined, and the "+
				"tools before it by name %d of the %d allowed in all", t.Name, ErrSchema, size, total, maxAll)
		default:
			schemas[t.Name] = schema
			total += size
		}
	}
	return schemas, leftOut
}
