package bundle

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// schemaURL names every schema inside its own compiler; it never leaves this package.
const schemaURL = "mem:///schema.json"

// compileSchema compiles a tool's schema. Schemas without $schema are JSON Schema 2020-12,
// as MCP says. References must resolve inside the schema: nothing is read from files or
// the network.
func compileSchema(raw json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := decodeInstance(raw)
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(jsonschema.SchemeURLLoader{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, err
	}
	return c.Compile(schemaURL)
}

// decodeInstance decodes JSON the way the schema library expects (numbers kept exact).
func decodeInstance(raw json.RawMessage) (any, error) {
	return jsonschema.UnmarshalJSON(bytes.NewReader(raw))
}

// checkArguments returns the tool error for arguments that break the input schema, or ""
// when they are valid.
func checkArguments(schema *jsonschema.Schema, args json.RawMessage) string {
	v, err := decodeInstance(args)
	if err != nil {
		return fmt.Sprintf("arguments are not valid JSON: %v", err)
	}
	err = schema.Validate(v)
	if err == nil {
		return ""
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return fmt.Sprintf("invalid arguments: %v", err)
	}
	leaf := firstLeaf(ve)
	switch k := leaf.ErrorKind.(type) {
	case *kind.Required:
		names := make([]string, len(k.Missing))
		for i, m := range k.Missing {
			names[i] = fmt.Sprintf("%q", argumentPath(append(slices.Clip(leaf.InstanceLocation), m)))
		}
		if len(names) == 1 {
			return "missing required argument " + names[0]
		}
		return "missing required arguments " + strings.Join(names, ", ")
	case *kind.Type:
		if len(leaf.InstanceLocation) == 0 {
			return "arguments must be " + typeNames(k.Want)
		}
		return fmt.Sprintf("argument %q must be %s", argumentPath(leaf.InstanceLocation), typeNames(k.Want))
	}
	if len(leaf.InstanceLocation) == 0 {
		return "arguments: " + kindMessage(leaf)
	}
	return fmt.Sprintf("argument %q: %s", argumentPath(leaf.InstanceLocation), kindMessage(leaf))
}

// describe is the one-line form of a validation failure, for results that break an output
// schema.
func describe(err error, what string) string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err.Error()
	}
	leaf := firstLeaf(ve)
	if len(leaf.InstanceLocation) > 0 {
		what = fmt.Sprintf("%q", argumentPath(leaf.InstanceLocation))
	}
	return what + ": " + kindMessage(leaf)
}

// firstLeaf follows the first cause down to the violation that started it all: the root
// of the tree only says that the schema failed.
func firstLeaf(e *jsonschema.ValidationError) *jsonschema.ValidationError {
	for len(e.Causes) > 0 {
		e = e.Causes[0]
	}
	return e
}

func kindMessage(e *jsonschema.ValidationError) string {
	return e.ErrorKind.LocalizedString(message.NewPrinter(language.English))
}

// argumentPath writes an instance location as the dotted path a person would type.
func argumentPath(loc []string) string { return strings.Join(loc, ".") }

// typeNames turns JSON Schema type names into words: ["string","null"] is "a string or null".
func typeNames(types []string) string {
	words := make([]string, len(types))
	for i, t := range types {
		switch t {
		case "null":
			words[i] = "null"
		case "integer", "object", "array":
			words[i] = "an " + t
		default:
			words[i] = "a " + t
		}
	}
	return strings.Join(words, " or ")
}
