package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"time"
)

// clusterHop compares the Go echo bundle called through the node that runs it with the same
// call made to another node of a NATS cluster, which routes it over NATS to the first: what
// one hop across the cluster costs.
func clusterHop(cfg config, w *strings.Builder) error {
	fmt.Fprintf(w, "## A call across a cluster (`--cluster`)\n\n")
	bin, err := exec.LookPath("nats-server")
	if err != nil {
		bin, err = "/usr/sbin/nats-server", nil // Debian's, off a user's PATH
		if _, statErr := os.Stat(bin); statErr != nil {
			err = statErr
		}
	}
	if err != nil {
		fmt.Fprintf(w, "Not measured: nats-server is not installed (make installs Debian's).\n\n")
		return nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	addr := ln.Addr().String()
	ln.Close()
	_, port, _ := net.SplitHostPort(addr)
	server := exec.Command(bin, "-a", "127.0.0.1", "-p", port)
	if err := server.Start(); err != nil {
		return fmt.Errorf("nats-server: %w", err)
	}
	defer func() { server.Process.Kill(); server.Wait() }()
	url := "nats://" + addr

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
	args := `{"text":"bench"}`
	// The fronting node lists the bundle once it has heard the serving node announce it.
	for deadline := time.Now().Add(20 * time.Second); fronting.call(args) != nil; {
		if time.Now().After(deadline) {
			return fmt.Errorf("node bench-a never routed %s to node bench-b", tool)
		}
		time.Sleep(100 * time.Millisecond)
	}
	fmt.Fprintf(w, "Two nodes on one nats-server (%s), over stdio with a 2025-11-25 client each; the bundle runs\n"+
		"on node B only.\n\n", strings.TrimSpace(natsVersion(bin)))
	fmt.Fprintf(w, "| bundle | path | in flight | calls/s | vs local | p50 | p99 |\n|---|---|---|---|---|---|---|\n")
	routes := []route{
		{name: "node B, its own bundle", c: serving},
		{name: "node A → NATS → node B", c: fronting},
	}
	res, err := compareRoutes(cfg, w, "echo-go", args, []int{1, 8}, routes, -1)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\nThe hop adds %s at the median with one call in flight: the call and its answer each go\n"+
		"through the nats-server and through both nodes' routing.\n\n",
		us(res[0][1].p50-res[0][0].p50))
	return nil
}

func natsVersion(bin string) string {
	out, _ := exec.Command(bin, "--version").Output()
	return string(out)
}
