package cluster

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/nats-io/nats.go"

	"github.com/toolnode/toolnode/runtime/internal/node"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
)

// nodeEnv marks the test binary run as a node of a cluster (see runNodeIfChild); its value
// is the node's childConfig in JSON.
const nodeEnv = "TOOLNODE_CLUSTER_TEST_NODE"

// childConfig is a node run as a process of its own, whose memory a test can measure.
type childConfig struct {
	URL, ID, KeyFile string
	// MaxMessage is the node's bound on a bundle's message, and so on a cluster message.
	MaxMessage int
	Bounds     Bounds
}

// childStatus is what a node run by startNodeProc says of itself when asked.
type childStatus struct {
	Members map[string]int // other nodes, with the bundles each announces
	Tools   []string       // the node's catalog
}

// runNodeIfChild runs a node without bundles of its own in a cluster and exits, when the
// test binary runs as one: it prints "ready" once it has joined, answers each "status"
// line on stdin with a childStatus line, and leaves when stdin closes.
func runNodeIfChild() {
	raw := os.Getenv(nodeEnv)
	if raw == "" {
		return
	}
	var cfg childConfig
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	log := hclog.New(&hclog.LoggerOptions{Output: os.Stderr, Level: hclog.Info})
	n := node.New(node.Config{Logger: log, Limits: node.Limits{MaxLine: cfg.MaxMessage}})
	n.Start()
	<-n.Ready()
	c, err := Join(Config{URL: cfg.URL, NodeID: cfg.ID, KeyFile: cfg.KeyFile, Logger: log.Named("cluster"),
		Bounds: cfg.Bounds, Heartbeat: 100 * time.Millisecond, Silence: time.Second}, n, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fmt.Println("ready")
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		st := childStatus{Members: map[string]int{}}
		c.mu.Lock()
		for id, m := range c.members {
			st.Members[id] = len(m.Bundles)
		}
		c.mu.Unlock()
		for _, e := range n.Catalog().Entries() {
			st.Tools = append(st.Tools, e.Name)
		}
		b, _ := json.Marshal(st)
		fmt.Println(string(b))
	}
	c.Leave()
	n.Close(context.Background())
	c.Close()
	os.Exit(0)
}

// nodeProc is a node run as a process of its own by startNodeProc.
type nodeProc struct {
	pid  int
	in   io.WriteCloser
	out  *bufio.Reader
	logs *testkit.SyncBuffer
}

// startNodeProc runs the test binary as a node of the cluster (see runNodeIfChild) until
// the test ends.
func startNodeProc(t *testing.T, cfg childConfig) *nodeProc {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(cfg)
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), nodeEnv+"="+string(raw))
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &nodeProc{in: in, out: bufio.NewReader(out), logs: &testkit.SyncBuffer{}}
	cmd.Stderr = p.logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p.pid = cmd.Process.Pid
	t.Cleanup(func() {
		in.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("node %s:\n%s", cfg.ID, p.logs)
		}
	})
	if line, err := p.out.ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("node %s did not start: %q %v\n%s", cfg.ID, line, err, p.logs)
	}
	return p
}

// status asks the node what it knows.
func (p *nodeProc) status(t *testing.T) childStatus {
	t.Helper()
	if _, err := io.WriteString(p.in, "status\n"); err != nil {
		t.Fatal(err)
	}
	line, err := p.out.ReadString('\n')
	if err != nil {
		t.Fatalf("status: %v\n%s", err, p.logs)
	}
	var st childStatus
	if err := json.Unmarshal([]byte(line), &st); err != nil {
		t.Fatalf("status %q: %v", line, err)
	}
	return st
}

// cpu is the processor time the node has used.
func (p *nodeProc) cpu(t *testing.T) time.Duration {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.pid))
	if err != nil {
		t.Fatal(err)
	}
	// Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	user, _ := strconv.Atoi(f[11])
	sys, _ := strconv.Atoi(f[12])
	return time.Duration(user+sys) * time.Second / 100 // USER_HZ
}

// peer is a hostile publisher on a cluster's subjects: a plain NATS connection that holds
// no cluster key and says what it likes.
type peer struct {
	t      *testing.T
	nc     *nats.Conn
	prefix string // toolnode.<cluster>.
}

func newPeer(t *testing.T, url string) *peer {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return &peer{t: t, nc: nc, prefix: "toolnode." + DefaultName + "."}
}

func (p *peer) publish(m *nats.Msg) {
	p.t.Helper()
	if err := p.nc.PublishMsg(m); err != nil {
		p.t.Fatal(err)
	}
}

// announce sends a heartbeat of node id serving bundles. It goes on the subject of node
// ids too, and on the one nodes listened on before ids were in it, where it showed the
// faults these tests are about.
func (p *peer) announce(id string, bundles []Announcement) {
	p.t.Helper()
	body, _ := json.Marshal(map[string]any{"node": id, "bundles": bundles})
	p.publish(&nats.Msg{Subject: p.prefix + "announce." + id, Data: body})
	p.publish(&nats.Msg{Subject: p.prefix + "announce", Data: body})
}

// keepAnnouncing announces node id serving bundles every 50 ms until the test ends, so
// that the node does not withdraw it while it serves a call.
func (p *peer) keepAnnouncing(id string, bundles []Announcement) {
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			body, _ := json.Marshal(map[string]any{"node": id, "bundles": bundles})
			_ = p.nc.Publish(p.prefix+"announce."+id, body)
			_ = p.nc.Publish(p.prefix+"announce", body)
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	p.t.Cleanup(func() { close(stop); <-done })
}

// bye says goodbye for node id, on both subjects as announce does.
func (p *peer) bye(id string) {
	p.t.Helper()
	p.publish(&nats.Msg{Subject: p.prefix + "bye." + id})
	p.publish(&nats.Msg{Subject: p.prefix + "bye", Data: []byte(id)})
}

// request is a call of a node to a bundle the peer announced.
type request struct {
	bundle, method string
	id             json.RawMessage
	msg            *nats.Msg
}

// serve answers the calls to the bundles the peer announces as node id would: discover,
// and each list with the tools of tools[bundle] (tool objects or names); requests go to
// intercept first, which answers them itself when it returns true.
func (p *peer) serve(id string, tools map[string][]any, intercept func(request) bool) {
	p.t.Helper()
	sub, err := p.nc.Subscribe(p.prefix+"bundle.>", func(m *nats.Msg) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(m.Data, &req) != nil || req.ID == nil {
			return
		}
		r := request{bundle: strings.TrimPrefix(m.Subject, p.prefix+"bundle."), method: req.Method, id: req.ID, msg: m}
		if intercept != nil && intercept(r) {
			return
		}
		var result any = map[string]any{}
		switch req.Method {
		case "server/discover":
			result = map[string]any{"resultType": "complete", "supportedVersions": []string{"2026-07-28"},
				"capabilities": map[string]any{"tools": map[string]any{"listChanged": true}},
				"_meta":        map[string]any{"io.modelcontextprotocol/serverInfo": map[string]any{"name": r.bundle, "version": "1"}}}
		case "tools/list":
			var list []any
			for _, t := range tools[r.bundle] {
				if name, ok := t.(string); ok {
					t = map[string]any{"name": name, "inputSchema": map[string]any{"type": "object"}}
				}
				list = append(list, t)
			}
			result = map[string]any{"resultType": "complete", "tools": list}
		}
		p.answer(id, m.Reply, r.id, result)
	})
	if err != nil {
		p.t.Fatal(err)
	}
	p.t.Cleanup(func() { _ = sub.Unsubscribe() })
}

// answer sends the result of call id to reply as node would.
func (p *peer) answer(node, reply string, id json.RawMessage, result any) {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
	m := &nats.Msg{Subject: reply, Header: nats.Header{}, Data: body}
	m.Header.Set(hNode, node)
	_ = p.nc.PublishMsg(m)
}

// flood sends size bytes in parts of chunk bytes to subject, as node, each part the first
// of a message of its own that never ends.
func (p *peer) flood(node, subject string, size, chunk int, hdr nats.Header) {
	p.t.Helper()
	data := make([]byte, chunk)
	for i := range data {
		data[i] = 'x'
	}
	for sent := 0; sent < size; sent += chunk {
		m := &nats.Msg{Subject: subject, Header: nats.Header{}, Data: data}
		for k, v := range hdr {
			m.Header[k] = v
		}
		m.Header.Set(hNode, node)
		m.Header.Set(hMsg, fmt.Sprintf("flood-%d", sent))
		m.Header.Set(hPart, "0")
		p.publish(m)
	}
	if err := p.nc.Flush(); err != nil {
		p.t.Fatal(err)
	}
}

// ping asks node for an answer on its subject, which it takes in order with what came
// there before: once answered, the node has read everything the peer sent it there.
func (p *peer) ping(node string) error {
	m := &nats.Msg{Subject: p.prefix + "node." + node, Header: nats.Header{}}
	m.Header.Set(hKind, "ping")
	_, err := p.nc.RequestMsg(m, 10*time.Second)
	return err
}
