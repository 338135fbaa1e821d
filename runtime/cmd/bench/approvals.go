package main

import (
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// approvalCost measures an approval's round trip: inside the node (a guarded call asking
// for approval, the approver approving it, the call made again let through), with the
// node package's benchmark, and as two clients over HTTP see it (a waiting call
// approved), with the CLI package's.
func approvalCost(cfg config, w *strings.Builder) error {
	inside, err := goBench(cfg, "./runtime/internal/node", "BenchmarkApprovalRoundTrip", "20000x")
	if err != nil {
		return err
	}
	waiting, err := goBench(cfg, "./runtime/internal/cli", "BenchmarkWaitingApprovalRoundTrip", "300x")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "## An approval's round trip (`approvals`)\n\n")
	fmt.Fprintf(w, "Inside the node (`go test ./runtime/internal/node -bench ApprovalRoundTrip`): a guarded call asks for\n"+
		"approval (its arguments digested), the approver approves it, the call made again is let through.\n"+
		"Over HTTP (`go test ./runtime/internal/cli -bench WaitingApprovalRoundTrip`): a 2026-07-28 client's guarded\n"+
		"call is answered input_required, the client calls again to wait, another client approves it with\n"+
		"toolnode.approve, and the call runs (a fake bundle's echo) and answers; one round trip at a time.\n\n")
	fmt.Fprintf(w, "| round trip | time |\n|---|---|\n| inside the node: request, approve, admit | %s |\n| over HTTP: call, wait, approve, result | %s |\n\n",
		us(inside), ms(waiting))
	return nil
}

// goBench runs one Go benchmark of pkg for benchtime and returns its time per operation.
func goBench(cfg config, pkg, name, benchtime string) (time.Duration, error) {
	cmd := exec.Command("go", "test", pkg, "-run", "^$", "-bench", "^"+name+"$", "-benchtime", benchtime)
	cmd.Dir = cfg.root
	out, err := cmd.CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("%s: %v\n%s", name, err, out)
	}
	m := regexp.MustCompile(name + `-\d+\s+\d+\s+(\d+) ns/op`).FindSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("%s: no figure in\n%s", name, out)
	}
	nsop, _ := strconv.Atoi(string(m[1]))
	return time.Duration(nsop), nil
}
