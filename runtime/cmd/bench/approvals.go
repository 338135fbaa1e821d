package main

import (
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// approvalCost measures one approval's round trip inside the node (a guarded call asking
// for approval, the approver approving it, the call made again let through), with the
// node package's benchmark.
func approvalCost(cfg config, w *strings.Builder) error {
	cmd := exec.Command("go", "test", "./runtime/internal/node", "-run", "^$", "-bench", "^BenchmarkApprovalRoundTrip$", "-benchtime", "20000x")
	cmd.Dir = cfg.root
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("approval benchmark: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`BenchmarkApprovalRoundTrip-\d+\s+\d+\s+(\d+) ns/op`).FindSubmatch(out)
	if m == nil {
		return fmt.Errorf("approval benchmark: no figure in\n%s", out)
	}
	nsop, _ := strconv.Atoi(string(m[1]))
	fmt.Fprintf(w, "## An approval's round trip (`approvals`)\n\n")
	fmt.Fprintf(w, "Inside the node (`go test ./runtime/internal/node -bench ApprovalRoundTrip`): a guarded call asks for\n"+
		"approval (its arguments digested), the approver approves it, the call made again is let through. A client\n"+
		"pays three calls' round trips besides (the call, toolnode.approve, the call again).\n\n")
	fmt.Fprintf(w, "| round trip | time |\n|---|---|\n| request, approve, admit | %s |\n\n", us(time.Duration(nsop)))
	return nil
}
