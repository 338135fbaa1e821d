package access

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func mustLoad(t *testing.T, path string) *Policy {
	t.Helper()
	p, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestInvalidFiles reads each testdata/invalid/NAME.json and requires the error to contain
// NAME.err, which says what a user reading the log would need.
func TestInvalidFiles(t *testing.T) {
	files, _ := filepath.Glob("testdata/invalid/*.json")
	if len(files) == 0 {
		t.Fatal("no invalid files in testdata")
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			want, err := os.ReadFile(strings.TrimSuffix(f, ".json") + ".err")
			if err != nil {
				t.Fatal(err)
			}
			_, err = Load(f)
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Fatalf("Load: %v, want a *FileError", err)
			}
			if !strings.Contains(err.Error(), strings.TrimSpace(string(want))) {
				t.Errorf("error:\n  %v\nwant it to contain:\n  %s", err, want)
			}
			if !strings.Contains(err.Error(), f) {
				t.Errorf("error %q does not name the file", err)
			}
		})
	}
}

func TestValidFiles(t *testing.T) {
	files, _ := filepath.Glob("testdata/valid/*.json")
	if len(files) == 0 {
		t.Fatal("no valid files in testdata")
	}
	for _, f := range files {
		if _, err := Load(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func TestEveryProblemNamed(t *testing.T) {
	_, err := Parse([]byte(`{"clients": [{"name": "a", "allow": ["x y"], "deny": ["?/"], "view": "all", "extra": 1}]}`))
	var fe *FileError
	if !errors.As(err, &fe) || len(fe.Problems) != 4 {
		t.Fatalf("Parse: %v, want 4 problems", err)
	}
}

func TestAuthenticate(t *testing.T) {
	p := mustLoad(t, "testdata/valid/two-clients.json")
	tests := []struct {
		token, want string
	}{
		{"analyst-token", "analyst"},
		{"ops-token", "ops"},
		{"ops-token ", ""},
		{"", ""},
		{"wrong", ""},
	}
	for _, tt := range tests {
		c, ok := p.Authenticate(tt.token)
		got := ""
		if ok {
			got = c.Name
		}
		if got != tt.want {
			t.Errorf("Authenticate(%q) = %q, want %q", tt.token, got, tt.want)
		}
	}
	// A client without a token is never matched, not even by the hash of nothing.
	local := mustLoad(t, "testdata/valid/stdio-only.json")
	if c, ok := local.Authenticate(""); ok {
		t.Errorf("empty token authenticated as %q", c.Name)
	}
	if c, ok := local.Client("local"); !ok || c.HasToken() {
		t.Errorf("Client(local) = %v, %v; want found, without token", c, ok)
	}
	upper := mustLoad(t, "testdata/valid/upper-hex.json")
	if c, ok := upper.Authenticate("analyst-token"); !ok || c.Name != "a" {
		t.Errorf("upper-case hex: %v, %v", c, ok)
	}
}

func TestAllowed(t *testing.T) {
	p := mustLoad(t, "testdata/valid/two-clients.json")
	analyst, _ := p.Client("analyst")
	ops, _ := p.Client("ops")
	local, _ := mustLoad(t, "testdata/valid/stdio-only.json").Client("local")
	tests := []struct {
		client *Client
		name   string
		want   bool
	}{
		{analyst, "meos.speed", true},
		{analyst, "meos.transform", false}, // denied
		{analyst, "meos", false},
		{analyst, "meosx.speed", false},
		{analyst, "go.greet", false},
		{analyst, "toolnode.search", true}, // the node's search and execute reach only allowed tools
		{analyst, "toolnode.execute", true},
		{analyst, "toolnode.status", false},
		{ops, "anything.at.all", true},
		{local, "node-lamp.on", true},
		{local, "go.node-lamp.on", false},
		{local, "c.greet", true},
		{local, "go.sleep", false},
		{nil, "whatever", true}, // no access file
	}
	for _, tt := range tests {
		name := "<none>"
		if tt.client != nil {
			name = tt.client.Name
		}
		if got := tt.client.Allowed(tt.name); got != tt.want {
			t.Errorf("%s.Allowed(%q) = %v, want %v", name, tt.name, got, tt.want)
		}
	}
	deny, err := Parse([]byte(`{"clients": [{"name": "x", "allow": ["*"], "deny": ["toolnode.*"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := deny.Client("x"); c.Allowed("toolnode.search") {
		t.Error("an explicit deny of toolnode.* must hold for toolnode.search")
	}
}

func TestViewAndScopes(t *testing.T) {
	p := mustLoad(t, "testdata/valid/two-clients.json")
	analyst, _ := p.Client("analyst")
	local, _ := mustLoad(t, "testdata/valid/stdio-only.json").Client("local")
	var none *Client
	for _, tt := range []struct {
		c         *Client
		def, want View
	}{
		{analyst, ViewFull, ViewSearch},
		{local, ViewSearch, ViewSearch},
		{local, ViewFull, ViewFull},
		{none, ViewFull, ViewFull},
	} {
		if got := tt.c.ViewOr(tt.def); got != tt.want {
			t.Errorf("ViewOr(%q) = %q, want %q", tt.def, got, tt.want)
		}
	}
	if !analyst.HasScope("read") || analyst.HasScope("write") || none.HasScope("read") {
		t.Error("HasScope does not follow the file")
	}
}

func TestGlob(t *testing.T) {
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"meos.*", "meos.speed", true},
		{"meos.*", "meos.", true},
		{"meos.*", "meos", false},
		{"go.*", "go.node-lamp.on", true}, // * crosses dots
		{"*.status", "node-lamp.status", true},
		{"*.status", "go.node-lamp.status", true},
		{"*.status", "status", false},
		{"?.greet", "c.greet", true},
		{"?.greet", "go.greet", false},
		{"*", "", true},
		{"a*b*c", "aXbYc", true},
		{"a*b*c", "aXbYcZ", false},
		{"a*b*c", "abbbc", true},
		{"exact.name", "exact.name", true},
		{"exact.name", "Exact.name", false},
		{"**", "x.y", true},
	}
	for _, tt := range tests {
		p, err := ParsePattern(tt.pattern)
		if err != nil {
			t.Fatalf("ParsePattern(%q): %v", tt.pattern, err)
		}
		if got := p.Match(tt.name); got != tt.want {
			t.Errorf("%q.Match(%q) = %v, want %v", tt.pattern, tt.name, got, tt.want)
		}
	}
}

func TestTokenHash(t *testing.T) {
	// The hash sha256sum prints for "analyst-token", as written in testdata.
	if got := TokenHash("analyst-token"); got != "06ff3913469cdb533bd93c0701fee774bbf18c48e01cdfc413a17b69dbea0764" {
		t.Errorf("TokenHash = %s", got)
	}
}

// BenchmarkAuthenticate is the cost of one HTTP request's token check over 100 clients.
func BenchmarkAuthenticate(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"clients": [`)
	for i := range 100 {
		if i > 0 {
			sb.WriteString(",")
		}
		fmt.Fprintf(&sb, `{"name": "c%d", "token_sha256": %q, "allow": ["b%d.*", "*.status"], "deny": ["*.admin_*"]}`, i, TokenHash(fmt.Sprint("token-", i)), i)
	}
	sb.WriteString("]}")
	p, err := Parse([]byte(sb.String()))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("authenticate", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, ok := p.Authenticate("token-57"); !ok {
				b.Fatal("not found")
			}
		}
	})
	c, _ := p.Client("c57")
	b.Run("allowed", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			c.Allowed("b57.some_tool_name")
		}
	})
}
