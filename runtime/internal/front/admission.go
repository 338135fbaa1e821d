package front

import (
	"encoding/json"

	"github.com/toolnode/toolnode/runtime/internal/node"
	"github.com/toolnode/toolnode/runtime/internal/oauth"
	"github.com/toolnode/toolnode/runtime/internal/rpc"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// Admission: every transport frames its messages its own way (lines on stdio, POST bodies
// and event streams over HTTP), then hands each client request to Admit, which reads its
// params once, tells its era, and checks it as that era requires. What comes out is the
// same for every transport and both eras: the request as read and whom it is served for,
// or the error to answer. Nothing below Admit reads params or _meta again, or asks which
// transport a request came by.
//
// The checks, in order (the first that fails is the answer):
//
//  1. a method the 2026-07-28 revision removed, asked without a session: -32601, whatever
//     its params, so that a client library that still sends logging/setLevel learns
//     plainly that the method is gone;
//  2. params that cannot be read: -32602, in both eras (a refused tools/call is audited);
//  3. for a stateless request, the transport's own check (HTTP: the headers mirroring its
//     body), then its _meta: -32602 without the members every request carries, -32022
//     for a revision the node does not serve.

// Inbound is a client request as its transport framed it, with what the transport knows
// beside it.
type Inbound struct {
	// Method and Params are the request's, as rpc.Parse read them.
	Method string
	Params json.RawMessage
	// Token is the caller's verified OAuth access token; nil for none.
	Token *oauth.Token
	// Version is the revision the transport names beside the message: HTTP's
	// Mcp-Protocol-Version header; "" for none. A stateless revision there makes the
	// request stateless whatever its _meta says.
	Version string
	// SessionOnly admits the request to its session whatever its _meta says: an element of
	// a JSON-RPC batch, which only the 2025-03-26 revision has.
	SessionOnly bool
	// Check is the transport's own check of a stateless request; nil for none.
	Check StatelessCheck
	// Out is where the messages of a stateless request go, and Info what the transport
	// knows of its client (Info.Identity is the client of every request, for the audit).
	Out  node.Client
	Info SessionInfo
}

// StatelessCheck is a transport's own check of a stateless request, run once its method is
// known to be in the revision and before its _meta is read: HTTP checks that the headers
// mirroring the body say what the body says. version is the revision the request's _meta
// names, as it is written; nil when it names none.
type StatelessCheck interface {
	CheckStateless(req *node.Request, version json.RawMessage) *rpc.Error
}

// Admitted is a request Admit let in: its params read once, and the client it is served
// for.
type Admitted struct {
	// Req is the request as read, for Call.Serve.
	Req *node.Request
	// Client is the client of a stateless request, for which its call is begun
	// (Stateless.Begin) or served (Call.As); nil for a request of a session.
	Client *Stateless
}

// Listens reports whether the request is a stateless client's subscriptions/listen, which
// its transport serves as a stream of its own (Server.Listen).
func (a Admitted) Listens() bool {
	return a.Client != nil && a.Req.Method == mcp.MethodSubscriptionsListen
}

// Refusal is why Admit turned a request away.
type Refusal struct {
	// Err is the error its client is answered.
	Err *rpc.Error
	// Stateless reports that the 2026-07-28 revision's own checks refused it (a method it
	// removed, the transport's check, its _meta), which HTTP answers with a status of
	// 4xx; false when its params could not be read, which both eras answer alike.
	Stateless bool
}

// Admit reads and checks a client request once, for every transport and both eras (see
// the checks above): a request is stateless when its _meta, or the transport beside it,
// names a stateless revision; any other belongs to the session it came in.
func (s *Server) Admit(in *Inbound) (Admitted, *Refusal) {
	req, rerr := node.ReadRequest(in.Method, in.Params)
	req.Token = in.Token
	version := s.statelessVersion(req.Meta)
	stateless := !in.SessionOnly && (version != nil || mcp.IsStatelessVersion(in.Version))
	if stateless && removedIn2026(in.Method) {
		return Admitted{}, &Refusal{Stateless: true,
			Err: rpc.Errorf(mcp.CodeMethodNotFound, "method %q not found: protocol version %s has no %s", in.Method, mcp.Version20260728, in.Method)}
	}
	if rerr != nil {
		s.refuse(req, in.Info.Identity, rerr)
		return Admitted{}, &Refusal{Err: rerr}
	}
	if !stateless {
		return Admitted{Req: req}, nil
	}
	if in.Check != nil {
		if err := in.Check.CheckStateless(req, version); err != nil {
			return Admitted{}, &Refusal{Err: err, Stateless: true}
		}
	}
	meta, err := s.readMeta(req.Meta)
	if err != nil {
		return Admitted{}, &Refusal{Err: err, Stateless: true}
	}
	return Admitted{Req: req, Client: s.stateless(in.Out, meta, in.Info)}, nil
}
