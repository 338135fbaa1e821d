package node_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/node"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// guardedCaller calls tools of n as the caller desk, whose calls of the tools guarded names
// need the approval of ops; approve approves a request as ops.
type guardedCaller struct {
	n       *node.Node
	s       *testkit.Session
	desk    *node.Guard
	ops     *node.Guard
	mu      sync.Mutex
	pending []string // the ids of requests for approval, as told
}

func newGuardedCaller(t *testing.T, n *node.Node, guarded ...string) *guardedCaller {
	t.Helper()
	g := &guardedCaller{n: n, s: &testkit.Session{}}
	rule := func(tool string) ([]string, time.Duration, bool) {
		for _, name := range guarded {
			if tool == name {
				return []string{"ops"}, time.Minute, true
			}
		}
		return nil, 0, false
	}
	g.desk = &node.Guard{Caller: "desk", Version: "v1", Rule: rule}
	g.ops = &node.Guard{Caller: "ops", Version: "v1", Rule: rule, Approves: func([]string) bool { return true }}
	n.SetApprovals(true, func(ev node.ApprovalEvent) {
		if ev.What == node.ApprovalRequested {
			g.mu.Lock()
			g.pending = append(g.pending, ev.ID)
			g.mu.Unlock()
		}
	})
	return g
}

// call calls tool with args as guard's caller and returns the result's text.
func (g *guardedCaller) call(t *testing.T, guard *node.Guard, tool, args string) string {
	t.Helper()
	req, rerr := node.ReadRequest(mcp.MethodToolsCall, json.RawMessage(`{"name":"`+tool+`","arguments":`+args+`}`))
	if rerr != nil {
		t.Fatal(rerr)
	}
	req.Guard = guard
	res, err := node.Await(node.Detached(g.s, node.Caller{}, nil), func(x node.Exchange) {
		g.n.CallTool(context.Background(), x, req)
	}).Answer()
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return string(res)
}

// approveLast approves the last request for approval told.
func (g *guardedCaller) approveLast(t *testing.T) {
	t.Helper()
	g.mu.Lock()
	if len(g.pending) == 0 {
		g.mu.Unlock()
		t.Fatal("no request for approval was told")
	}
	id := g.pending[len(g.pending)-1]
	g.mu.Unlock()
	if res := g.call(t, g.ops, node.ApproveToolName, `{"id":"`+id+`","approve":true}`); !strings.Contains(res, "approved") {
		t.Fatalf("approving %s: %s", id, res)
	}
}

// A tool of the node's own, called through toolnode.execute, needs the approval its rule
// asks for, as when it is called directly: execute is no way round a rule.
func TestExecuteOfAGuardedOwnToolNeedsItsApproval(t *testing.T) {
	t.Parallel()
	n, _ := startMemory(t, node.Config{}, testkit.Memory{Name: "a"})
	g := newGuardedCaller(t, n, node.StatusToolName)
	args := `{"name":"` + node.StatusToolName + `"}`
	if res := g.call(t, g.desk, node.ExecuteToolName, args); !strings.Contains(res, node.KindNeedsApproval) {
		t.Fatalf("toolnode.status through toolnode.execute ran without its approval: %.300s", res)
	}
	g.approveLast(t)
	if res := g.call(t, g.desk, node.ExecuteToolName, args); !strings.Contains(res, `"bundles"`) {
		t.Errorf("the approved call did not run: %.300s", res)
	}
}

// A guarded call in a program asks for approval once: the program run again after the
// approval makes the call.
func TestAnApprovedCallInAProgramRuns(t *testing.T) {
	t.Parallel()
	n, _ := startMemory(t, node.Config{}, testkit.Memory{Name: "a"})
	g := newGuardedCaller(t, n, "a.echo")
	args := `{"code":"a.echo(text=\"pay\")"}`
	if res := g.call(t, g.desk, node.RunToolName, args); !strings.Contains(res, node.KindNeedsApproval) {
		t.Fatalf("the guarded call ran without its approval: %.300s", res)
	}
	g.approveLast(t)
	if res := g.call(t, g.desk, node.RunToolName, args); !strings.Contains(res, `a:pay`) {
		t.Errorf("the approved call did not run: %.300s", res)
	}
}
