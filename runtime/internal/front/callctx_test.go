package front

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestCallContext: a session call's context, made only when waited on, ends as a context of
// its own would: cancelled by the client with its reason, by the end of the call, or by its
// parent, whether or not anything waited on it first; a context derived from it ends with
// it; values are its parent's.
func TestCallContext(t *testing.T) {
	type key struct{}
	reason := errors.New("cancelled by the client")
	ended := func(t *testing.T, ctx context.Context, cause error) {
		t.Helper()
		select {
		case <-ctx.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("not ended")
		}
		if !errors.Is(ctx.Err(), context.Canceled) || !errors.Is(context.Cause(ctx), cause) {
			t.Errorf("err %v, cause %v; want %v", ctx.Err(), context.Cause(ctx), cause)
		}
	}
	for _, waited := range []bool{false, true} {
		newCtx := func(parent context.Context) (*callContext, context.Context) {
			x := &callContext{parent: parent}
			var derived context.Context = x
			if waited {
				var cancel context.CancelFunc
				derived, cancel = context.WithCancel(x)
				t.Cleanup(cancel)
			}
			if x.Err() != nil || context.Cause(x) != nil {
				t.Fatalf("a new call's context has ended: %v", x.Err())
			}
			return x, derived
		}
		parent := context.WithValue(context.Background(), key{}, "v")

		x, derived := newCtx(parent)
		if x.Value(key{}) != "v" {
			t.Errorf("waited %v: value %v", waited, x.Value(key{}))
		}
		x.end(reason)
		x.end(nil) // the call's end after the cancellation changes nothing
		ended(t, x, reason)
		ended(t, derived, reason)

		x, derived = newCtx(parent)
		x.end(nil)
		if !errors.Is(x.Err(), context.Canceled) {
			t.Errorf("waited %v: an ended call's context has err %v", waited, x.Err())
		}
		ended(t, derived, context.Canceled)
		ended(t, x, context.Canceled) // waits on it now: made, and ended at once

		p, cancel := context.WithCancelCause(parent)
		x, derived = newCtx(p)
		cancel(reason)
		ended(t, x, reason)
		ended(t, derived, reason)
	}
}
