package upstream

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/proc"
	"github.com/toolnode/toolnode/sdk-go/bundle"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// An in-memory bundle is spoken to as a process is: initialize (here server/discover, as
// an sdk-go bundle answers it), calls, and an end. Stopped, it is told by the end of its
// stdin and its Serve returns; a bundle whose Serve returns on its own ends the session,
// and the calls after it fail naming it.
func TestAnInMemoryBundleIsSpokenToAsAProcess(t *testing.T) {
	s := bundle.NewServer(bundle.Options{Name: "mem", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err := s.AddTool(mcp.Tool{Name: "hi"}, func(context.Context, *bundle.Call) (*mcp.CallToolResult, error) {
		return mcp.TextResult("hello"), nil
	}); err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 2)
	quit := make(chan struct{})
	serve := func(ctx context.Context, in io.Reader, out io.Writer) error {
		ctx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		go func() {
			select {
			case <-quit:
				cancel(errors.New("quit on purpose"))
			case <-ctx.Done():
			}
		}()
		err := s.Serve(ctx, in, out)
		served <- err
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, stop := range []string{"by the node", "on its own"} {
		c, err := Start(Config{Name: "mem", InMemory: serve, Process: proc.Config{Grace: 5 * time.Second}, Handler: &recorder{}})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Initialize(ctx); err != nil {
			t.Fatal(err)
		}
		if c.Era() != EraStateless || c.Pid() != 0 {
			t.Errorf("era %v, pid %d", c.Era(), c.Pid())
		}
		res, err := c.Call(ctx, mcp.MethodToolsCall, map[string]any{"name": "hi"})
		if err != nil || !strings.Contains(string(res), "hello") {
			t.Fatalf("call: %s %v", res, err)
		}
		if stop == "by the node" {
			if err := c.Close(ctx); err != nil {
				t.Fatal(err)
			}
			if err := <-served; err != nil {
				t.Errorf("stopped by the end of its stdin, Serve returned %v", err)
			}
			continue
		}
		close(quit)
		<-served
		select {
		case <-c.Done():
		case <-ctx.Done():
			t.Fatal("the session outlived its bundle")
		}
		if _, err := c.Call(ctx, mcp.MethodToolsCall, map[string]any{"name": "hi"}); !errors.Is(err, ErrGone) || !strings.Contains(err.Error(), "quit on purpose") {
			t.Errorf("a call after the bundle ended: %v", err)
		}
		if st := c.ExitStatus(); !strings.Contains(st, "quit on purpose") {
			t.Errorf("status %q", st)
		}
		c.Close(ctx)
	}
}
