package node

import "time"

// A call's time limits are kept without a timer of its own: a relay holds its deadline, which
// its progress pushes back, and each process sweeps its calls in flight a few times per
// limit, giving up on those past their deadline. A timer per call cost every relayed call
// two allocations and the runtime's timer heap twice (set, stopped); the sweep costs one
// timer per process, armed while calls are in flight, on the node's clock. A call then ends at most a tenth of
// its limit (and never more than a second) after it, never before.

// sinceEpoch is now as deadlines count it: the time since the node's epoch, on its clock
// (monotonic, for the system's).
func (inst *instance) sinceEpoch() time.Duration { return inst.clk.Now().Sub(inst.epoch) }

// sweepEvery is how often a process's calls with idle limit idle are swept.
func sweepEvery(idle time.Duration) time.Duration {
	return min(max(idle/10, time.Millisecond), time.Second)
}

// sweepLocked makes sure the process's calls in flight are swept, every every; inst.mu is
// held.
func (inst *instance) sweepLocked(every time.Duration) {
	if inst.sweeping {
		return
	}
	inst.sweeping, inst.sweepEvery = true, every
	inst.clk.AfterFunc(every, inst.sweepDue)
}

// sweepDue gives up on the calls past their deadline, and sweeps again later while calls
// remain in flight.
func (inst *instance) sweepDue() {
	now := int64(inst.sinceEpoch())
	var due []*relay
	inst.mu.Lock()
	for _, f := range inst.flights {
		if f.relay.deadline.Load() <= now {
			due = append(due, f.relay)
		}
	}
	if len(inst.flights) > 0 {
		inst.clk.AfterFunc(inst.sweepEvery, inst.sweepDue)
	} else {
		inst.sweeping = false
	}
	inst.mu.Unlock()
	for _, r := range due {
		r.expire()
	}
}
