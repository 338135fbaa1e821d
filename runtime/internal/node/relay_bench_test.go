package node_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/node"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
)

// BenchmarkRelayedCall relays tools/call through the node to in-memory bundles of each
// era, one at a time: the node's own work per relayed call, without a process's pipes.
func BenchmarkRelayedCall(b *testing.B) {
	logger, _ := testkit.Log(b)
	n := node.New(node.Config{Logger: logger, Manifests: testkit.InMemory(b,
		testkit.Memory{Name: "a", Session: true}, testkit.Memory{Name: "s"})})
	n.Start()
	defer n.Close(context.Background())
	select {
	case <-n.Ready():
	case <-time.After(time.Minute):
		b.Fatal("the node did not start its bundles")
	}
	s := &testkit.Session{}
	n.Attach(s)
	defer n.Detach(s)
	for _, bundle := range []struct{ name, era string }{{"a", "session bundle"}, {"s", "stateless bundle"}} {
		params := json.RawMessage(`{"name":"` + bundle.name + `.echo","arguments":{"text":"x"}}`)
		want := `"` + bundle.name + `:x"`
		b.Run(bundle.era, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if res, err := n.Call(context.Background(), s, params); err != nil || !strings.Contains(string(res), want) {
					b.Fatalf("%s %v", res, err)
				}
			}
		})
	}
}
