package provider

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestInlineSizedCountsTheBytesOfTheInlinedSchema(t *testing.T) {
	s := decode(t, `{"type":"object","$defs":{"n":{"type":"number","minimum":1.5,"description":"a number"}},
		"properties":{"a":{"$ref":"#/$defs/n"},"b":{"type":"boolean","default":false},"c":{"enum":["x",null,true]}},
		"required":["a"]}`)
	out, size, err := InlineSized(s, MaxToolBytes)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	if size != len(b) {
		t.Errorf("size %d, but %s takes %d bytes", size, b, len(b))
	}
}

// Strings, not only structure, count: a long description named many times is a bomb too.
func TestInlineSizedBoundsStringsNamedManyTimes(t *testing.T) {
	props := map[string]any{}
	for i := range 1_600 {
		props[fmt.Sprintf("p%d", i)] = map[string]any{"$ref": "#/$defs/big"}
	}
	s := map[string]any{"type": "object", "properties": props,
		"$defs": map[string]any{"big": map[string]any{"type": "string", "description": strings.Repeat("x", 100_000)}}}
	if _, size, err := InlineSized(s, MaxToolBytes); !errors.Is(err, ErrSchema) ||
		!strings.Contains(err.Error(), "expands past 1048576 bytes") {
		t.Errorf("160 MB of descriptions: size %d, error %v", size, err)
	}
}
