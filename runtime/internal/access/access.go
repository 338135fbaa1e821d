// Package access holds who may use the node: the clients of an --access file, the bearer
// token each one presents (kept only as its SHA-256), the tools each may see and call, and
// the view each gets.
//
// The file:
//
//	{"clients": [
//	  {"name": "analyst", "token_sha256": "<64 hex digits>", "allow": ["meos.*"],
//	   "deny": ["meos.transform"], "view": "search", "scopes": ["read"]}
//	]}
//
// A tool is allowed to a client when its exposed name matches one of the client's allow
// patterns and none of its deny patterns (see Pattern for the glob rules). The node's
// toolnode.search and toolnode.execute are allowed to every client unless denied: they only
// ever reveal and reach tools the client is allowed anyway. A client without a token can
// only be chosen by name (the stdio front's --client).
package access

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"os"
	"slices"
)

// View is how a client sees the catalog in tools/list.
type View string

const (
	// ViewDefault follows the node's --view.
	ViewDefault View = ""
	// ViewFull lists every allowed tool.
	ViewFull View = "full"
	// ViewSearch lists the node's own tools and the pinned ones; the rest are found with
	// toolnode.search and called by name or with toolnode.execute.
	ViewSearch View = "search"
	// ViewAuto lists every allowed tool when they fit the node's budget (--view-max-tools,
	// --view-max-tokens), else the node's own tools, the pinned ones and those their
	// bundles feature, within the budget; the rest as in ViewSearch.
	ViewAuto View = "auto"
)

// Client is one entry of the access file. A nil *Client stands for "no access file": it
// allows every tool and follows the node's view.
type Client struct {
	// Name identifies the client in logs and the audit log, and to --client.
	Name string
	// Allow and Deny are the patterns as written in the file.
	Allow, Deny []string
	// View is the client's view, ViewDefault when the file does not set one.
	View View
	// Scopes are the client's scopes as written; the node gives them no meaning of its own
	// and passes them on to whatever checks them.
	Scopes []string

	tokenHash   [sha256.Size]byte
	hasToken    bool
	allow, deny []Pattern
}

// Allowed reports whether the client may see and call the tool with the exposed name.
func (c *Client) Allowed(name string) bool {
	if c == nil {
		return true
	}
	for _, p := range c.deny {
		if p.Match(name) {
			return false
		}
	}
	switch name {
	case "toolnode.search", "toolnode.execute":
		return true // they only reveal and reach what the client may reach anyway
	case "toolnode.approvals", "toolnode.approve":
		return true // they only reveal and decide the calls the client may decide
	}
	for _, p := range c.allow {
		if p.Match(name) {
			return true
		}
	}
	return false
}

// ViewOr returns the client's view, or def when the client leaves it to the node.
func (c *Client) ViewOr(def View) View {
	if c == nil || c.View == ViewDefault {
		return def
	}
	return c.View
}

// HasScope reports whether the client holds scope. A nil client holds none.
func (c *Client) HasScope(scope string) bool {
	return c != nil && slices.Contains(c.Scopes, scope)
}

// HasToken reports whether the client can authenticate over HTTP.
func (c *Client) HasToken() bool { return c != nil && c.hasToken }

// Policy is a parsed access file. It never changes; a reload makes a new one.
type Policy struct {
	clients   []*Client
	byName    map[string]*Client
	approvals []*Approval
	version   string
}

// Authenticate returns the client whose token is token. Every client's hash is compared,
// in constant time, whatever matches, so the time taken says nothing about the tokens.
func (p *Policy) Authenticate(token string) (*Client, bool) {
	sum := sha256.Sum256([]byte(token))
	var found *Client
	for _, c := range p.clients {
		eq := subtle.ConstantTimeCompare(sum[:], c.tokenHash[:]) & boolInt(c.hasToken)
		if eq == 1 {
			found = c
		}
	}
	return found, found != nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Client returns the client named name.
func (p *Policy) Client(name string) (*Client, bool) {
	c, ok := p.byName[name]
	return c, ok
}

// Clients returns every client in file order. The slice must not be modified.
func (p *Policy) Clients() []*Client { return p.clients }

// Load reads and parses the access file at path.
func Load(path string) (*Policy, error) {
	_, p, err := readFile(path)
	return p, err
}

// readFile returns the file's bytes (nil when it cannot be read) and its policy.
func readFile(path string) ([]byte, *Policy, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("read access file: %w", err)
	}
	p, err := Parse(data)
	if err != nil {
		return data, nil, fmt.Errorf("access file %s: %w", path, err)
	}
	return data, p, nil
}

// TokenHash returns what token_sha256 holds for token: its SHA-256 in lower-case hex, as
// `printf %s "$TOKEN" | sha256sum` prints it.
func TokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}
