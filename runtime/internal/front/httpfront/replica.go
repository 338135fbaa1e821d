package httpfront

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/toolnode/toolnode/runtime/internal/front"
	"github.com/toolnode/toolnode/runtime/internal/rpc"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// Replicas behind a balancer: the sessions a replica opens are named after it
// (<node>.<random>), and a call waiting for its client's input names its node in its
// requestState. A replica that gets a request for another's session or waiting call
// forwards it there whole (Replicas.Forward), with the client as this replica
// authenticated it, and streams back the answer; the other serves it with ServeForwarded,
// its session checking the client as for a request of its own. What the request needs
// crosses the cluster, not a second HTTP hop through the balancer.

// Replicas is the cluster a front serves in as one of several replicas.
type Replicas interface {
	// Self is this node's id in the cluster.
	Self() string
	// Forward serves r (its body read into body) at node owner as if its client id had
	// sent it there, writing owner's answer to w as it comes. Its error wraps
	// ErrUnknownReplica when owner is not a live member of the cluster.
	Forward(ctx context.Context, owner string, r *http.Request, body []byte, id front.Identity, w http.ResponseWriter) error
}

// ErrUnknownReplica is wrapped by Replicas.Forward's error for a node that is not a live
// member of the cluster: what it held is gone with it.
var ErrUnknownReplica = errors.New("no such replica in the cluster")

// ServeForwarded serves a request another replica forwarded here, from the client id as
// that replica authenticated it: here or not at all, never forwarded again.
func (h *Handler) ServeForwarded(w http.ResponseWriter, r *http.Request, id front.Identity) {
	h.route(w, r, id, true)
}

// replicaOf names the replica r must go to by its session id; "" when this replica serves
// it (always, for a request forwarded here).
func (h *Handler) replicaOf(forwarded bool, r *http.Request) string {
	if h.opts.Replicas == nil || forwarded {
		return ""
	}
	owner, _, found := strings.Cut(r.Header.Get(HeaderSessionID), ".")
	if !found || owner == h.opts.Replicas.Self() {
		return ""
	}
	return owner
}

// stateReplica names the replica holding the call a retry's requestState continues; ""
// when it is this one, or the state is none of a replica's (always, for a request
// forwarded here).
func (h *Handler) stateReplica(forwarded bool, state string) string {
	if h.opts.Replicas == nil || forwarded || state == "" {
		return ""
	}
	return h.srv.StateNode(state)
}

// newSessionID names a new session after this replica, when it is one.
func (h *Handler) newSessionID() (string, error) {
	id, err := newSessionID()
	if err != nil || h.opts.Replicas == nil {
		return id, err
	}
	return h.opts.Replicas.Self() + "." + id, nil
}

// forward carries a request to the replica owner and writes its answer. body is the
// request's body, read already (nil to read it here). A replica that is gone answers as
// for a session that is gone; one that fails once the answer has begun leaves it as it is.
func (h *Handler) forward(w http.ResponseWriter, r *http.Request, id front.Identity, owner string, body []byte) {
	if body == nil && r.Method == http.MethodPost {
		var err error
		if body, err = readBody(w, r, h.opts.MaxBody); err != nil {
			httpError(w, http.StatusRequestEntityTooLarge, mcp.CodeInvalidRequest, fmt.Sprintf("request body: %v", err))
			return
		}
	}
	tw := &trackedWriter{ResponseWriter: w}
	err := h.opts.Replicas.Forward(r.Context(), owner, r, body, id, tw)
	switch {
	case err == nil, tw.wrote:
		if err != nil {
			h.srv.Logger().Warn("a forwarded answer ended early", "replica", owner, "error", err)
		}
	case errors.Is(err, ErrUnknownReplica) && r.Header.Get(HeaderSessionID) != "":
		httpError(w, http.StatusNotFound, mcp.CodeInvalidRequest,
			fmt.Sprintf("session not found: replica %q, which held it, is gone: initialize a new one", owner))
	default:
		msg, _ := rpc.Parse(body, h.srv.Options().Limits)
		fail := rpc.Errorf(mcp.CodeInternalError, "replica %q, which serves this request, could not: %v", owner, err)
		if errors.Is(err, ErrUnknownReplica) {
			fail = rpc.Errorf(mcp.CodeInvalidParams, "invalid params: replica %q, which held the call this requestState continues, is gone; call again without it", owner)
		}
		writeMessage(w, http.StatusOK, nil, rpc.Failure(msg.ID, fail))
	}
}

// trackedWriter notes whether anything of an answer was written.
type trackedWriter struct {
	http.ResponseWriter
	wrote bool
}

func (t *trackedWriter) WriteHeader(status int) {
	t.wrote = true
	t.ResponseWriter.WriteHeader(status)
}

func (t *trackedWriter) Write(b []byte) (int, error) {
	t.wrote = true
	return t.ResponseWriter.Write(b)
}

// Unwrap gives http.ResponseController the writer beneath, for flushes.
func (t *trackedWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }
