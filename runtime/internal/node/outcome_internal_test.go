package node

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolnode/toolnode/runtime/internal/rpc"
	"github.com/toolnode/toolnode/runtime/internal/telemetry"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// outcomeDone keeps the Outcome a call gives.
type outcomeDone struct{ o *Outcome }

func (d outcomeDone) CallDone(o Outcome) { *d.o = o }

// The Outcome a call's answer makes: one kind, read once, for every reader on the way back;
// what the node noted; and the answer settled as the call says.
func TestTakeMakesOneOutcomePerAnswer(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	req := &Request{Method: mcp.MethodToolsCall, Name: "b.t"}
	type want struct {
		Kind, ResultType, ErrorType, BundleErrorType string
		Code                                         int64
		Refused, IsError, HasResult, Failed, Exec    bool
	}
	for _, tc := range []struct {
		name    string
		ctx     context.Context
		how     settling
		refused string
		res     string
		err     error
		want    want
	}{
		{name: "result", how: settleTool, res: `{"content":[]}`,
			want: want{Kind: KindOK, HasResult: true}},
		{name: "tool error", how: settleTool, res: `{"content":[],"isError":true}`,
			want: want{Kind: KindToolError, IsError: true, HasResult: true, Failed: true, ErrorType: telemetry.ToolError, BundleErrorType: telemetry.ToolError}},
		{name: "input required", how: settleTool, res: `{"resultType":"input_required","inputRequests":{}}`,
			want: want{Kind: KindOK, ResultType: mcp.ResultTypeInputRequired, HasResult: true}},
		{name: "the bundle's -32602", how: settleTool, err: rpc.Errorf(mcp.CodeInvalidParams, "bad"),
			want: want{Kind: KindInvalidArguments, Code: mcp.CodeInvalidParams, ErrorType: "-32602", BundleErrorType: "-32602"}},
		{name: "a crash, as a tool result", how: settleTool, err: errors.New("the bundle exited"),
			want: want{Kind: KindFailed, IsError: true, HasResult: true, Failed: true, ErrorType: telemetry.ToolError, BundleErrorType: "-32603"}},
		{name: "a timeout, as a tool result", how: settleTool, err: timedOut("too slow"),
			want: want{Kind: KindTimeout, IsError: true, HasResult: true, Failed: true, ErrorType: telemetry.ToolError, BundleErrorType: telemetry.Timeout}},
		{name: "a crash, as it is", how: settleAsIs, err: errors.New("the bundle exited"),
			want: want{Kind: KindFailed, Code: mcp.CodeInternalError, Failed: true, ErrorType: "-32603", BundleErrorType: "-32603"}},
		{name: "a crash, through execute", how: settleExecute, err: notSent(errors.New("not running")),
			want: want{Kind: KindFailed, IsError: true, HasResult: true, Failed: true, Exec: true, ErrorType: telemetry.ToolError, BundleErrorType: "-32603"}},
		{name: "refused", how: settleTool, refused: KindForbidden, err: rpc.Errorf(mcp.CodeInvalidParams, "unknown tool"),
			want: want{Kind: KindForbidden, Refused: true, Code: mcp.CodeInvalidParams, ErrorType: "-32602", BundleErrorType: "-32602"}},
		{name: "cancelled", ctx: cancelled, how: settleTool, err: errors.New("gone"),
			want: want{Kind: KindCancelled, Code: mcp.CodeInternalError, Failed: true, ErrorType: telemetry.Cancelled, BundleErrorType: telemetry.Cancelled}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := tc.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			var o Outcome
			c := newCall(ctx, nil, req, tc.how, outcomeDone{&o})
			c.notes.Bundle, c.notes.Ran = "b", "b.t"
			var res json.RawMessage
			if tc.res != "" {
				res = json.RawMessage(tc.res)
			}
			if tc.refused != "" {
				c.refuse(tc.refused, res, tc.err)
			} else {
				c.settle(res, tc.err)
			}
			got := want{Kind: o.Kind, ResultType: o.ResultType, ErrorType: o.ErrorType(false), BundleErrorType: o.bundleErrorType(),
				Code: o.Code, Refused: o.Refused, IsError: o.IsError, HasResult: o.Result != nil, Failed: o.failed(), Exec: o.exec != nil}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("outcome (-want +got):\n%s", diff)
			}
			if (o.Result == nil) == (o.Err == nil) {
				t.Errorf("result %s and error %v: want one of them", o.Result, o.Err)
			}
			if o.Bundle != "b" || o.Ran != "b.t" {
				t.Errorf("noted bundle %q, ran %q; want b, b.t", o.Bundle, o.Ran)
			}
		})
	}
}
