package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// clusterHop compares the Go echo bundle called through the node that runs it with the same
// call made to another node of a NATS cluster, which routes it over NATS to the first: what
// one hop across the cluster costs.
func clusterHop(cfg config, w *strings.Builder) error {
	fmt.Fprintf(w, "## A call across a cluster (`--cluster`)\n\n")
	url, bin, stopNATS, err := startNATS()
	if err != nil {
		fmt.Fprintf(w, "Not measured: %v.\n\n", err)
		return nil
	}
	defer stopNATS()

	dir, _, err := benchFolder(cfg, "echo-go")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	empty, err := os.MkdirTemp("", "toolnode-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(empty)
	const tool = "echo-go.echo"
	serving, err := startStdio(tool, cfg.node, "serve", "--bundles", dir, "--cluster", url, "--cluster-node", "bench-b", "--log-level", "warn")
	if err != nil {
		return err
	}
	defer serving.close()
	fronting, err := startStdio(tool, cfg.node, "serve", "--bundles", empty, "--cluster", url, "--cluster-node", "bench-a", "--log-level", "warn")
	if err != nil {
		return err
	}
	defer fronting.close()
	// The same pair again in a cluster of its own whose messages are signed.
	key := filepath.Join(empty, "cluster.key")
	if err := os.WriteFile(key, []byte("bench key, 32 bytes or more, for the signed pair\n"), 0o600); err != nil {
		return err
	}
	signed := []string{"--cluster", url, "--cluster-name", "bench-signed", "--cluster-key", key, "--log-level", "warn"}
	signedServing, err := startStdio(tool, cfg.node, append([]string{"serve", "--bundles", dir, "--cluster-node", "bench-c"}, signed...)...)
	if err != nil {
		return err
	}
	defer signedServing.close()
	signedFronting, err := startStdio(tool, cfg.node, append([]string{"serve", "--bundles", empty, "--cluster-node", "bench-d"}, signed...)...)
	if err != nil {
		return err
	}
	defer signedFronting.close()
	args := `{"text":"bench"}`
	// A fronting node lists the bundle once it has heard the serving node announce it.
	for _, c := range []*stdioClient{fronting, signedFronting} {
		for deadline := time.Now().Add(20 * time.Second); c.call(args) != nil; {
			if time.Now().After(deadline) {
				return fmt.Errorf("a fronting node never routed %s to its serving node", tool)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	fmt.Fprintf(w, "Two nodes on one nats-server (%s), over stdio with a 2025-11-25 client each; the bundle runs\n"+
		"on node B only; nodes C and D are the same pair with `--cluster-key`.\n\n", strings.TrimSpace(natsVersion(bin)))
	fmt.Fprintf(w, "| bundle | path | in flight | calls/s | vs local | p50 | p99 |\n|---|---|---|---|---|---|---|\n")
	routes := []route{
		{name: "node B, its own bundle", c: serving},
		{name: "node A → NATS → node B", c: fronting},
		{name: "node D → NATS → node C, signed", c: signedFronting},
	}
	res, err := compareRoutes(cfg, w, "echo-go", args, []int{1, 8}, routes, -1)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\nThe hop adds %s at the median with one call in flight: the call and its answer each go\n"+
		"through the nats-server and through both nodes' routing. Signing and checking each message\n"+
		"with the cluster key adds %s more.\n\n",
		us(res[0][1].p50-res[0][0].p50), us(res[0][2].p50-res[0][1].p50))
	return nil
}

// startNATS runs a nats-server on a free loopback port and returns its URL, its binary and
// how to stop it.
func startNATS() (url, bin string, stop func(), err error) {
	if bin, err = exec.LookPath("nats-server"); err != nil {
		bin = "/usr/sbin/nats-server" // Debian's, off a user's PATH
		if _, err := os.Stat(bin); err != nil {
			return "", "", nil, errors.New("nats-server is not installed (make deps installs Debian's)")
		}
	}
	addr, err := freeAddr()
	if err != nil {
		return "", "", nil, err
	}
	_, port, _ := net.SplitHostPort(addr)
	server := exec.Command(bin, "-a", "127.0.0.1", "-p", port)
	if err := server.Start(); err != nil {
		return "", "", nil, fmt.Errorf("nats-server: %w", err)
	}
	return "nats://" + addr, bin, func() { server.Process.Kill(); server.Wait() }, nil
}

func natsVersion(bin string) string {
	out, _ := exec.Command(bin, "--version").Output()
	return string(out)
}
