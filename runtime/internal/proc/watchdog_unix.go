//go:build darwin || (linux && toolnode_darwin_proc)

package proc

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The watchdog stands in for Linux's parent-death signal. It is the node's own binary,
// started again with watchdogVar set, in a session of its own so that signals meant for the
// node's terminal or group do not reach it. It reads the families the node follows on a
// pipe whose write end only the node holds: when the node exits, however it exits, the
// kernel closes that end, and the watchdog stops every family still registered the way
// Stop would (the bundles' stdin has closed with the node: a grace to exit, SIGTERM,
// another grace, SIGKILL), then exits. The node removes a family once Stop has ended it,
// and closes the pipe once it follows none, so the watchdog runs only while bundles do.
//
// On the pipe, one line per change:
//
//	+ LEADER START GRACE_MS TAG   follow the family of LEADER (started at START)
//	- LEADER                      stop following it: the node has stopped it

// watchdogVar, in the environment of the node's binary, makes it the watchdog of the node
// whose pid it holds.
const watchdogVar = "TOOLNODE_PROC_WATCHDOG"

// Any binary that starts bundles through this package links it, the test binaries that
// act as a node included, so each can be its own watchdog: the check is here rather than
// in every main.
func init() {
	if v, ok := os.LookupEnv(watchdogVar); ok {
		node, _ := strconv.Atoi(v)
		os.Exit(runWatchdog(os.Stdin, node, sysTable{}))
	}
}

// theWatchdog is the node's: its death is one event for the whole process, so one watchdog
// serves every family of it.
var theWatchdog = &watchdog{families: map[*family]bool{}}

type watchdog struct {
	mu       sync.Mutex
	families map[*family]bool
	proc     *os.Process
	w        *os.File      // the pipe the watchdog reads; nil while none runs
	exited   chan struct{} // closed once the running watchdog has exited
}

// ready starts the watchdog unless one runs.
func (d *watchdog) ready() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.runningLocked() {
		return nil
	}
	return d.startLocked()
}

// ensure starts the watchdog again, telling it every family, if one is needed and the last
// one is gone (killed, say).
func (d *watchdog) ensure() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.families) > 0 && !d.runningLocked() {
		_ = d.startLocked() // tried again at the next tick of any family
	}
}

func (d *watchdog) add(f *family) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.families[f] = true
	if !d.runningLocked() {
		_ = d.startLocked() // it tells the new watchdog every family, f included
		return
	}
	d.sendLocked(followLine(f))
}

func (d *watchdog) remove(f *family) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.families[f] {
		return
	}
	delete(d.families, f)
	if !d.runningLocked() {
		return
	}
	if len(d.families) == 0 {
		// Nothing registered: the end of the pipe is the watchdog's cue to exit.
		d.w.Close()
		d.proc, d.w = nil, nil
		return
	}
	d.sendLocked(fmt.Sprintf("- %d\n", f.leader))
}

func followLine(f *family) string {
	return fmt.Sprintf("+ %d %d %d %s\n", f.leader, f.leaderStart, f.grace.Milliseconds(), f.tag)
}

func (d *watchdog) runningLocked() bool {
	if d.w == nil {
		return false
	}
	select {
	case <-d.exited:
		d.retireLocked()
		return false
	default:
		return true
	}
}

func (d *watchdog) startLocked() error {
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("start the watchdog that stops bundles if the node dies: %w", err)
	}
	cmd, err := startSelf("watchdog that stops bundles if the node dies", watchdogVar+"="+strconv.Itoa(os.Getpid()), r)
	if err != nil {
		closeAll(r, w)
		return err
	}
	r.Close()
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	d.proc, d.w, d.exited = cmd.Process, w, exited
	for f := range d.families {
		d.sendLocked(followLine(f))
	}
	return nil
}

// sendLocked writes one line to the watchdog. A watchdog that cannot take it within a
// second (stopped, or gone) is retired, and a new one started at the next ensure.
func (d *watchdog) sendLocked(line string) {
	if d.w == nil {
		return
	}
	_ = d.w.SetWriteDeadline(time.Now().Add(time.Second))
	if _, err := io.WriteString(d.w, line); err != nil {
		d.retireLocked()
	}
}

// retireLocked ends the watchdog before closing its pipe, which it would otherwise read as
// the node's death.
func (d *watchdog) retireLocked() {
	if d.proc != nil {
		_ = d.proc.Kill()
	}
	if d.w != nil {
		d.w.Close()
	}
	d.proc, d.w = nil, nil
}

// runWatchdog is the watchdog's life: it follows the families that in names until in ends
// or node is no longer its parent, then stops those still registered, and returns the
// exit code.
func runWatchdog(in io.Reader, node int, table procTable) int {
	type change struct {
		add    bool
		leader int
		f      *family
	}
	changes := make(chan change)
	go func() {
		defer close(changes)
		br := bufio.NewReaderSize(in, 512)
		for {
			line, err := br.ReadSlice('\n')
			if errors.Is(err, bufio.ErrBufferFull) {
				for errors.Is(err, bufio.ErrBufferFull) {
					_, err = br.ReadSlice('\n') // no line of the node's is that long: skip it
				}
				continue
			}
			if err != nil {
				return
			}
			var c change
			var start, grace int64
			var tag string
			switch f := strings.Fields(string(line)); {
			case len(f) == 5 && f[0] == "+":
				c.add = true
				c.leader, _ = strconv.Atoi(f[1])
				start, _ = strconv.ParseInt(f[2], 10, 64)
				grace, _ = strconv.ParseInt(f[3], 10, 64)
				tag = f[4]
			case len(f) == 2 && f[0] == "-":
				c.leader, _ = strconv.Atoi(f[1])
			}
			if c.leader <= 0 || c.add && !strings.HasPrefix(tag, TagVar+"=") {
				continue
			}
			if c.add {
				c.f = newFamilyOf(table, []byte(tag), time.Duration(grace)*time.Millisecond)
				c.f.leader, c.f.leaderStart = c.leader, start
			}
			changes <- c
		}
	}()
	families := map[int]*family{}
	parent := time.NewTicker(time.Second)
	defer parent.Stop()
watch:
	for {
		select {
		case c, ok := <-changes:
			if !ok {
				break watch
			}
			if c.add {
				families[c.leader] = c.f
			} else {
				delete(families, c.leader)
			}
		case <-parent.C:
			// The pipe ends with the node; this is for a write end the node leaked.
			if os.Getppid() != node {
				break watch
			}
		}
	}
	var wg sync.WaitGroup
	for _, f := range families {
		wg.Go(func() { stopOrphaned(f) })
	}
	wg.Wait()
	return 0
}

// stopOrphaned stops a family whose node has died, as Stop would have.
func stopOrphaned(f *family) {
	gone := func(d time.Duration) bool {
		for deadline := time.Now().Add(d); ; time.Sleep(50 * time.Millisecond) {
			if !f.alive() {
				return true
			}
			if time.Now().After(deadline) {
				return false
			}
		}
	}
	if gone(f.grace) {
		return
	}
	f.signal(syscall.SIGTERM)
	if gone(f.grace) {
		return
	}
	f.signal(syscall.SIGKILL)
	gone(time.Second)
}
