// Package front is the node's MCP server side, shared by its transports: sessions of the
// 2025 revisions, stateless requests of 2026-07-28, the methods both serve, and what
// every request passes on its way to the node (one reading of its params, the caller's
// access filter, the audit log, telemetry). The transports are packages of their own:
// httpfront (Streamable HTTP) and stdiofront (stdio).
//
// docs/architecture.md follows one call through it.
package front

import (
	"sync/atomic"

	"github.com/hashicorp/go-hclog"

	"github.com/toolnode/toolnode/runtime/internal/access"
	"github.com/toolnode/toolnode/runtime/internal/audit"
	"github.com/toolnode/toolnode/runtime/internal/node"
	"github.com/toolnode/toolnode/runtime/internal/rpc"
	"github.com/toolnode/toolnode/runtime/internal/telemetry"
)

// Options configures a Server.
type Options struct {
	// Version is the node's version in serverInfo. Default "dev".
	Version string
	// PageSize is the number of tools per tools/list page; 0 or less lists all at once.
	PageSize int
	// Logger logs sessions. Default: discard.
	Logger hclog.Logger
	// Names says how tool names are shown: NamesCanonical, NamesStrict, or NamesAuto
	// (strict for every client but those known to take dots; see clients.go). Default
	// NamesAuto.
	Names string
	// MaxMessage is the largest message a client may send, in bytes. Default 16 MiB.
	MaxMessage int
	// MaxQueue bounds what the node holds for a client that does not read; past it the
	// client is disconnected. Default rpc.DefaultMaxQueue.
	MaxQueue int
	// MaxInflight bounds the requests of one session being served at once; past it
	// requests are refused. Default DefaultMaxInflight.
	MaxInflight int
	// Limits are the checks every client message passes.
	Limits rpc.Limits
	// View is how tools/list shows the catalog to clients the access file leaves it to:
	// access.ViewFull (every allowed tool; the default), access.ViewSearch (the node's
	// own tools and those matching Pins; the rest are found with toolnode.search) or
	// access.ViewAuto (full within ViewMaxTools and ViewMaxTokens, else the search view
	// with the tools bundles feature, within them; see chooseView).
	View access.View
	// Pins are the tools the search and auto views list besides the node's own.
	Pins []access.Pattern
	// ViewMaxTools and ViewMaxTokens are the budget of the auto view: the most tools, and
	// the most tokens of their definitions (estimated, catalog.EstimateTokens), listed to
	// one client. Defaults DefaultViewMaxTools and DefaultViewMaxTokens.
	ViewMaxTools, ViewMaxTokens int
	// Access, when set, is the access file: the clients and what each may see and call.
	Access *access.Holder
	// Audit, when set, records every tools/call.
	Audit *audit.Log
	// Client is the access file's client the stdio front serves.
	Client string
	// Telemetry records a span and a duration per request, and sessions. Default: none.
	Telemetry telemetry.Recorder
	// StateKey signs the requestStates the node gives out. Replicas of one cluster share it
	// (derived from the cluster key), so that each checks the others'. Default: a random
	// key of the node's own.
	StateKey []byte
	// NodeID names this node in the requestStates it gives out, so that a retry that lands
	// on another replica of its cluster can be taken to it. Default "" (no cluster).
	NodeID string
	// Tasks times and bounds the tasks of the tasks extension (see tasks.go).
	Tasks TaskOptions
}

// DefaultMaxInflight is how many requests one session may have in flight by default: far
// more than an agent runs at once, far fewer than would let one client hold the node.
const DefaultMaxInflight = 256

// DefaultMaxMessage is the largest client message accepted by default.
const DefaultMaxMessage = 16 << 20

// How tool names are shown to clients.
const (
	// NamesCanonical shows names as the catalog has them: seat.verb, bundle.tool.
	NamesCanonical = "canonical"
	// NamesStrict shows them as ^[a-zA-Z0-9_-]{1,64}$ (seat_verb), mapped back on calls.
	NamesStrict = "underscore"
	// NamesAuto is strict for every client but those known to take dotted names
	// (dottedClients: Claude Code, toolnode's own CLI and application libraries).
	NamesAuto = "auto"
)

// Server answers MCP clients from a node. One Server serves any number of sessions and
// stateless requests, over any number of transports.
type Server struct {
	node    *node.Node
	opts    Options
	waiting *waitingCalls             // stateless calls waiting for their client's input
	tasks   *taskStore                // the tasks of the tasks extension
	metas   metaCache                 // the _meta of stateless requests, read once for many
	views   atomic.Pointer[Stateless] // the client of the last stateless request served

	autoViews autoViews // the auto view of the last catalog, for clients without an access entry
}

// NewServer returns a server fronting n.
func NewServer(n *node.Node, opts Options) *Server {
	if opts.Version == "" {
		opts.Version = "dev"
	}
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if opts.MaxMessage <= 0 {
		opts.MaxMessage = DefaultMaxMessage
	}
	if opts.MaxInflight <= 0 {
		opts.MaxInflight = DefaultMaxInflight
	}
	if opts.MaxQueue <= 0 {
		opts.MaxQueue = rpc.DefaultMaxQueue
	}
	s := &Server{node: n, opts: opts, waiting: newWaitingCalls(opts.StateKey, opts.NodeID)}
	if opts.Audit != nil {
		n.SetInnerCalls(s.auditInner)
	}
	s.tasks = newTaskStore(s, opts.Tasks)
	s.opts.Tasks = s.tasks.opts
	n.SetTaskServer(s.serveRoutedTask)
	n.AddBounds(s.tasks.bounds)
	return s
}

// Node is the node the server fronts.
func (s *Server) Node() *node.Node { return s.node }

// Options are the server's options, defaults filled in.
func (s *Server) Options() Options { return s.opts }

// Logger is the server's logger.
func (s *Server) Logger() hclog.Logger { return s.opts.Logger }

// recorder is the front's telemetry, a no-op when none is configured.
func (s *Server) recorder() telemetry.Recorder {
	if s.opts.Telemetry == nil {
		return telemetry.Nop{}
	}
	return s.opts.Telemetry
}
