package provider

import (
	"encoding/json"
	"sort"
	"strings"
)

// Schemas for hosts. A host hands a server's tools to a model, and some refuse what the
// model APIs refuse: Claude Code drops a tool whose input schema has a root allOf, anyOf,
// oneOf, if/then or not (and one such schema has dropped a server's every tool), Gemini
// refuses $ref. HostInputSchema lowers a schema so that every host takes it, keeping what it
// can exact; a server still checks calls against the schema as it was.

// maxNoteBytes bounds the constraints a lowered schema's note repeats in JSON; past it the
// note names the keywords only.
const maxNoteBytes = 2048

// NeedsHostLowering reports cheaply, from the raw input schema, whether HostInputSchema
// would change it: a root that is not {"type": "object"}, a root combinator, or a $ref
// anywhere.
func NeedsHostLowering(raw []byte) bool {
	if strings.Contains(string(raw), `"$ref"`) {
		return true
	}
	var root map[string]json.RawMessage
	if json.Unmarshal(raw, &root) != nil {
		return true
	}
	if strings.TrimSpace(string(root["type"])) != `"object"` {
		return true
	}
	for k := range root {
		if rootDropped[k] {
			return true
		}
	}
	return false
}

// HostInputSchema returns schema (decoded JSON) lowered for hosts, and a note for the tool's
// description saying what constraints it no longer states ("" when none):
//
//   - the root is {"type": "object"} with properties;
//   - a root allOf whose parts are plain object schemas (type, properties, required,
//     title, description) is folded into the root's properties and required, which is
//     exact; a property two parts both define gets both in an allOf of its own (no longer
//     at the root);
//   - other root combinators (anyOf, oneOf, not, if/then/else, an allOf that cannot be
//     folded, enum, const) leave the schema and are stated in the note;
//   - every local $ref is inlined (within maxBytes of compact JSON: past it the references
//     stay as they are), while $schema and $defs stay, so that the schema still says its
//     dialect and what it defines.
func HostInputSchema(schema any, maxBytes int) (Schema, string) {
	root, ok := schema.(map[string]any)
	if !ok {
		return Schema{"type": "object", "properties": Schema{}}, ""
	}
	lowered := Schema(root)
	if inlined, _, err := InlineSized(root, maxBytes); err == nil {
		lowered = inlined
		for _, k := range []string{"$schema", "$defs", "definitions"} {
			if v, has := root[k]; has {
				lowered[k] = v
			}
		}
	}
	out := lowered
	if parts, ok := out["allOf"].([]any); ok {
		if folded, exact := foldAllOf(out, parts); exact {
			out = folded
		}
	}
	moved := Schema{} // what objectRoot leaves out, said in the note
	for k, v := range out {
		if rootDropped[k] {
			moved[k] = v
		}
	}
	if t, has := out["type"]; has && t != "object" {
		moved["type"] = t
	}
	out = objectRoot(out)
	if len(moved) == 0 {
		return out, ""
	}
	return out, constraintNote(moved)
}

// foldAllOf folds the parts of a root allOf into the root when that is exact: each part an
// object schema of properties and required alone (type object, title and description
// allowed), and no additionalProperties or unevaluatedProperties at the root that the
// parts' properties would escape.
func foldAllOf(root Schema, parts []any) (Schema, bool) {
	if _, has := root["additionalProperties"]; has {
		return nil, false
	}
	if _, has := root["unevaluatedProperties"]; has {
		return nil, false
	}
	out := Schema{}
	for k, v := range root {
		if k != "allOf" {
			out[k] = v
		}
	}
	props := Schema{}
	if old, ok := root["properties"].(map[string]any); ok {
		for k, v := range old {
			props[k] = v
		}
	} else if _, has := root["properties"]; has {
		return nil, false
	}
	required, _ := root["required"].([]any)
	required = append([]any{}, required...)
	for _, part := range parts {
		pm, ok := part.(map[string]any)
		if !ok {
			return nil, false
		}
		for k, v := range pm {
			switch k {
			case "type":
				if v != "object" {
					return nil, false
				}
			case "title", "description", "$comment":
			case "properties":
				pp, ok := v.(map[string]any)
				if !ok {
					return nil, false
				}
				for name, s := range pp {
					if old, has := props[name]; has {
						props[name] = Schema{"allOf": []any{old, s}}
					} else {
						props[name] = s
					}
				}
			case "required":
				list, ok := v.([]any)
				if !ok {
					return nil, false
				}
				for _, r := range list {
					if !containsAny(required, r) {
						required = append(required, r)
					}
				}
			default:
				return nil, false
			}
		}
	}
	out["properties"] = props
	if len(required) > 0 {
		out["required"] = required
	}
	return out, true
}

// constraintNote says in words and JSON what the arguments must also satisfy.
func constraintNote(moved Schema) string {
	keys := make([]string, 0, len(moved))
	for k := range moved {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b, err := json.Marshal(moved)
	if err != nil || len(b) > maxNoteBytes {
		return "The arguments must also satisfy the schema's root " + strings.Join(keys, ", ") +
			" constraints, left out here for hosts that refuse them; a call that breaks them is refused."
	}
	return "The arguments must also satisfy (JSON Schema, left out of inputSchema for hosts that refuse it at its root): " + string(b)
}
