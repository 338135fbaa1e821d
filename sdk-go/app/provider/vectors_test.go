package provider

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// vectors are testdata/app/vectors.json, which the Python library writes and both
// libraries and the CLI are held to.
type vectors struct {
	Names []struct {
		Case     string            `json:"case"`
		Rendered map[string]string `json:"rendered"`
	} `json:"names"`
	Schemas []struct {
		Case        string                     `json:"case"`
		Tool        json.RawMessage            `json:"tool"`
		Definitions map[string]json.RawMessage `json:"definitions"`
	} `json:"schemas"`
}

func loadVectors(t *testing.T) vectors {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "app", "vectors.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v vectors
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Names) == 0 || len(v.Schemas) == 0 {
		t.Fatal("vectors.json holds no cases")
	}
	return v
}

// normal decodes JSON (or re-encodes a value) with numbers as written, for comparing.
func normal(t *testing.T, v any) any {
	t.Helper()
	raw, ok := v.(json.RawMessage)
	if !ok {
		var err error
		if raw, err = json.Marshal(v); err != nil {
			t.Fatal(err)
		}
	}
	out, err := DecodeJSON(raw)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestNameVectors(t *testing.T) {
	for _, c := range loadVectors(t).Names {
		t.Run(c.Case, func(t *testing.T) {
			var names []string
			for n := range c.Rendered {
				names = append(names, n)
			}
			m := MapNames(names)
			got := map[string]string{}
			for _, n := range names {
				got[n] = m.Render(n)
				if !IsName(got[n]) {
					t.Errorf("%q renders as %q, which the model APIs refuse", n, got[n])
				}
				if back, ok := m.Tool(got[n]); !ok || back != n {
					t.Errorf("%q maps back to %q, %v", got[n], back, ok)
				}
			}
			if diff := cmp.Diff(c.Rendered, got); diff != "" {
				t.Errorf("renderings (-vectors +Go):\n%s", diff)
			}
		})
	}
}

func TestSchemaVectors(t *testing.T) {
	for _, c := range loadVectors(t).Schemas {
		t.Run(c.Case, func(t *testing.T) {
			tool, err := DecodeTool(c.Tool)
			if err != nil {
				t.Fatal(err)
			}
			for key, want := range c.Definitions {
				format, strict := key, false
				if n := len(key) - len("+strict"); n > 0 && key[n:] == "+strict" {
					format, strict = key[:n], true
				}
				d, err := Make([]Tool{tool}, format, strict)
				if err != nil {
					t.Fatalf("%s: %v", key, err)
				}
				if diff := cmp.Diff(normal(t, want), normal(t, d.Tools)); diff != "" {
					t.Errorf("%s (-vectors +Go):\n%s", key, diff)
				}
			}
		})
	}
}
