package node

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// A client whose calls keep crashing a bundle is refused that bundle for a while, so that
// one client's poison input cannot keep a bundle down for everyone. A crash counts against
// a client when its call was in flight as the process exited; a call of that client that
// ends well forgives it.

// anonymous is the client key of a session that names no client (an anonymous stateless
// request, a caller inside the node).
const anonymous = ""

const (
	// crashesToRefuse is how many crashes in a row get a client refused.
	crashesToRefuse = 3
	// refuseFor is how long it is refused.
	refuseFor = 5 * time.Minute
)

// blame counts, per client, the crashes of one bundle its calls were in flight for.
type blame struct {
	any     atomic.Bool // some client is refused: only then is the table looked at per call
	counted atomic.Bool // some crash is counted: only then does a call that ends well look
	mu      sync.Mutex
	crashes map[string]int
	last    map[string]*instance // the process whose crash was counted last
	until   map[string]time.Time
}

// crashed counts the crash of inst against a client, once however many of its calls it
// took down. A client without a name of its own (an anonymous stateless request) stands
// for everyone and is never blamed.
func (bl *blame) crashed(key string, inst *instance) {
	if key == anonymous {
		return
	}
	bl.mu.Lock()
	defer bl.mu.Unlock()
	if bl.crashes == nil {
		bl.crashes, bl.last, bl.until = map[string]int{}, map[string]*instance{}, map[string]time.Time{}
	}
	if bl.last[key] == inst {
		return
	}
	bl.last[key] = inst
	bl.crashes[key]++
	bl.counted.Store(true)
	if bl.crashes[key] >= crashesToRefuse {
		bl.until[key] = time.Now().Add(refuseFor)
		bl.crashes[key] = 0
		bl.any.Store(true)
	}
}

// forgive clears a client's count after a call that ended well.
func (bl *blame) forgive(key string) {
	if !bl.counted.Load() {
		return
	}
	bl.mu.Lock()
	defer bl.mu.Unlock()
	delete(bl.crashes, key)
}

// refused says why a client may not call the bundle now, or "".
func (bl *blame) refused(key, bundle string) error {
	if !bl.any.Load() {
		return nil
	}
	bl.mu.Lock()
	defer bl.mu.Unlock()
	until, ok := bl.until[key]
	if !ok {
		return nil
	}
	if time.Now().After(until) {
		delete(bl.until, key)
		bl.any.Store(len(bl.until) > 0)
		return nil
	}
	return fmt.Errorf("this client's calls crashed bundle %q %d times in a row; its calls to it are refused until %s",
		bundle, crashesToRefuse, until.UTC().Format(time.RFC3339))
}
