package httpfront

import (
	"fmt"
	"net/http"
	"sync"

	"github.com/toolnode/toolnode/runtime/internal/front"
	"github.com/toolnode/toolnode/runtime/internal/rpc"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// batch serves a JSON-RPC batch, which only revision 2025-03-26 has.
func (h *Handler) batch(w http.ResponseWriter, r *http.Request, id front.Identity, body []byte) {
	elems, perr := rpc.SplitBatch(body, h.srv.Options().Limits)
	if perr != nil {
		writeMessage(w, http.StatusBadRequest, nil, rpc.Failure(rpc.ID{}, perr))
		return
	}
	hs := h.session(w, r, id)
	if hs == nil {
		return
	}
	if v := hs.sess.Version(); !mcp.AllowsBatches(v) {
		httpError(w, http.StatusBadRequest, mcp.CodeInvalidRequest,
			fmt.Sprintf("JSON-RPC batches are not part of protocol version %s (only of %s)", v, mcp.Version20250326))
		return
	}
	if len(elems) == 0 {
		httpError(w, http.StatusBadRequest, mcp.CodeInvalidRequest, "empty batch")
		return
	}
	if limit := h.srv.Options().MaxInflight; len(elems) > limit {
		httpError(w, http.StatusBadRequest, mcp.CodeInvalidRequest,
			fmt.Sprintf("a batch of %d messages is over the limit of %d", len(elems), limit))
		return
	}
	var wg sync.WaitGroup
	answers := make([]*rpc.Message, len(elems))
	for i, raw := range elems {
		m, perr := rpc.Parse(raw, h.srv.Options().Limits)
		switch {
		case perr != nil:
			answers[i] = rpc.Failure(m.ID, perr)
		case m.IsNotification():
			hs.sess.HandleNotification(m.Method, m.Params)
		case m.IsResponse():
			hs.deliver(&m)
		case m.Method != mcp.MethodInitialize:
			token, _ := h.token(r)
			a, refused := h.srv.Admit(&front.Inbound{Method: m.Method, Params: m.Params, Token: token, SessionOnly: true,
				Info: front.SessionInfo{Identity: id, Transport: "tcp"}})
			if refused != nil {
				answers[i] = rpc.Failure(m.ID, refused.Err)
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				if resp, ok := hs.serve(&m, a.Req); ok {
					answers[i] = resp
				}
			}()
		default:
			answers[i] = rpc.Failure(m.ID, rpc.Errorf(mcp.CodeInvalidRequest, "initialize cannot be part of a batch"))
		}
	}
	wg.Wait()
	out := []byte{'['}
	for _, a := range answers {
		if a != nil {
			if len(out) > 1 {
				out = append(out, ',')
			}
			out = a.Append(out)
		}
	}
	if len(out) == 1 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	writeJSON(w, http.StatusOK, hs.idHeader, append(out, ']'))
}
