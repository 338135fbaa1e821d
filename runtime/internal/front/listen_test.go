package front_test

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnode/toolnode/runtime/internal/reload"
	"github.com/toolnode/toolnode/runtime/internal/serve"
	"github.com/toolnode/toolnode/runtime/internal/testkit/nodekit"
)

// watchedURI is the resource each conformance bundle changes every 3 seconds.
const watchedURI = "test://watched-resource"

// conformanceNode serves the conformance bundle of one SDK (go, c or python) over stdio.
func conformanceNode(t *testing.T, sdk string) *nodekit.Node {
	t.Helper()
	return nodekit.Start(t, serve.Config{Source: reload.Source{Dirs: []string{nodekit.Conformance(t, sdk)}}, Stdio: true})
}

// A 2026-07-28 client subscribes to a resource of a bundle written with each SDK, which
// speaks 2026-07-28 to the node too: the node opens subscriptions/listen at the bundle, the
// bundle's update comes back tagged with that listen's id, and the node passes it on to the
// client on the client's own listen. Unsubscribed, the client hears no more.
func TestA2026ClientHearsABundlesResourceUpdates(t *testing.T) {
	for _, sdk := range []string{"go", "c", "python"} {
		t.Run(sdk, func(t *testing.T) {
			// Each SDK's bundle under a node of its own: most of the test is waiting for
			// the bundles' updates, which need not come one SDK after another.
			t.Parallel()
			updates := make(chan string, 16)
			s := conformanceNode(t, sdk).Client(t, "2026-07-28", &mcp.ClientOptions{
				ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
					updates <- r.Params.URI
				},
			})
			if v := s.InitializeResult().ProtocolVersion; v != "2026-07-28" {
				t.Fatalf("the client speaks %s", v)
			}
			if res := s.InitializeResult().Capabilities.Resources; res == nil || !res.Subscribe {
				t.Fatalf("the node does not offer resource subscriptions: %+v", res)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			if err := s.Subscribe(ctx, &mcp.SubscribeParams{URI: watchedURI}); err != nil {
				t.Fatal(err)
			}
			// Two updates, 3 s apart: the subscription lasts beyond its first.
			for range 2 {
				select {
				case uri := <-updates:
					if uri != watchedURI {
						t.Fatalf("update for %q, want %q", uri, watchedURI)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("no resources/updated within 10 s of a resource that changes every 3 s")
				}
			}
			if err := s.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: watchedURI}); err != nil {
				t.Fatal(err)
			}
			// An update already on its way may still come within this grace, which is part
			// of what is tested; after it, none.
			time.Sleep(time.Second)
			for len(updates) > 0 {
				<-updates
			}
			select {
			case uri := <-updates:
				t.Errorf("update for %q after unsubscribing", uri)
			case <-time.After(4 * time.Second):
			}
		})
	}
}

// A 2025-11-25 client of the node watches the same resource of a 2026-07-28 bundle: it gets
// the update as its revision has it, without the id of the node's own subscription at the
// bundle, which means nothing to it.
func TestA2025ClientHearsA2026BundlesResourceUpdates(t *testing.T) {
	updates := make(chan *mcp.ResourceUpdatedNotificationParams, 16)
	s := conformanceNode(t, "go").Client(t, "2025-11-25", &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
			updates <- r.Params
		},
	})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := s.Subscribe(ctx, &mcp.SubscribeParams{URI: watchedURI}); err != nil {
		t.Fatal(err)
	}
	select {
	case p := <-updates:
		if p.URI != watchedURI {
			t.Errorf("update for %q, want %q", p.URI, watchedURI)
		}
		if id, ok := p.Meta["io.modelcontextprotocol/subscriptionId"]; ok {
			t.Errorf("a 2025-11-25 client got a subscription id in _meta: %v", id)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no resources/updated within 10 s of a resource that changes every 3 s")
	}
}

// A 2025-11-25 client that can answer elicitation but not sampling calls a 2026-07-28
// bundle that asks for what its client can give: told the client's own capabilities, the
// bundle asks only the question the client can answer, and the node puts it to the client.
func TestA2026BundleIsToldWhatA2025ClientCanAnswer(t *testing.T) {
	asked := make(chan string, 4)
	s := conformanceNode(t, "go").Client(t, "2025-11-25", &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked <- r.Params.Message
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		},
	})
	text, isErr := nodekit.CallText(t, s, "test_input_required_result_capabilities", nil)
	if isErr || text != "Got 1 answers" {
		t.Fatalf("the call answered %q (error %v), want one answer: the elicitation alone", text, isErr)
	}
	if len(asked) != 1 {
		t.Fatalf("the client was asked %d questions, want 1", len(asked))
	}
}
