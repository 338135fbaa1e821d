package upstream

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// paramHeader is a tool parameter that the 2026-07-28 revision has mirrored into an
// Mcp-Param-<Name> header of each tools/call over HTTP (the x-mcp-header schema keyword).
type paramHeader struct {
	name string   // the header's name after "Mcp-Param-"
	path []string // the chain of properties from the arguments to the parameter
}

// tokenName is the HTTP field-name syntax an x-mcp-header value must have.
var tokenName = regexp.MustCompile(`^[A-Za-z0-9!#$%&'*+.^_|~-]+$`)

// paramHeaders reads the x-mcp-header annotations of a tool's inputSchema. An annotation
// that breaks the revision's rules (a bad or repeated name, a parameter that is not an
// integer, string or boolean, or one not reached through "properties" alone) makes the
// tool invalid, and the error says why.
func paramHeaders(schema json.RawMessage) ([]paramHeader, error) {
	if !bytes.Contains(schema, []byte("x-mcp-header")) {
		return nil, nil // the common case, without decoding the schema
	}
	var root any
	if err := json.Unmarshal(schema, &root); err != nil {
		return nil, fmt.Errorf("inputSchema: %w", err)
	}
	var out []paramHeader
	seen := map[string]bool{}
	var walk func(node any, path []string, reachable, isProperty bool) error
	walk = func(node any, path []string, reachable, isProperty bool) error {
		switch v := node.(type) {
		case []any:
			for _, e := range v {
				if err := walk(e, path, false, false); err != nil {
					return err
				}
			}
		case map[string]any:
			if h, ok := v["x-mcp-header"]; ok {
				name, _ := h.(string)
				switch typ, _ := v["type"].(string); {
				case !reachable || !isProperty:
					return fmt.Errorf("x-mcp-header at %q is not reached through properties alone", strings.Join(path, "."))
				case name == "" || !tokenName.MatchString(name):
					return fmt.Errorf("x-mcp-header %q of %q is not an HTTP header name", name, strings.Join(path, "."))
				case seen[strings.ToLower(name)]:
					return fmt.Errorf("x-mcp-header %q is used twice", name)
				case typ != "string" && typ != "integer" && typ != "boolean":
					return fmt.Errorf("x-mcp-header %q is on a parameter of type %q; only string, integer and boolean are allowed", name, typ)
				}
				seen[strings.ToLower(name)] = true
				out = append(out, paramHeader{name: name, path: append([]string(nil), path...)})
			}
			for k, child := range v {
				if k == "properties" && reachable {
					props, _ := child.(map[string]any)
					for name, sub := range props {
						if err := walk(sub, append(path, name), true, true); err != nil {
							return err
						}
					}
					continue
				}
				if err := walk(child, path, false, false); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(root, nil, true, false); err != nil {
		return nil, err
	}
	return out, nil
}

// paramValue reads the value of a mirrored parameter in a call's arguments, written as a
// header value; false when the call does not give it.
func paramValue(args json.RawMessage, path []string) (string, bool) {
	var v any = json.RawMessage(args)
	for _, p := range path {
		var obj map[string]json.RawMessage
		if json.Unmarshal(v.(json.RawMessage), &obj) != nil {
			return "", false
		}
		raw, ok := obj[p]
		if !ok {
			return "", false
		}
		v = raw
	}
	raw := bytes.TrimSpace(v.(json.RawMessage))
	var s string
	switch {
	case json.Unmarshal(raw, &s) == nil:
		return headerValue(s), true
	case string(raw) == "true" || string(raw) == "false":
		return string(raw), true
	}
	if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil && n > -(1<<53) && n < 1<<53 {
		return strconv.FormatInt(n, 10), true
	}
	return "", false
}
