package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/testkit"
)

// replicasSection compares the Go echo bundle's call made to one node directly with the
// same call through HAProxy, round-robin with no affinity, to three replicas of that node
// (docs/cluster.md): a 2025-11-25 session's requests land on any replica and two in three
// are carried over NATS to the session's; a 2026-07-28 client's are served wherever they
// land.
func replicasSection(cfg config, w *strings.Builder) error {
	fmt.Fprintf(w, "## Replicas behind a balancer (`replicas`)\n\n")
	haproxy, err := exec.LookPath("haproxy")
	if err != nil {
		fmt.Fprintf(w, "Not measured: haproxy is not installed (make deps installs Debian's).\n\n")
		return nil
	}
	url, _, stopNATS, err := startNATS()
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
	kf, err := os.CreateTemp("", "toolnode-bench-*.key") // 0600, as the node wants a key
	if err != nil {
		return err
	}
	key := kf.Name()
	defer os.Remove(key)
	_, err = kf.WriteString("bench key, 32 bytes or more, for the replicas\n")
	kf.Close()
	if err != nil {
		return err
	}
	const tool = "echo-go.echo"
	direct, stop, err := startNodeHTTP(cfg, dir, tool)
	if err != nil {
		return err
	}
	defer stop()
	var servers []string
	for i := range 3 {
		c, _, stop, err := startNodeEnv(cfg, dir, tool, nil, "--cluster", url, "--cluster-node", fmt.Sprint("r", i+1), "--cluster-key", key,
			"--trusted-proxy", "127.0.0.1") // the balancer, which sends the PROXY protocol
		if err != nil {
			return err
		}
		defer stop()
		servers = append(servers, fmt.Sprintf("r%d %s", i+1, strings.TrimSuffix(strings.TrimPrefix(c.url, "http://"), "/mcp")))
	}
	one, stopOne, err := startBalancer(cfg, haproxy, servers[:1])
	if err != nil {
		return err
	}
	defer stopOne()
	three, stopThree, err := startBalancer(cfg, haproxy, servers)
	if err != nil {
		return err
	}
	defer stopThree()
	args := `{"text":"bench"}`
	// A replica forwards to another once it has heard it: sessions made before then may
	// be refused on the others, so the session measured is made when every replica answers.
	var session *httpClient
	for deadline := time.Now().Add(20 * time.Second); session == nil; {
		if time.Now().After(deadline) {
			return fmt.Errorf("the replicas never served one session together")
		}
		c, err := startHTTP(three, tool)
		for i := 0; err == nil && i < 6; i++ {
			err = c.call(args)
		}
		if err == nil {
			session = c
		} else {
			time.Sleep(100 * time.Millisecond) // a heartbeat's time
		}
	}
	viaOne, err := startHTTP(one, tool)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "One node against HAProxy (%s) in front of three replicas of it on one nats-server,\n"+
		"with `--cluster-key`, as [cluster.md](cluster.md#replicas-behind-a-balancer) sets them up; the Go echo bundle.\n"+
		"A 2025-11-25 session lives on one replica: HAProxy sends two of its three requests to\n"+
		"another, which carries each over NATS to it. HAProxy in front of the node alone is the\n"+
		"balancer's own cost.\n\n", haproxyVersion(haproxy))
	fmt.Fprintf(w, "| client | path | in flight | calls/s | vs direct | p50 | p99 |\n|---|---|---|---|---|---|---|\n")
	sessions, err := compareRoutes(cfg, w, "2025-11-25 session", args, []int{1, 8}, []route{
		{name: "the node, directly", c: direct},
		{name: "HAProxy → the node", c: viaOne},
		{name: "HAProxy → 3 replicas", c: session},
	}, -1)
	if err != nil {
		return err
	}
	stateless, err := compareRoutes(cfg, w, "2026-07-28", args, []int{1, 8}, []route{
		{name: "the node, directly", c: startHTTPStateless(direct.url, tool)},
		{name: "HAProxy → the node", c: startHTTPStateless(one, tool)},
		{name: "HAProxy → 3 replicas", c: startHTTPStateless(three, tool)},
	}, -1)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\nAdded at the median, one call in flight, over the node directly: HAProxy %s; HAProxy and\n"+
		"three replicas %s with a session (the NATS hop to the session's replica, on two calls in\n"+
		"three), %s without.\n\n",
		us(sessions[0][1].p50-sessions[0][0].p50), us(sessions[0][2].p50-sessions[0][0].p50), us(stateless[0][2].p50-stateless[0][0].p50))
	return nil
}

// startBalancer runs HAProxy under docs/snippets/haproxy.cfg in front of servers (each
// "name host:port") and returns its MCP endpoint.
func startBalancer(cfg config, bin string, servers []string) (string, func(), error) {
	snippet, err := os.ReadFile(filepath.Join(cfg.root, "docs", "snippets", "haproxy.cfg"))
	if err != nil {
		return "", nil, err
	}
	front, err := freeAddr()
	if err != nil {
		return "", nil, err
	}
	stats, err := freeAddr()
	if err != nil {
		return "", nil, err
	}
	_, frontPort, _ := net.SplitHostPort(front)
	_, statsPort, _ := net.SplitHostPort(stats)
	conf, err := testkit.HAProxyConfig(string(snippet), frontPort, statsPort, servers)
	if err != nil {
		return "", nil, err
	}
	f, err := os.CreateTemp("", "toolnode-bench-haproxy-*.cfg")
	if err != nil {
		return "", nil, err
	}
	defer os.Remove(f.Name()) // read once, at start
	if _, err := f.WriteString(conf); err != nil {
		return "", nil, err
	}
	f.Close()
	cmd := exec.Command(bin, "-db", "-f", f.Name())
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() { cmd.Process.Kill(); cmd.Wait() }
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", front); err == nil {
			c.Close()
			return "http://" + front + "/mcp", stop, nil
		}
		if time.Now().After(deadline) {
			stop()
			return "", nil, fmt.Errorf("haproxy did not listen on %s", front)
		}
	}
}

func haproxyVersion(bin string) string {
	out, _ := exec.Command(bin, "-v").Output()
	line, _, _ := strings.Cut(string(out), "\n")
	return strings.TrimSpace(strings.TrimPrefix(line, "HAProxy version "))
}
