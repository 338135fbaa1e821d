package provider

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Schema is a JSON Schema as decoded JSON: objects are map[string]any, numbers json.Number.
type Schema = map[string]any

// Bounds what one hostile schema can make the package build.
const (
	maxNodes = 100_000
	maxDepth = 64
)

// Bounds, in bytes of compact JSON, what inlining may make of a listing. A value named by
// $ref is repeated wherever it is named, so a small schema can name a large one thousands
// of times: counting bytes, not nodes, bounds what an application sends and holds.
const (
	// MaxToolBytes bounds one tool's schema once its references are inlined.
	MaxToolBytes = 1 << 20
	// MaxAllBytes bounds the inlined schemas of every tool of one listing together.
	MaxAllBytes = 16 << 20
)

var dropped = map[string]bool{"$defs": true, "definitions": true, "$schema": true, "$id": true, "$comment": true,
	"$anchor": true, "$dynamicAnchor": true, "$vocabulary": true}

// ErrSchema is wrapped by the errors of a schema no format can be made from.
var ErrSchema = errors.New("unusable schema")

func pointer(root any, ref string) any {
	if ref == "#" {
		return root
	}
	if !strings.HasPrefix(ref, "#/") {
		return nil
	}
	node := root
	for _, part := range strings.Split(ref[2:], "/") {
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		switch n := node.(type) {
		case map[string]any:
			v, ok := n[part]
			if !ok {
				return nil
			}
			node = v
		case []any:
			i := 0
			if _, err := fmt.Sscanf(part, "%d", &i); err != nil || i < 0 || i >= len(n) || fmt.Sprint(i) != part {
				return nil
			}
			node = n[i]
		default:
			return nil
		}
	}
	return node
}

var opaque = map[string]bool{"enum": true, "const": true, "default": true, "examples": true, "example": true, "required": true}
var keyed = map[string]bool{"properties": true, "patternProperties": true, "$defs": true, "definitions": true, "dependentSchemas": true}

// InlineRefs returns the schema with every local $ref replaced by what it names; a
// reference back into itself, or one that names nothing here, becomes {} (any value) with
// its siblings. A schema that is not an object is taken as one without properties.
// It fails when the result would take more than MaxToolBytes of JSON.
func InlineRefs(schema any) (Schema, error) {
	s, _, err := InlineSized(schema, MaxToolBytes)
	return s, err
}

// InlineSized is InlineRefs bounded at maxBytes of compact JSON, and the bytes its result
// takes (escapes aside). Values are shared with schema, not copied.
func InlineSized(schema any, maxBytes int) (Schema, int, error) {
	root, ok := schema.(map[string]any)
	if !ok {
		return Schema{"type": "object", "properties": Schema{}}, 33, nil
	}
	budget := maxNodes
	room := maxBytes
	errBytes := fmt.Errorf("%w: it expands past %d bytes once its references are inlined", ErrSchema, maxBytes)
	spend := func(n int) error {
		if room -= n; room < 0 {
			return errBytes
		}
		return nil
	}
	var walk func(node any, stack []string, depth int) (any, error)
	walk = func(node any, stack []string, depth int) (any, error) {
		if budget--; budget < 0 {
			return nil, fmt.Errorf("%w: it expands past %d nodes once its references are inlined", ErrSchema, maxNodes)
		}
		if depth > maxDepth {
			return nil, fmt.Errorf("%w: it nests deeper than %d", ErrSchema, maxDepth)
		}
		switch n := node.(type) {
		case []any:
			if err := spend(2 + max(len(n)-1, 0)); err != nil {
				return nil, err
			}
			out := make([]any, len(n))
			for i, v := range n {
				w, err := walk(v, stack, depth+1)
				if err != nil {
					return nil, err
				}
				out[i] = w
			}
			return out, nil
		case map[string]any:
			if ref, ok := n["$ref"].(string); ok {
				siblings := Schema{}
				for k, v := range n {
					if k != "$ref" && !dropped[k] {
						siblings[k] = v
					}
				}
				target, isMap := pointer(root, ref).(map[string]any)
				if !isMap || contains(stack, ref) {
					return walk(siblings, stack, depth+1)
				}
				merged := Schema{}
				for k, v := range target {
					if !dropped[k] {
						merged[k] = v
					}
				}
				for k, v := range siblings {
					merged[k] = v
				}
				return walk(merged, append(stack[:len(stack):len(stack)], ref), depth+1)
			}
			out := Schema{}
			if err := spend(1); err != nil {
				return nil, err
			}
			for k, v := range n {
				if !dropped[k] {
					if err := spend(scalarSize(k) + 2); err != nil {
						return nil, err
					}
				}
				switch {
				case dropped[k]:
				case keyed[k]:
					if m, ok := v.(map[string]any); ok {
						props := Schema{}
						if err := spend(1); err != nil {
							return nil, err
						}
						for pk, pv := range m {
							if err := spend(scalarSize(pk) + 2); err != nil {
								return nil, err
							}
							w, err := walk(pv, stack, depth+1)
							if err != nil {
								return nil, err
							}
							props[pk] = w
						}
						out[k] = props
					} else {
						if err := spend(JSONSize(v, room)); err != nil {
							return nil, err
						}
						out[k] = v
					}
				case opaque[k]:
					if err := spend(JSONSize(v, room)); err != nil {
						return nil, err
					}
					out[k] = v
				default:
					w, err := walk(v, stack, depth+1)
					if err != nil {
						return nil, err
					}
					out[k] = w
				}
			}
			return out, nil
		}
		if err := spend(scalarSize(node)); err != nil {
			return nil, err
		}
		return node, nil
	}
	out, err := walk(root, nil, 0)
	if err != nil {
		return nil, 0, err
	}
	return out.(Schema), maxBytes - room, nil
}

func scalarSize(v any) int {
	switch s := v.(type) {
	case string:
		return len(s) + 2 // escapes aside
	case nil:
		return 4
	case bool:
		if s {
			return 4
		}
		return 5
	case json.Number:
		return len(s)
	default:
		return len(fmt.Sprint(s))
	}
}

// JSONSize is the size of v (decoded JSON) as compact JSON, escapes aside, counted no
// further than past limit: the work is bounded by the limit, not by the value.
func JSONSize(v any, limit int) int {
	size := 0
	stack := []any{v}
	for len(stack) > 0 && size <= limit {
		top := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch n := top.(type) {
		case map[string]any:
			size += 2 + max(len(n)-1, 0)
			for k, item := range n {
				size += scalarSize(k) + 1
				stack = append(stack, item)
			}
		case []any:
			size += 2 + max(len(n)-1, 0)
			stack = append(stack, n...)
		default:
			size += scalarSize(n)
		}
	}
	return size
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// Constraints across properties at the top, which no API here takes there, nor the hosts
// (see HostInputSchema); the node still checks every call's arguments against the tool's
// whole schema.
var rootDropped = map[string]bool{"oneOf": true, "anyOf": true, "allOf": true, "not": true, "if": true,
	"then": true, "else": true, "enum": true, "const": true}

func objectRoot(s Schema) Schema {
	out := Schema{}
	for k, v := range s {
		if !rootDropped[k] {
			out[k] = v
		}
	}
	out["type"] = "object"
	if _, ok := out["properties"].(map[string]any); !ok {
		out["properties"] = Schema{}
	}
	return out
}

// OpenAIParameters returns an OpenAI function's parameters without strict mode.
func OpenAIParameters(inlined Schema) Schema { return objectRoot(inlined) }

// AnthropicInputSchema returns an Anthropic tool's input_schema.
func AnthropicInputSchema(inlined Schema) Schema { return objectRoot(inlined) }

// ---- OpenAI strict mode ----

var strictKeep = setOf("type", "properties", "required", "additionalProperties", "items", "enum", "const", "anyOf",
	"description", "title", "pattern", "format", "multipleOf", "maximum", "exclusiveMaximum",
	"minimum", "exclusiveMinimum", "minItems", "maxItems")
var strictFormats = setOf("date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid")

const (
	strictMaxProperties = 5000
	strictMaxNesting    = 10
	strictMaxEnum       = 1000
)

func setOf(s ...string) map[string]bool {
	m := make(map[string]bool, len(s))
	for _, v := range s {
		m[v] = true
	}
	return m
}

var errNotStrict = errors.New("not expressible in strict mode")

func typeList(t any) []string {
	switch v := t.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, x := range v {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

func nullable(s Schema) Schema {
	out := Schema{}
	for k, v := range s {
		out[k] = v
	}
	switch t := s["type"].(type) {
	case string:
		if t == "null" {
			return s
		}
		out["type"] = []any{t, "null"}
	case []any:
		if !contains(typeList(t), "null") {
			out["type"] = append(append([]any{}, t...), "null")
		}
	default:
		if branches, ok := s["anyOf"].([]any); ok {
			for _, b := range branches {
				if bm, ok := b.(map[string]any); ok && bm["type"] == "null" {
					return s
				}
			}
			out["anyOf"] = append(append([]any{}, branches...), Schema{"type": "null"})
			return out
		}
		return Schema{"anyOf": []any{s, Schema{"type": "null"}}}
	}
	if enum, ok := out["enum"].([]any); ok {
		hasNull := false
		for _, v := range enum {
			hasNull = hasNull || v == nil
		}
		if !hasNull {
			out["enum"] = append(append([]any{}, enum...), nil)
		}
	}
	return out
}

// OpenAIStrictParameters returns an OpenAI function's parameters in strict mode, or nil
// when strict mode cannot hold them.
func OpenAIStrictParameters(inlined Schema) Schema {
	props, enums := 0, 0
	var walk func(s any, depth int) (Schema, error)
	walk = func(node any, depth int) (Schema, error) {
		s, ok := node.(map[string]any)
		if !ok || len(s) == 0 {
			return nil, errNotStrict
		}
		for _, k := range []string{"allOf", "prefixItems", "patternProperties"} {
			if _, has := s[k]; has {
				return nil, errNotStrict
			}
		}
		out := Schema{}
		for k, v := range s {
			if strictKeep[k] {
				out[k] = v
			}
		}
		if oneOf, has := s["oneOf"]; has {
			if _, hasAny := s["anyOf"]; !hasAny {
				out["anyOf"] = oneOf
			}
		}
		if f, has := out["format"]; has {
			if fs, _ := f.(string); !strictFormats[fs] {
				delete(out, "format")
			}
		}
		if e, ok := out["enum"].([]any); ok {
			enums += len(e)
		}
		if a, has := out["anyOf"]; has {
			branches, ok := a.([]any)
			if !ok {
				return nil, errNotStrict
			}
			conv := make([]any, len(branches))
			for i, b := range branches {
				c, err := walk(b, depth)
				if err != nil {
					return nil, err
				}
				conv[i] = c
			}
			out["anyOf"] = conv
		}
		_, hasType := out["type"]
		_, hasAny := out["anyOf"]
		_, hasEnum := out["enum"]
		_, hasConst := out["const"]
		if !hasType && !hasAny && !hasEnum && !hasConst {
			return nil, errNotStrict
		}
		types := typeList(out["type"])
		if contains(types, "object") {
			if depth >= strictMaxNesting {
				return nil, errNotStrict
			}
			p, ok := s["properties"].(map[string]any)
			if extra, has := s["additionalProperties"]; !ok || has && extra != nil && extra != false {
				return nil, errNotStrict
			}
			required := map[string]bool{}
			for _, r := range typeList(s["required"]) {
				required[r] = true
			}
			props += len(p)
			newProps := Schema{}
			order := []any{}
			for _, name := range sortedKeys(p) {
				c, err := walk(p[name], depth+1)
				if err != nil {
					return nil, err
				}
				if !required[name] {
					c = nullable(c)
				}
				newProps[name] = c
				order = append(order, name)
			}
			out["properties"], out["required"], out["additionalProperties"] = newProps, order, false
		} else {
			delete(out, "properties")
			delete(out, "required")
			delete(out, "additionalProperties")
		}
		if contains(types, "array") {
			items, has := s["items"]
			if !has {
				return nil, errNotStrict
			}
			c, err := walk(items, depth+1)
			if err != nil {
				return nil, err
			}
			out["items"] = c
		} else {
			delete(out, "items")
		}
		return out, nil
	}
	out, err := walk(objectRoot(inlined), 0)
	if err != nil || props > strictMaxProperties || enums > strictMaxEnum {
		return nil
	}
	return out
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// DropStrictNulls returns arguments from a strict-mode call without the nulls that stand
// for an omitted optional property: strict mode makes every property required and an
// optional one nullable, and the tool's own schema may not take null there.
func DropStrictNulls(arguments map[string]any, inlined Schema) map[string]any {
	out, _ := dropNulls(arguments, inlined).(map[string]any)
	return out
}

func takesNull(s any) bool {
	m, ok := s.(map[string]any)
	if !ok {
		return true
	}
	if contains(typeList(m["type"]), "null") {
		return true
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if bs, ok := m[k].([]any); ok {
			for _, b := range bs {
				if bm, ok := b.(map[string]any); ok && takesNull(bm) {
					return true
				}
			}
		}
	}
	return false
}

func dropNulls(value any, schema any) any {
	s, ok := schema.(map[string]any)
	if !ok {
		return value
	}
	switch v := value.(type) {
	case map[string]any:
		props, ok := s["properties"].(map[string]any)
		if !ok {
			return value
		}
		required := map[string]bool{}
		for _, r := range typeList(s["required"]) {
			required[r] = true
		}
		out := make(map[string]any, len(v))
		for k, x := range v {
			p, known := props[k]
			if x == nil && known && !required[k] && !takesNull(p) {
				continue
			}
			out[k] = dropNulls(x, p)
		}
		return out
	case []any:
		items, ok := s["items"].(map[string]any)
		if !ok {
			return value
		}
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = dropNulls(x, items)
		}
		return out
	}
	return value
}

// ---- Gemini ----

var geminiTypes = map[string]string{"string": "STRING", "number": "NUMBER", "integer": "INTEGER", "boolean": "BOOLEAN",
	"array": "ARRAY", "object": "OBJECT"}
var geminiFormats = map[string]map[string]bool{"NUMBER": setOf("float", "double"), "INTEGER": setOf("int32", "int64"),
	"STRING": setOf("enum", "date-time")}
var geminiCopy = []string{"title", "description", "minimum", "maximum", "minItems", "maxItems", "minLength", "maxLength",
	"pattern", "minProperties", "maxProperties", "default"}

// GeminiProperty is the rule Gemini's parameters hold property names to.
var GeminiProperty = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)

var errNotSubset = errors.New("not expressible in Gemini's schema subset")

func describe(s Schema, note string) {
	if d, _ := s["description"].(string); d != "" {
		s["description"] = d + " (" + note + ")"
	} else {
		s["description"] = note
	}
}

func mergeAllOf(s Schema) Schema {
	out := Schema{}
	for k, v := range s {
		if k != "allOf" {
			out[k] = v
		}
	}
	parts, _ := s["allOf"].([]any)
	for _, part := range parts {
		pm, ok := part.(map[string]any)
		if !ok {
			continue
		}
		for _, k := range sortedKeys(pm) {
			v := pm[k]
			switch {
			case k == "properties":
				if vm, ok := v.(map[string]any); ok {
					merged := Schema{}
					if old, ok := out["properties"].(map[string]any); ok {
						for pk, pv := range old {
							merged[pk] = pv
						}
					}
					for pk, pv := range vm {
						merged[pk] = pv
					}
					out["properties"] = merged
					continue
				}
				if _, has := out[k]; !has {
					out[k] = v
				}
			case k == "required":
				if vl, ok := v.([]any); ok {
					old, _ := out["required"].([]any)
					merged := append([]any{}, old...)
					for _, r := range vl {
						if !containsAny(merged, r) {
							merged = append(merged, r)
						}
					}
					out["required"] = merged
					continue
				}
				if _, has := out[k]; !has {
					out[k] = v
				}
			default:
				if _, has := out[k]; !has {
					out[k] = v
				}
			}
		}
	}
	return out
}

func containsAny(list []any, v any) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

func gemini(node any, depth int) (Schema, error) {
	s, ok := node.(map[string]any)
	if !ok || len(s) == 0 {
		return nil, errNotSubset
	}
	if _, ok := s["allOf"].([]any); ok {
		s = mergeAllOf(s)
	}
	out := Schema{}
	for _, k := range geminiCopy {
		if v, ok := s[k]; ok {
			out[k] = v
		}
	}
	if ex, ok := s["examples"].([]any); ok && len(ex) > 0 {
		out["example"] = ex[0]
	} else if ex, ok := s["example"]; ok {
		out["example"] = ex
	}
	types := typeList(s["type"])
	isNullable := contains(types, "null") || s["nullable"] == true
	var nonNull []string
	for _, t := range types {
		if t != "null" {
			nonNull = append(nonNull, t)
		}
	}
	types = nonNull
	branches, ok := s["anyOf"].([]any)
	if !ok {
		branches, ok = s["oneOf"].([]any)
	}
	if len(types) > 1 {
		rest := Schema{}
		for k, v := range s {
			if k != "type" && k != "anyOf" && k != "oneOf" {
				rest[k] = v
			}
		}
		var any []any
		for _, t := range types {
			one := Schema{}
			for k, v := range rest {
				one[k] = v
			}
			one["type"] = t
			g, err := gemini(one, depth+1)
			if err != nil {
				return nil, err
			}
			any = append(any, g)
		}
		out = Schema{"anyOf": any}
		if isNullable {
			out["nullable"] = true
		}
		return out, nil
	}
	if ok {
		var kept []any
		for _, b := range branches {
			if bm, isMap := b.(map[string]any); isMap && bm["type"] == "null" && len(bm) == 1 {
				isNullable = true
				continue
			}
			g, err := gemini(b, depth+1)
			if err != nil {
				return nil, err
			}
			kept = append(kept, g)
		}
		if len(kept) == 1 && len(types) == 0 {
			merged := Schema{}
			for k, v := range kept[0].(Schema) {
				merged[k] = v
			}
			for k, v := range out {
				if _, has := merged[k]; !has {
					merged[k] = v
				}
			}
			out = merged
		} else if len(kept) > 0 {
			out["anyOf"] = kept
		}
	}
	if len(types) > 0 {
		t, known := geminiTypes[types[0]]
		if !known {
			t = "STRING"
		}
		out["type"] = t
	}
	values, hasEnum := s["enum"].([]any)
	if c, has := s["const"]; has {
		values, hasEnum = []any{c}, true
	}
	if hasEnum {
		var strs, others []any
		for _, v := range values {
			switch v.(type) {
			case nil:
				isNullable = true
			case string:
				strs = append(strs, v)
			default:
				others = append(others, v)
			}
		}
		if len(strs) > 0 && len(others) == 0 {
			out["enum"] = strs
			if _, has := out["type"]; !has {
				out["type"] = "STRING"
			}
		} else if len(strs)+len(others) > 0 {
			var words []string
			for _, v := range values {
				if v != nil {
					b, _ := json.Marshal(v)
					words = append(words, spaced(string(b)))
				}
			}
			describe(out, "one of: "+strings.Join(words, ", "))
		}
	}
	if f, ok := s["format"].(string); ok {
		if t, _ := out["type"].(string); geminiFormats[t][f] {
			out["format"] = f
		}
	}
	if isNullable {
		out["nullable"] = true
	}
	_, propsIsMap := s["properties"].(map[string]any)
	if out["type"] == "OBJECT" || len(types) == 0 && propsIsMap {
		props, _ := s["properties"].(map[string]any)
		if len(props) == 0 {
			return nil, errNotSubset
		}
		for name := range props {
			if !GeminiProperty.MatchString(name) {
				return nil, errNotSubset
			}
		}
		out["type"] = "OBJECT"
		conv := Schema{}
		for name, p := range props {
			g, err := gemini(p, depth+1)
			if err != nil {
				return nil, err
			}
			conv[name] = g
		}
		out["properties"] = conv
		var req []any
		for _, r := range typeList(s["required"]) {
			if _, ok := props[r]; ok {
				req = append(req, r)
			}
		}
		if len(req) > 0 {
			out["required"] = req
		}
	}
	if out["type"] == "ARRAY" {
		items, isMap := s["items"].(map[string]any)
		if !isMap {
			if prefix, ok := s["prefixItems"].([]any); ok {
				items, isMap = Schema{"anyOf": prefix}, true
			}
		}
		var it any
		if isMap {
			it = items
		}
		g, err := gemini(it, depth+1)
		if err != nil {
			return nil, err
		}
		out["items"] = g
	}
	_, hasType := out["type"]
	_, hasAny := out["anyOf"]
	if !hasType && !hasAny {
		return nil, errNotSubset
	}
	return out, nil
}

// spaced renders a JSON value as Python's json.dumps does by default (", " and ": "), so
// that both libraries describe an enum alike.
func spaced(compact string) string {
	var b strings.Builder
	inString, escaped := false, false
	for _, r := range compact {
		b.WriteRune(r)
		switch {
		case escaped:
			escaped = false
		case r == '\\' && inString:
			escaped = true
		case r == '"':
			inString = !inString
		case !inString && (r == ',' || r == ':'):
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// GeminiParameters returns a Gemini function's parameters under the key they go in:
// "parameters" with the OpenAPI subset, "parametersJsonSchema" with the JSON Schema when
// the subset cannot hold it, or "parameters" and nil for a tool without any (Gemini refuses
// an object without properties).
func GeminiParameters(inlined Schema) (string, Schema) {
	root := objectRoot(inlined)
	if props, _ := root["properties"].(map[string]any); len(props) == 0 {
		if extra, has := root["additionalProperties"]; !has || extra == nil || extra == false {
			return "parameters", nil
		}
		return "parametersJsonSchema", root
	}
	g, err := gemini(root, 0)
	if err != nil {
		return "parametersJsonSchema", root
	}
	return "parameters", g
}
