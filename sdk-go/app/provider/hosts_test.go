package provider

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

func decode(t *testing.T, s string) any {
	t.Helper()
	var v any
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// The official conformance suite's json-schema-2020-12 tool: lowered, it keeps what the
// suite requires of a 2025-11-25 server ($schema, $defs with address, additionalProperties
// false), has its $ref inlined, and states its root allOf and if/then/else in the note.
func TestHostInputSchemaKeepsWhatTheConformanceSuiteChecks(t *testing.T) {
	s := decode(t, `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",
		"$defs":{"address":{"$anchor":"addressDef","type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},
		"properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"},"contactMethod":{"type":"string","enum":["phone","email"]},"phone":{"type":"string"},"email":{"type":"string"}},
		"allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],
		"if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},"then":{"required":["phone"]},"else":{"required":["email"]},
		"additionalProperties":false}`)
	got, note := HostInputSchema(s, MaxToolBytes)
	if got["$schema"] != "https://json-schema.org/draft/2020-12/schema" || got["additionalProperties"] != false || got["type"] != "object" {
		t.Errorf("lost what the suite checks: %v", got)
	}
	if defs, _ := got["$defs"].(map[string]any); defs["address"] == nil {
		t.Errorf("$defs lost its address: %v", got["$defs"])
	}
	for _, k := range []string{"allOf", "if", "then", "else"} {
		if _, has := got[k]; has {
			t.Errorf("root %s is still there", k)
		}
		if !strings.Contains(note, `"`+k+`"`) {
			t.Errorf("the note does not state %s: %s", k, note)
		}
	}
	if addr := got["properties"].(map[string]any)["address"].(map[string]any); addr["$ref"] != nil || addr["type"] != "object" {
		t.Errorf("address is not inlined: %v", addr)
	}
}

// A root allOf of plain object schemas folds into the properties exactly; one that
// constrains more does not, and is stated in the note.
func TestHostInputSchemaFoldsAnAllOfOnlyWhereExact(t *testing.T) {
	got, note := HostInputSchema(decode(t, `{"allOf":[
		{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]},
		{"properties":{"b":{"type":"integer"},"a":{"maxLength":3}},"required":["b"]}]}`), MaxToolBytes)
	b, _ := json.Marshal(got)
	want := `{"properties":{"a":{"allOf":[{"type":"string"},{"maxLength":3}]},"b":{"type":"integer"}},"required":["a","b"],"type":"object"}`
	if string(b) != want || note != "" {
		t.Errorf("folded into %s (note %q), want %s", b, note, want)
	}
	got, note = HostInputSchema(decode(t, `{"type":"object","properties":{"a":{}},"additionalProperties":false,
		"allOf":[{"properties":{"b":{}}}]}`), MaxToolBytes)
	if got["allOf"] != nil || !strings.Contains(note, `"allOf"`) {
		t.Errorf("an allOf whose properties additionalProperties would refuse was folded: %v %q", got, note)
	}
	got, note = HostInputSchema(decode(t, `{"$ref":"#/$defs/args","$defs":{"args":{"type":"object","properties":{"x":{"type":"number"}}}}}`), MaxToolBytes)
	if got["type"] != "object" || got["properties"].(map[string]any)["x"] == nil || note != "" {
		t.Errorf("a root $ref: %v %q", got, note)
	}
	got, _ = HostInputSchema(decode(t, `"not an object"`), MaxToolBytes)
	if got["type"] != "object" {
		t.Errorf("a schema that is not an object: %v", got)
	}
}

// A schema bomb (each definition naming the one before twice) lowers quickly within its
// bound, its references left as they are.
func TestHostInputSchemaIsBoundedOnASchemaBomb(t *testing.T) {
	defs := map[string]any{"d0": map[string]any{"type": "string", "description": strings.Repeat("x", 100)}}
	for i := 1; i <= 40; i++ {
		ref := map[string]any{"$ref": fmt.Sprintf("#/$defs/d%d", i-1)}
		defs[fmt.Sprintf("d%d", i)] = map[string]any{"type": "object", "properties": map[string]any{"l": ref, "r": ref}}
	}
	s := map[string]any{"type": "object", "$defs": defs, "properties": map[string]any{"x": map[string]any{"$ref": "#/$defs/d40"}}}
	start := time.Now()
	got, _ := HostInputSchema(s, MaxToolBytes)
	b, _ := json.Marshal(got)
	if len(b) > 64<<10 || !strings.Contains(string(b), `"$ref"`) {
		t.Errorf("the bomb became %d bytes", len(b))
	}
	t.Logf("lowered in %s", time.Since(start))
}
