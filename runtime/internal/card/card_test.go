package card_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.uber.org/goleak"

	"github.com/toolnode/toolnode/runtime/internal/card"
	"github.com/toolnode/toolnode/runtime/internal/cli"
	"github.com/toolnode/toolnode/runtime/internal/front/httpfront"
	"github.com/toolnode/toolnode/runtime/internal/reload"
	"github.com/toolnode/toolnode/runtime/internal/serve"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
	"github.com/toolnode/toolnode/runtime/internal/testkit/nodekit"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// The node's server card against the extension's own schema (testdata/server-card.schema.json,
// schema.json of modelcontextprotocol/experimental-ext-server-card at 8924e08, Apache-2.0:
// testdata/LICENSE-server-card-schema), as built, as served while bundles come and go, and
// as toolnode manifest prints it.

func TestMain(m *testing.M) {
	testkit.RunIfChild()
	goleak.VerifyTestMain(m, testkit.KeptAliveConns()...)
}

// schema compiles the extension's ServerCard definition, formats asserted.
func schema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "server-card.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("server-card.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("server-card.schema.json#/$defs/ServerCard")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// validate reports why body is not a valid server card, or nil.
func validate(s *jsonschema.Schema, body []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return err
	}
	return s.Validate(v)
}

func TestTheSchemaTellsTheRepositorysValidExamplesFromItsInvalidOnes(t *testing.T) {
	s := schema(t)
	files, _ := filepath.Glob(filepath.Join("testdata", "*valid-*.json"))
	if len(files) < 4 {
		t.Fatalf("only %d examples in testdata", len(files))
	}
	for _, f := range files {
		body, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		err = validate(s, body)
		if valid := strings.HasPrefix(filepath.Base(f), "valid-"); valid != (err == nil) {
			t.Errorf("%s: valid %v, but the schema says %v", f, valid, err)
		}
	}
}

func TestEveryCardTheNodeBuildsIsValid(t *testing.T) {
	s := schema(t)
	many := make([]string, 40)
	for i := range many {
		many[i] = strings.Repeat("b", 30) + string(rune('a'+i%26))
	}
	for name, in := range map[string]card.Info{
		"no bundles, no endpoint":       {},
		"named bundles on an endpoint":  {Version: "0.3.0", URL: "http://127.0.0.1:7777/mcp", Bundles: []string{"example-go", "meos"}},
		"behind credentials":            {Version: "0.3.0", URL: "https://tools.example.com/mcp", Bundles: []string{"meos"}, Private: true, Auth: true},
		"more names than a description": {Version: "0.3.0", URL: "http://[::1]:7777/mcp", Bundles: many},
	} {
		c := card.Build(in, mcp.AllVersions())
		if err := validate(s, c.Encode()); err != nil {
			t.Errorf("%s: %v\n%s", name, err, c.Encode())
		}
		if in.Private && strings.Contains(string(c.Encode()), "meos") {
			t.Errorf("%s: the card names a bundle:\n%s", name, c.Encode())
		}
	}
}

// get fetches url with the card's media type in Accept and headers hdr (name, value pairs).
func get(t *testing.T, method, url string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", card.MediaType)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res, body
}

func TestTheServedCardIsValidAndFollowsTheBundles(t *testing.T) {
	s := schema(t)
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "alpha"})
	n := nodekit.Start(t, serve.Config{Source: reload.Source{Dirs: []string{dir}}, Watch: true, HTTP: nodekit.Loopback, Version: "9.9.9"})
	n.Ready(t)
	cardURL := n.URL + card.Suffix

	res, body := get(t, http.MethodGet, cardURL)
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != card.MediaType {
		t.Fatalf("GET %s: %s, Content-Type %q\n%s", cardURL, res.Status, res.Header.Get("Content-Type"), body)
	}
	if err := validate(s, body); err != nil {
		t.Fatalf("the served card is not valid: %v\n%s", err, body)
	}
	var c card.Card
	if err := json.Unmarshal(body, &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Remotes) != 1 || c.Remotes[0].URL != n.URL || c.Version != "9.9.9" || !strings.Contains(c.Description, "alpha") {
		t.Errorf("the card does not describe the node at %s:\n%s", n.URL, body)
	}
	for h, want := range map[string]string{"Access-Control-Allow-Origin": "*", "Access-Control-Expose-Headers": "ETag", "Cache-Control": "public, max-age=60"} {
		if got := res.Header.Get(h); got != want {
			t.Errorf("%s: %q, want %q", h, got, want)
		}
	}
	tag := res.Header.Get("ETag")
	if res, body := get(t, http.MethodGet, cardURL, "If-None-Match", tag); res.StatusCode != http.StatusNotModified || len(body) != 0 {
		t.Errorf("GET with If-None-Match of the current tag: %s, %d bytes", res.Status, len(body))
	}
	if res, _ := get(t, http.MethodOptions, cardURL, "Origin", "https://app.example", "Access-Control-Request-Method", "GET"); res.StatusCode != http.StatusNoContent || res.Header.Get("Access-Control-Allow-Methods") != "GET" {
		t.Errorf("CORS preflight: %s, methods %q", res.Status, res.Header.Get("Access-Control-Allow-Methods"))
	}
	if res, _ := get(t, http.MethodPost, cardURL); res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST to the card: %s, want 405", res.Status)
	}

	t.Run("the AI Catalog names the card", func(t *testing.T) {
		base := strings.TrimSuffix(n.URL, "/mcp")
		res, body := get(t, http.MethodGet, base+card.CatalogPath)
		var cat card.Catalog
		if err := json.Unmarshal(body, &cat); err != nil || res.Header.Get("Content-Type") != card.CatalogMediaType {
			t.Fatalf("catalog: %v, Content-Type %q\n%s", err, res.Header.Get("Content-Type"), body)
		}
		if len(cat.Entries) != 1 || cat.Entries[0].URL != cardURL || cat.Entries[0].Type != card.MediaType || cat.Entries[0].Identifier != "urn:air:127.0.0.1:mcp:toolnode" {
			t.Errorf("catalog entries %+v, want one naming %s", cat.Entries, cardURL)
		}
	})

	t.Run("a bundle added and removed changes the card and its tag", func(t *testing.T) {
		testkit.Write(t, dir, testkit.Fake{Name: "beta"})
		var now []byte
		testkit.Eventually(t, 10*time.Second, func() string {
			var res *http.Response
			res, now = get(t, http.MethodGet, cardURL, "If-None-Match", tag)
			if res.StatusCode != http.StatusOK || !strings.Contains(string(now), `"beta"`) {
				return "the card does not name beta yet: " + res.Status
			}
			return ""
		})
		if err := validate(s, now); err != nil {
			t.Errorf("the card after a reload: %v", err)
		}
		os.RemoveAll(filepath.Join(dir, "beta"))
		testkit.Eventually(t, 10*time.Second, func() string {
			if _, body := get(t, http.MethodGet, cardURL); strings.Contains(string(body), `"beta"`) {
				return "the card still names beta"
			}
			return ""
		})
		if res, _ := get(t, http.MethodGet, cardURL, "If-None-Match", tag); res.StatusCode != http.StatusNotModified {
			t.Errorf("back to alpha alone, the first tag no longer matches: %s", res.Status)
		}
	})

	t.Run("toolnode manifest prints the card the node serves", func(t *testing.T) {
		_, served := get(t, http.MethodGet, cardURL)
		var out, errs bytes.Buffer
		if code := cli.Main([]string{"manifest", "--format", "server-card", "--url", n.URL, "--bundles", dir}, strings.NewReader(""), &out, &errs); code != 0 {
			t.Fatalf("manifest --format server-card: exit %d\n%s", code, errs.String())
		}
		var printed, fromNode card.Card
		json.Unmarshal(out.Bytes(), &printed)
		json.Unmarshal(served, &fromNode)
		fromNode.Version = printed.Version // the test's node says 9.9.9; the command, the release
		a, _ := json.Marshal(printed)
		b, _ := json.Marshal(fromNode)
		if !bytes.Equal(a, b) {
			t.Errorf("printed:\n%s\nserved:\n%s", out.Bytes(), served)
		}
		if err := validate(s, out.Bytes()); err != nil {
			t.Errorf("the printed card: %v", err)
		}
	})
}

func TestACardBehindCredentialsNamesNoBundle(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "secretive"})
	n := nodekit.Start(t, serve.Config{Source: reload.Source{Dirs: []string{dir}}, HTTP: nodekit.Loopback,
		HTTPOptions: httpfront.Options{Token: "s3cret"}})
	n.Ready(t)
	_, body := get(t, http.MethodGet, n.URL+card.Suffix)
	var c card.Card
	if err := json.Unmarshal(body, &c); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(body), "secretive") || len(c.Remotes) != 1 || len(c.Remotes[0].Headers) != 1 || !c.Remotes[0].Headers[0].IsRequired {
		t.Errorf("a card behind a token should ask for it and name no bundle:\n%s", body)
	}
}

func TestTheCardInTheProtocolDocIsValid(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "protocol.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "\n## Server cards\n")
	_, block, ok2 := strings.Cut(section, "```json\n")
	block, _, ok3 := strings.Cut(block, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("docs/protocol.md has no JSON block under ## Server cards")
	}
	if err := validate(schema(t), []byte(block)); err != nil {
		t.Errorf("the card in docs/protocol.md: %v", err)
	}
}
