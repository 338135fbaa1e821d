package front_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolnode/toolnode/runtime/internal/front/httpfront"
	"github.com/toolnode/toolnode/runtime/internal/reload"
	"github.com/toolnode/toolnode/runtime/internal/serve"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
	"github.com/toolnode/toolnode/runtime/internal/testkit/nodekit"
)

// A bundle's schema with a root anyOf and a $ref is listed to a client of the initialize
// era as hosts take it (root type object, no root combinator, the $ref inlined, the anyOf
// said in the description), and as the bundle wrote it to a 2026-07-28 client; a call
// that breaks the anyOf is still refused, checked against the bundle's own schema.
func TestARootAnyOfSchemaIsListedLoweredAndStillRefusesABadCall(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "a", Env: map[string]string{"FAKE_ANYOF": "1"}})
	url := nodekit.Start(t, serve.Config{Source: reload.Source{Dirs: []string{dir}}, HTTP: nodekit.Loopback}).URL

	type listed struct {
		Result struct {
			Tools []struct {
				Name        string
				Description string
				InputSchema map[string]any
			}
		}
	}
	either := func(t *testing.T, body string) (schema map[string]any, description string) {
		t.Helper()
		var l listed
		if err := json.Unmarshal([]byte(body), &l); err != nil {
			t.Fatalf("tools/list: %v: %s", err, body)
		}
		for _, tool := range l.Result.Tools {
			if strings.HasSuffix(tool.Name, "either") {
				return tool.InputSchema, tool.Description
			}
		}
		t.Fatalf("a.either is not listed: %.500s", body)
		return nil, ""
	}

	resp, _ := postTo(t, url, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"claude-code","version":"2"}}}`, nil)
	hdr := map[string]string{httpfront.HeaderSessionID: resp.Header.Get(httpfront.HeaderSessionID), httpfront.HeaderProtocolVersion: "2025-11-25"}
	_, body := postTo(t, url, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, hdr)
	schema, description := either(t, body)
	if schema["type"] != "object" || schema["anyOf"] != nil || strings.Contains(body, `"$ref"`) {
		t.Errorf("listed to a 2025-11-25 client as %v", schema)
	}
	if a, _ := schema["properties"].(map[string]any)["a"].(map[string]any); a["type"] != "string" {
		t.Errorf("the $ref of property a is not inlined: %v", schema["properties"])
	}
	if !strings.Contains(description, `"anyOf":[{"required":["a"]},{"required":["b"]}]`) {
		t.Errorf("the description does not carry the anyOf: %q", description)
	}

	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	_, body = postTo(t, url, `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{`+meta+`}}`,
		map[string]string{httpfront.HeaderProtocolVersion: "2026-07-28", httpfront.HeaderMethod: "tools/list"})
	if schema, _ := either(t, body); schema["anyOf"] == nil || !strings.Contains(body, `"$ref"`) {
		t.Errorf("a 2026-07-28 client is not listed the bundle's own schema: %v", schema)
	}

	for _, tc := range []struct{ args, want string }{
		{`{}`, `invalid_arguments`},
		{`{"a":"word"}`, `a: either`},
		{`{"a":""}`, `invalid_arguments`}, // the $ref's minLength still holds
	} {
		_, body = postTo(t, url, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"toolnode.execute","arguments":{"name":"a.either","arguments":`+tc.args+`}}}`, hdr)
		if !strings.Contains(body, tc.want) {
			t.Errorf("a.either with %s through toolnode.execute: %s, want %s", tc.args, body, tc.want)
		}
	}
}
