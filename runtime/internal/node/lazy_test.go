package node_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/manifest"
	"github.com/toolnode/toolnode/runtime/internal/node"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
)

// waitState waits until bundle name of n is in state want.
func waitState(t *testing.T, n *node.Node, name string, want node.State) node.BundleStatus {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		for _, st := range n.Status() {
			if st.Name == name && st.State == want {
				return st
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("bundle %s never %s: %+v", name, want, n.Status())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestLazyBundlesSleepWakeAndStopCleanly runs lazy bundles in-process through their whole
// life (shown once, asleep, woken by a call, asleep again when idle, listed from the cache
// by a second node) and checks with goleak that nothing is left behind.
func TestLazyBundlesSleepWakeAndStopCleanly(t *testing.T) {
	dir, state := t.TempDir(), t.TempDir()
	testkit.Write(t, dir, testkit.Fake{Name: "a"})
	testkit.Write(t, dir, testkit.Fake{Name: "b"})
	load := func(name string, idle string) *manifest.Manifest {
		m, err := manifest.Load(dir + "/" + name + "/bundle.json")
		if err != nil {
			t.Fatal(err)
		}
		if idle != "" {
			_ = json.Unmarshal([]byte(`"`+idle+`"`), &m.IdleStop)
		}
		return m
	}
	ms := []*manifest.Manifest{load("a", "200ms"), load("b", "")}
	start := func() *node.Node {
		n := node.New(node.Config{Manifests: ms, Lazy: true, StateDir: state, Supervision: node.Supervision{PingEvery: -1}})
		n.Start()
		<-n.Ready()
		return n
	}
	n := start()
	waitState(t, n, "a", node.StateAsleep)
	waitState(t, n, "b", node.StateAsleep)
	if _, ok := n.Catalog().Lookup("b.echo"); !ok {
		t.Fatal("an asleep bundle's tools are not listed")
	}
	s := &session{seen: make(chan struct{}, 16)}
	res, err := n.Call(context.Background(), s, json.RawMessage(`{"name":"a.echo","arguments":{"text":"x"}}`))
	if err != nil || !strings.Contains(string(res), "a:x") {
		t.Fatalf("a.echo: %s %v", res, err)
	}
	if st := waitState(t, n, "a", node.StateReady); len(st.PIDs) != 1 {
		t.Errorf("woken bundle has pids %v", st.PIDs)
	}
	waitState(t, n, "a", node.StateAsleep) // idle_stop
	if st := waitState(t, n, "b", node.StateAsleep); len(st.PIDs) != 0 || st.Tools == 0 {
		t.Errorf("asleep bundle b: %+v", st)
	}
	// A bundle woken by a call is stopped by Close like any other.
	_, _ = n.Call(context.Background(), s, json.RawMessage(`{"name":"b.echo","arguments":{"text":"x"}}`))
	n.Close(context.Background())

	n = start()
	defer n.Close(context.Background())
	for _, st := range n.Status() {
		if st.State != node.StateAsleep || st.Tools == 0 {
			t.Errorf("from the cache, bundle %+v", st)
		}
	}
}
