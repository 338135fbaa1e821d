// Package card makes the node's MCP server card (SEP-2127, the experimental extension of
// modelcontextprotocol/experimental-ext-server-card) and the AI Catalog that points at it,
// and serves both over HTTP with the headers the extension asks for: its media types, CORS
// for browser clients, a short Cache-Control and an ETag that If-None-Match revalidates.
//
// A card describes how to reach a server, not what it serves: no tools, prompts or
// resources. The node's card says who it is (name, title, version), the Streamable HTTP
// endpoint with the protocol revisions it speaks, whether a credential is needed, and,
// under _meta, the bundles it fronts now. It is made anew for each request from what the
// node holds then, so it follows bundles as they come and go.
package card

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"unicode/utf8"
)

// The extension's names and the node's identity on its card.
const (
	// SchemaURL is the $schema every v1 card carries.
	SchemaURL = "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json"
	// MediaType is the card's media type.
	MediaType = "application/mcp-server-card+json"
	// CatalogMediaType is the AI Catalog's media type.
	CatalogMediaType = "application/ai-catalog+json"
	// Suffix is appended to the Streamable HTTP endpoint's path to reach its card: the
	// location the extension reserves (/mcp/server-card for the node's /mcp).
	Suffix = "/server-card"
	// CatalogPath is the well-known path of a host's AI Catalog.
	CatalogPath = "/.well-known/ai-catalog.json"
	// Name is the node's name on its card, in the reverse-DNS form the schema requires.
	Name = "io.github.toolnode/toolnode"
	// MetaBundles is the _meta key under which the card lists the bundles the node fronts.
	MetaBundles = "io.toolnode/bundles"
	// maxDescription is the schema's bound on description, in characters.
	maxDescription = 100
)

// Info is what a card is made from: the node as it is now.
type Info struct {
	// Version is the node's version, as serverInfo gives it.
	Version string
	// URL is the Streamable HTTP endpoint clients connect to; "" leaves remotes out (the
	// command line prints a card for a node not listening anywhere yet).
	URL string
	// Bundles names the bundles the node fronts.
	Bundles []string
	// Private withholds the bundles' names, counting them only: the node decides per client
	// what each sees (an access file, OAuth, a token), and a card is public.
	Private bool
	// Auth says the endpoint needs an Authorization header.
	Auth bool
}

// Card is a server card as the v1 schema defines it, with the members the node fills.
type Card struct {
	Schema      string         `json:"$schema"`
	Name        string         `json:"name"`
	Title       string         `json:"title"`
	Version     string         `json:"version"`
	Description string         `json:"description"`
	Repository  *Repository    `json:"repository,omitempty"`
	Remotes     []Remote       `json:"remotes,omitempty"`
	Meta        map[string]any `json:"_meta,omitempty"`
}

// Repository is where the server's source is.
type Repository struct {
	Source string `json:"source"`
	URL    string `json:"url"`
}

// Remote is one endpoint of the server.
type Remote struct {
	Type                      string   `json:"type"`
	URL                       string   `json:"url"`
	Headers                   []Header `json:"headers,omitempty"`
	SupportedProtocolVersions []string `json:"supportedProtocolVersions,omitempty"`
}

// Header is a header a client sends to a remote (the schema's KeyValueInput).
type Header struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	IsRequired  bool   `json:"isRequired,omitempty"`
	IsSecret    bool   `json:"isSecret,omitempty"`
}

// Bundles is the _meta entry naming the bundles the node fronts.
type Bundles struct {
	Count int      `json:"count"`
	Names []string `json:"names,omitempty"`
}

// Build makes the card of a node that speaks the protocol revisions versions.
func Build(in Info, versions []string) Card {
	c := Card{
		Schema:      SchemaURL,
		Name:        Name,
		Title:       "toolnode",
		Version:     in.Version,
		Description: describe(in),
		Repository:  &Repository{Source: "github", URL: "https://github.com/toolnode/toolnode"},
	}
	if c.Version == "" {
		c.Version = "dev"
	}
	b := Bundles{Count: len(in.Bundles)}
	if !in.Private {
		b.Names = in.Bundles
	}
	c.Meta = map[string]any{MetaBundles: b}
	if in.URL != "" {
		r := Remote{Type: "streamable-http", URL: in.URL, SupportedProtocolVersions: versions}
		if in.Auth {
			r.Headers = []Header{{Name: "Authorization", Description: "Bearer token the node's operator issues (an access-file token or an OAuth access token).",
				IsRequired: true, IsSecret: true}}
		}
		c.Remotes = []Remote{r}
	}
	return c
}

// describe says in at most maxDescription characters what the node serves.
func describe(in Info) string {
	n := len(in.Bundles)
	switch {
	case n == 0:
		return "MCP tool node: one endpoint for the tools of its bundles (none running now)."
	case in.Private || n > 8:
		return fmt.Sprintf("MCP tool node: one endpoint for the tools of %d bundles.", n)
	}
	s := "MCP tool node: one endpoint for the tools of " + strings.Join(in.Bundles, ", ") + "."
	if utf8.RuneCountInString(s) <= maxDescription {
		return s
	}
	return fmt.Sprintf("MCP tool node: one endpoint for the tools of %d bundles.", n)
}

// Encode writes c as the node serves it: indented, HTML left unescaped, a final newline.
func (c Card) Encode() []byte {
	return encode(c)
}

// encode marshals v, which is only ever the package's own types (it cannot fail).
func encode(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("card: encode %T: %v", v, err))
	}
	return buf.Bytes()
}

// Catalog is an AI Catalog with one entry: the node's card.
type Catalog struct {
	SpecVersion string  `json:"specVersion"`
	Entries     []Entry `json:"entries"`
}

// Entry is an AI Catalog entry pointing at a server card.
type Entry struct {
	Identifier string `json:"identifier"`
	Type       string `json:"type"`
	URL        string `json:"url"`
}

// CatalogOf is the AI Catalog of a host serving the node's endpoint at endpoint (an
// absolute URL): its one entry names the card by URL.
func CatalogOf(endpoint string) Catalog {
	return Catalog{SpecVersion: "1.0", Entries: []Entry{{
		Identifier: "urn:air:" + publisher(endpoint) + ":mcp:toolnode",
		Type:       MediaType,
		URL:        endpoint + Suffix,
	}}}
}

// publisher is the host of endpoint without its port, the publisher of a catalog identifier
// (urn:air:{publisher}:{namespace}:{name}, whose parts a colon separates).
func publisher(endpoint string) string {
	host := endpoint
	if _, rest, ok := strings.Cut(host, "://"); ok {
		host = rest
	}
	host, _, _ = strings.Cut(host, "/")
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	// An IPv6 address's colons would split the identifier.
	return strings.ReplaceAll(strings.Trim(host, "[]"), ":", "-")
}

// etag is the entity tag of a representation: a digest of its bytes.
func etag(body []byte) string {
	sum := sha256.Sum256(body)
	return `"` + hex.EncodeToString(sum[:12]) + `"`
}
