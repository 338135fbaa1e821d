package front

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// callContext is the context of a session's call, made only when something waits on its
// end. A context of its own (context.WithCancelCause) cost every call two allocations and a
// lock to cancel it, while most calls are answered before anything waits on them: the
// relay of a session's call is told of a cancellation by the call (Call.Watch).
//
// Until then it answers from its parent and the call's state: Err is the parent's, or
// context.Canceled once the call has ended; Value and Deadline are the parent's. Done (which
// a derived context and context.AfterFunc ask for) and a cancellation by the client make
// the real one, a context.WithCancelCause of the parent, ended at once if the call has
// ended. context.Cause reads the real one, or the parent's while there is none: the same
// but for a call that ended with nothing waiting on it, whose cause then reads as the
// parent's (nil while it lives) rather than context.Canceled.
type callContext struct {
	parent context.Context

	mu     sync.Mutex
	made   atomic.Bool // ctx and end are set (before made is)
	ended  atomic.Bool // the call is over
	ctx    context.Context
	cancel context.CancelCauseFunc
}

// Deadline implements context.Context.
func (x *callContext) Deadline() (time.Time, bool) { return x.parent.Deadline() }

// Done implements context.Context; it makes the real context.
func (x *callContext) Done() <-chan struct{} { return x.real().Done() }

// Err implements context.Context.
func (x *callContext) Err() error {
	switch {
	case x.made.Load():
		return x.ctx.Err()
	case x.ended.Load():
		return context.Canceled
	}
	return x.parent.Err()
}

// Value implements context.Context.
func (x *callContext) Value(key any) any {
	if x.made.Load() {
		return x.ctx.Value(key)
	}
	return x.parent.Value(key)
}

// real returns the real context, made on the first call.
func (x *callContext) real() context.Context {
	if x.made.Load() {
		return x.ctx
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.makeLocked()
}

func (x *callContext) makeLocked() context.Context {
	if !x.made.Load() {
		x.ctx, x.cancel = context.WithCancelCause(x.parent)
		if x.ended.Load() {
			x.cancel(nil)
		}
		x.made.Store(true)
	}
	return x.ctx
}

// end ends the context: cancelled with cause, or with nil because the call is over.
func (x *callContext) end(cause error) {
	x.mu.Lock()
	if cause != nil {
		x.makeLocked() // the cause is kept for context.Cause
	} else {
		x.ended.Store(true)
	}
	var cancel context.CancelCauseFunc
	if x.made.Load() {
		cancel = x.cancel
	}
	x.mu.Unlock()
	if cancel != nil {
		cancel(cause)
	}
}
