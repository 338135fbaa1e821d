package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/sandbox"
)

// benchSandbox is the sandbox the section gives echo-go: every setting, files confined.
const benchSandbox = `{"memory": "256MiB", "cpu": 2, "pids": 64, "files": 256, "network": "none", "read": []}`

// sandboxSection measures what a sandbox costs a bundle: the start of 1 and 10 echo-go
// bundles with and without one, and the echo call through a node over stdio with and
// without, the configurations taking turns.
func sandboxSection(cfg config, w *strings.Builder) error {
	_, bin, err := benchBundle(cfg, "echo-go")
	if err != nil {
		return err
	}
	var p sandbox.Policy
	if err := json.Unmarshal([]byte(benchSandbox), &p); err != nil {
		return err
	}
	var box, boxNoCPU map[string]any
	if err := json.Unmarshal([]byte(`{"sandbox": `+benchSandbox+`}`), &box); err != nil {
		return err
	}
	if err := json.Unmarshal([]byte(`{"sandbox": `+strings.Replace(benchSandbox, `"cpu": 2, `, "", 1)+`}`), &boxNoCPU); err != nil {
		return err
	}
	fmt.Fprintf(w, "## A bundle in a sandbox against none (`echo-go`)\n\n")
	fmt.Fprintf(w, "The sandbox: `%s`, enforced here as %s. Start-up is from `toolnode serve` to the\n"+
		"merged tools/list, medians of %d starts.\n\n", benchSandbox, sandbox.Probe().Describe(p), startRuns)
	fmt.Fprintf(w, "| echo-go bundles | no sandbox | sandbox | sandbox vs none |\n|---|---|---|---|\n")
	for _, n := range []int{1, 10} {
		plain, err := bundleFarm(n, "echo", []string{bin}, nil)
		if err != nil {
			return err
		}
		defer os.RemoveAll(plain)
		boxed, err := bundleFarm(n, "echo", []string{bin}, box)
		if err != nil {
			return err
		}
		defer os.RemoveAll(boxed)
		var none, sandboxed []time.Duration
		for range startRuns {
			for _, c := range []struct {
				dir string
				out *[]time.Duration
			}{{plain, &none}, {boxed, &sandboxed}} {
				d, err := timedStart(echoTools(n), cfg.node, "serve", "--bundles", c.dir, "--log-level", "warn")
				if err != nil {
					return err
				}
				*c.out = append(*c.out, d)
			}
		}
		fmt.Fprintf(w, "| %d | %s | %s | %.2f× |\n", n, ms(median(none)), ms(median(sandboxed)), float64(median(sandboxed))/float64(median(none)))
	}
	fmt.Fprintf(w, "\n| front | sandbox | in flight | calls/s | vs none | p50 | p99 |\n|---|---|---|---|---|---|---|\n")
	plain, err := bundleFarm(1, "echo", []string{bin}, nil)
	if err != nil {
		return err
	}
	defer os.RemoveAll(plain)
	boxed, err := bundleFarm(1, "echo", []string{bin}, box)
	if err != nil {
		return err
	}
	defer os.RemoveAll(boxed)
	noCPU, err := bundleFarm(1, "echo", []string{bin}, boxNoCPU)
	if err != nil {
		return err
	}
	defer os.RemoveAll(noCPU)
	const tool = "echo-00.echo"
	off, err := startStdio(tool, cfg.node, "serve", "--bundles", plain, "--log-level", "warn")
	if err != nil {
		return err
	}
	defer off.close()
	on, err := startStdio(tool, cfg.node, "serve", "--bundles", boxed, "--log-level", "warn")
	if err != nil {
		return err
	}
	defer on.close()
	onNoCPU, err := startStdio(tool, cfg.node, "serve", "--bundles", noCPU, "--log-level", "warn")
	if err != nil {
		return err
	}
	defer onNoCPU.close()
	res, err := compareRoutes(cfg, w, "stdio", `{"text":"bench"}`, []int{1, 8},
		[]route{{name: "none", c: off}, {name: "sandbox", c: on}, {name: "sandbox without cpu", c: onNoCPU}}, -1)
	if err != nil {
		return err
	}
	verdict, worst, slowest := "met", 1.0, 1.0
	for _, r := range res {
		worst = min(worst, r[1].perSec/r[0].perSec, r[2].perSec/r[0].perSec)
		slowest = max(slowest, float64(r[1].p50)/float64(r[0].p50), float64(r[2].p50)/float64(r[0].p50))
	}
	if worst < 0.95 {
		verdict = "missed"
	}
	fmt.Fprintf(w, "\nThe sandbox costs a start the shim (the node's binary, exec'd before the bundle) and the\n"+
		"cgroups' set-up. A call passes no code of the node's that differs; what differs is the kernel's:\n"+
		"the bundle's own cgroups (a cpu cgroup of its own is a scheduling group of its own, with its\n"+
		"CFS quota), its memory accounting, its network namespace. Target: calls/s within 5%% of none:\n"+
		"%s (worst %.2f×; the median latency at most %.2f× none's). Where the machine is shared and loaded\n"+
		"(see the load average), rounds of the same route differ by more than 5%%: read both ratios.\n\n", verdict, worst, slowest)
	return nil
}
