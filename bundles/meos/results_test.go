package meos_test

// A MEOS answer of several megabytes, served by the real node over Streamable HTTP: it
// reaches its client cut to --max-result-bytes at a whole JSON item, with the note naming
// where the rest is; read back in ranges it is the whole; another client cannot read it.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// startHTTPNode serves this bundle over Streamable HTTP with the node's default flags and
// an access file of two clients, owner and other, whose bearer tokens are their names;
// it returns the node's URL.
func startHTTPNode(t *testing.T) string {
	t.Helper()
	var clients []map[string]any
	for _, name := range []string{"owner", "other"} {
		sum := sha256.Sum256([]byte(name))
		clients = append(clients, map[string]any{"name": name, "token_sha256": hex.EncodeToString(sum[:]), "allow": []string{"*"}})
	}
	accessFile := filepath.Join(t.TempDir(), "access.json")
	b, _ := json.Marshal(map[string]any{"clients": clients})
	if err := os.WriteFile(accessFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	url, _ := serveHTTP(t, "--access", accessFile)
	return url
}

// bearer adds a bearer token to every request.
type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// connectHTTP connects the Go SDK's client to the node at url as the access file's client
// name.
func connectHTTP(t *testing.T, url, name string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tr := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer(name)}}
	s, err := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, nil).Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("connect %s: %v", name, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestAMultiMegabyteAnswerIsCutAndReadBackInRanges(t *testing.T) {
	url := startHTTPNode(t)
	owner, other := connectHTTP(t, url, "owner"), connectHTTP(t, url, "other")
	// A bin of each second of a day: 86,400 time spans, about 4.5 MB of JSON text, and as
	// much again as structuredContent.
	res := call(t, owner, "tstzspan_bins", map[string]any{"s": "[2025-01-01, 2025-01-02)", "duration": "1 second", "origin": "2025-01-01"})
	if res.IsError || len(res.Content) != 2 {
		t.Fatalf("got %d content items (error %v), want the cut text and a note: %.300v", len(res.Content), res.IsError, res.Content[0])
	}
	kept, note := res.Content[0].(*mcp.TextContent).Text, res.Content[1].(*mcp.TextContent).Text
	const budget = 100 << 10 // --max-result-bytes's default
	if len(kept)+len(note) > budget {
		t.Errorf("the client got %d bytes of text, more than %d", len(kept)+len(note), budget)
	}
	var cut struct {
		Result []string `json:"result"`
	}
	if err := json.Unmarshal([]byte(kept), &cut); err != nil || len(cut.Result) < 1000 || cut.Result[1] != "[2025-01-01 00:00:01+00, 2025-01-01 00:00:02+00)" {
		t.Fatalf("the cut text is not the answer's first bins as JSON (%v): %.200s", err, kept)
	}
	m := regexp.MustCompile(`(toolnode://result/\S+/content/0) from offset (\d+)`).FindStringSubmatch(note)
	if m == nil {
		t.Fatalf("the note says nothing of where the rest is: %s", note)
	}
	uri := m[1]

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var whole strings.Builder
	var total int
	for off := 0; off == 0 || off < total; {
		r, err := owner.ReadResource(ctx, &mcp.ReadResourceParams{URI: fmt.Sprintf("%s?offset=%d&length=%d", uri, off, 1<<20)})
		if err != nil {
			t.Fatalf("read from %d: %v", off, err)
		}
		var at struct{ Offset, Length, Total int }
		b, _ := json.Marshal(r.Meta["io.toolnode/result"])
		if err := json.Unmarshal(b, &at); err != nil || at.Offset != off || at.Length == 0 {
			t.Fatalf("read from %d says %s", off, b)
		}
		whole.WriteString(r.Contents[0].Text)
		off, total = off+at.Length, at.Total
	}
	if total < 4<<20 {
		t.Errorf("the answer is %d bytes; the test wants several megabytes", total)
	}
	var all struct {
		Result []string `json:"result"`
	}
	// The structured answer came whole: the text read back must say the same.
	var structured struct {
		Result []string `json:"result"`
	}
	b, _ := json.Marshal(res.StructuredContent)
	_ = json.Unmarshal(b, &structured)
	if err := json.Unmarshal([]byte(whole.String()), &all); err != nil || len(all.Result) < 86400 || !slices.Equal(all.Result, structured.Result) ||
		!strings.HasPrefix(whole.String(), kept[:len(kept)-2]) {
		t.Fatalf("the ranges read back are not the whole answer (%v, %d bins of %d)", err, len(all.Result), len(structured.Result))
	}
	if _, err := other.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("another client read the result: %v", err)
	}
}

// Every input schema the node lists for `make run`'s catalog (the examples and this bundle)
// to a client of the initialize era has a root {"type": "object"}, no root combinator and no
// $ref: what Claude Code and Gemini refuse.
func TestEverySchemaOfMakeRunsCatalogIsOneHostsTake(t *testing.T) {
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	for _, exe := range []string{"examples/go/build/example-go", "examples/c/build/example-c"} {
		if _, err := os.Stat(filepath.Join(root, exe)); err != nil {
			t.Skipf("%s is not built (make examples): %v", exe, err)
		}
	}
	cmd := exec.Command(node, "serve", "--bundles", filepath.Join(root, "examples"), "--bundles", filepath.Join(root, "bundles"), "--view", "full")
	cmd.Env = append(os.Environ(), "MEOS_WAYS="+filepath.Join(root, "bundles", "meos", "tests", "data", "ways.csv"))
	logs := &syncBuffer{}
	cmd.Stderr = logs
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	s, err := mcp.NewClient(&mcp.Implementation{Name: "claude-code", Version: "2"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, logs)
	}
	defer s.Close()
	listed, meos := 0, 0
	for tool, err := range s.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		listed++
		if strings.HasPrefix(tool.Name, "meos") {
			meos++
		}
		b, _ := json.Marshal(tool.InputSchema)
		var schema map[string]json.RawMessage
		if err := json.Unmarshal(b, &schema); err != nil {
			t.Fatalf("%s: %v", tool.Name, err)
		}
		if string(schema["type"]) != `"object"` {
			t.Errorf("%s: root type %s", tool.Name, schema["type"])
		}
		for _, k := range []string{"allOf", "anyOf", "oneOf", "not", "if", "then", "else"} {
			if _, has := schema[k]; has {
				t.Errorf("%s: a root %s", tool.Name, k)
			}
		}
		if strings.Contains(string(b), `"$ref"`) {
			t.Errorf("%s: a $ref", tool.Name)
		}
	}
	t.Logf("%d tools listed, %d of MEOS", listed, meos)
	if meos < 100 {
		t.Errorf("only %d MEOS tools listed of %d", meos, listed)
	}
}
