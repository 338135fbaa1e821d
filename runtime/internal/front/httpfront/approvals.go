package httpfront

import (
	"encoding/json"
	"html/template"
	"net/http"
	"strings"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/front"
	"github.com/toolnode/toolnode/runtime/internal/node"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// ApprovalsPath is where the HTTP front serves its approvals page: the calls waiting for
// the approval of the caller (GET; as JSON to a client that accepts only
// application/json), and their decision (POST, a form of id, decision "approve" or
// "refuse", and reason). It is behind the guard of every request: Host, Origin and the
// caller's credentials, which name the approver, as toolnode.approvals and
// toolnode.approve do.
const ApprovalsPath = "/approvals"

// maxDecision bounds the body of a decision.
const maxDecision = 16 << 10

// approvalsPage is the page; html/template escapes every value for where it goes (text,
// attribute), so that nothing a caller put in its arguments can become markup or script.
var approvalsPage = template.Must(template.New("approvals").Funcs(template.FuncMap{
	"time": func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"args": func(raw json.RawMessage) string { return string(raw) },
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Calls waiting for approval</title>
<style>body{font-family:sans-serif;margin:2em}pre{background:#f4f4f4;padding:.5em;white-space:pre-wrap;word-break:break-all}
form{display:inline}.said{border:1px solid #999;padding:.5em}</style></head>
<body><h1>Calls waiting for your approval</h1>
{{if .Said}}<p class="said">{{.Said}}</p>{{end}}
{{range .Pending}}<section><h2>{{.Tool}}</h2>
<p>Request <code>{{.ID}}</code>: <b>{{.Caller}}</b> calls <b>{{.Tool}}</b>, until {{time .Expires}}.</p>
<pre>{{args .Arguments}}</pre>
<p>Arguments digest <code>{{.Digest}}</code>, access file version <code>{{.Version}}</code>.</p>
<form method="post"><input type="hidden" name="id" value="{{.ID}}"><input type="hidden" name="decision" value="approve"><button>Approve</button></form>
<form method="post"><input type="hidden" name="id" value="{{.ID}}"><input type="hidden" name="decision" value="refuse"><input name="reason" placeholder="reason" maxlength="1000"><button>Refuse</button></form>
</section>{{else}}<p>No call waits for your approval.</p>{{end}}
</body></html>
`))

// approvals serves the approvals page for the caller id.
func (h *Handler) approvals(w http.ResponseWriter, r *http.Request, id front.Identity) {
	said := ""
	switch r.Method {
	case http.MethodGet:
	case http.MethodPost:
		r.Body = http.MaxBytesReader(w, r.Body, maxDecision)
		if err := r.ParseForm(); err != nil {
			httpError(w, http.StatusBadRequest, mcp.CodeInvalidRequest, "a decision is a form: id, decision (approve or refuse), reason")
			return
		}
		decision := r.PostForm.Get("decision")
		if decision != "approve" && decision != "refuse" || r.PostForm.Get("id") == "" {
			httpError(w, http.StatusBadRequest, mcp.CodeInvalidRequest, "a decision is a form: id, decision (approve or refuse), reason")
			return
		}
		var err error
		if said, err = h.srv.Decide(id, r.PostForm.Get("id"), decision == "approve", r.PostForm.Get("reason")); err != nil {
			said = err.Error()
		}
	default:
		w.Header().Set("Allow", "GET, POST")
		httpError(w, http.StatusMethodNotAllowed, mcp.CodeInvalidRequest, "use GET to list the calls waiting for approval, POST to decide one")
		return
	}
	pending := h.srv.Pending(id)
	hd := w.Header()
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Content-Type-Options", "nosniff")
	if accepts := r.Header.Get("Accept"); strings.Contains(accepts, "application/json") && !strings.Contains(accepts, "text/html") {
		hd.Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(struct {
			Said     string                 `json:"said,omitempty"`
			Requests []node.PendingApproval `json:"requests"`
		}{said, pending})
		return
	}
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	hd.Set("X-Frame-Options", "DENY")
	_ = approvalsPage.Execute(w, struct {
		Said    string
		Pending []node.PendingApproval
	}{said, pending})
}
