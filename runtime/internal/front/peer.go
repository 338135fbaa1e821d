package front

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/toolnode/toolnode/runtime/internal/node"
	"github.com/toolnode/toolnode/sdk-go/mcp"
	"github.com/toolnode/toolnode/sdk-go/rawjson"
)

// A request is served for its client: a Session of a 2025 revision, or the client of one
// stateless request of 2026-07-28 (a Stateless). Both say what the methods need to know of
// the client, take what concerns its calls, and serve its requests in their revision's
// terms: below this interface, nothing asks which of the two a client is.
type peer interface {
	base() *client
	// caller is who the client is, as the node reads it, for a call of it. It is shared,
	// never changed: a call keeps it rather than a copy (see Call).
	caller() *node.Caller
	// notify sends the client a message about its call c (progress, a log message at the
	// level the client wants), on c's way back.
	notify(c *Call, method string, params any)
	// ask sends the client a request about its call c (sampling, elicitation, roots), on
	// c's way back, when it can take one, and waits for its answer until ctx ends.
	ask(ctx context.Context, c *Call, method string, params json.RawMessage) (json.RawMessage, error)
	// serve serves c, a request of the client, and ends it.
	serve(c *Call)
	// answer is o, the Outcome of a request of method, with its answer in the client's
	// revision's terms.
	answer(method string, o node.Outcome) node.Outcome
	// asksInline reports whether what a bundle of the 2026-07-28 revision asks reaches the
	// client as requests of its own (a session's client), rather than in the input_required
	// answer itself (a stateless client).
	asksInline() bool
	// protocol is the revision the client speaks: negotiated in initialize, or named by
	// the request's _meta.
	protocol() string
	// strictNames reports whether tool names are rendered for a client that refuses dots.
	strictNames() bool
	// listsWhole reports whether tools/list answers the client in one page (see clients.go).
	listsWhole() bool
	// selectsTools reports whether the client picks the tools it gives a model itself (see
	// clients.go): the auto view lists it every tool.
	selectsTools() bool
	// capable reports whether the client declared the capability need.
	capable(need string) bool
}

// client is what every peer holds: the server, where its messages go, and who it is.
type client struct {
	srv       *Server
	out       node.Client // the transport: where the client's messages go
	id        Identity
	sessionID string // for telemetry: the HTTP session id, or "stdio"; "" for none
	transport string // for telemetry: "tcp" or "pipe"
}

func (c *client) base() *client { return c }

// capabilityIn reports whether a capabilities object declares need.
func capabilityIn(caps json.RawMessage, need string) bool {
	_, has := rawjson.Member(caps, need)
	return has
}

// canonicalName maps a tool name in its strict form back to the catalog's, for every
// client: a client shown canonical names may still call by the strict form (it mapped the
// names itself, or was shown them before), and one shown strict names by the canonical
// form. No strict form is another tool's canonical name (the rule hashes both then).
func canonicalName(p peer, name string) string {
	if strings.IndexByte(name, '.') >= 0 { // no strict form has a dot: spare the map
		return name
	}
	if canonical, ok := p.base().srv.node.Catalog().Strict().Canonical(name); ok {
		return canonical
	}
	return name
}

// capabilityFor names the client capability a server-to-client request needs.
func capabilityFor(method string) string {
	switch method {
	case mcp.MethodSampling:
		return "sampling"
	case mcp.MethodElicitation:
		return "elicitation"
	case mcp.MethodRootsList:
		return "roots"
	}
	return ""
}

// waitReady holds requests that need the merged catalog until the first start of the
// bundles is over, so that a client never sees a list missing bundles still starting.
func (s *Server) waitReady(ctx context.Context) error {
	select {
	case <-s.node.Ready():
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
