package meos_test

// A heavy aggregate of one client must not hold the bundle: cancelled, it stops within a few
// seconds, and while it runs another client's small aggregate is answered.

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serveHTTP starts a node over this bundle with its HTTP front, and the flags args, and
// returns its URL and pid.
func serveHTTP(t *testing.T, args ...string) (string, int) {
	t.Helper()
	cmd := bundleNode(t, append([]string{"--http", "127.0.0.1:0"}, args...)...)
	url, _ := startHTTP(t, cmd)
	return url, cmd.Process.Pid
}

func connect(t *testing.T, url, name string) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatalf("connect %s: %v", name, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// bundleCPU is the CPU time, in clock ticks, each process of the bundle has used, by pid:
// the node's children running meos-bundle.
func bundleCPU(nodePid int) map[int]int {
	out := map[int]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil || !strings.Contains(string(b), "(meos-bundle)") {
			continue
		}
		f := strings.Fields(string(b)[strings.LastIndexByte(string(b), ')')+1:])
		ppid, _ := strconv.Atoi(f[1])
		utime, _ := strconv.Atoi(f[11])
		stime, _ := strconv.Atoi(f[12])
		if ppid == nodePid {
			out[pid] = utime + stime
		}
	}
	return out
}

// busiest is the bundle process that used the most CPU since before (nil: over d, from now),
// after d, and how many ticks.
func busiest(nodePid int, before map[int]int, d time.Duration) (int, int) {
	if before == nil {
		before = bundleCPU(nodePid)
	}
	time.Sleep(d)
	pid, most := 0, -1
	for p, ticks := range bundleCPU(nodePid) {
		if used := ticks - before[p]; used > most {
			pid, most = p, used
		}
	}
	return pid, most
}

func TestACancelledAggregateStopsAndAnotherClientIsServedMeanwhile(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("reads the bundle's CPU time in /proc (Linux)")
	}
	url, nodePid := serveHTTP(t)
	heavy, light := connect(t, url, "heavy"), connect(t, url, "light")

	// 100,000 values, each an instant 1 s after the last, in a window of an hour: every
	// step of the fold works on a state of thousands of instants. Unstopped, it runs for
	// hours.
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	values := make([]string, 100_000)
	for i := range values {
		values[i] = "1@" + start.Add(time.Duration(i)*time.Second).Format("2006-01-02 15:04:05+00")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	heavyDone := make(chan string, 1)
	go func() {
		res, err := heavy.CallTool(ctx, &mcp.CallToolParams{Name: "meos.tint_wsum_agg",
			Arguments: map[string]any{"values": values, "interv": "1 hour"}})
		if err == nil && len(res.Content) > 0 {
			heavyDone <- fmt.Sprintf("answered %.200v", res.Content[0])
		} else {
			heavyDone <- fmt.Sprintf("%v", err)
		}
	}()

	// The fold has begun once a bundle process has used a second of CPU (the machine may
	// be busy: what counts is that the time was used, not how fast).
	before := bundleCPU(nodePid)
	deadline := time.Now().Add(120 * time.Second)
	for {
		if _, used := busiest(nodePid, before, 200*time.Millisecond); used >= 100 {
			break
		}
		select {
		case got := <-heavyDone:
			t.Fatalf("the heavy aggregate ended before it began: %s", got)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no bundle process began the heavy aggregate (CPU ticks by pid: %v)", bundleCPU(nodePid))
		}
	}

	// Meanwhile another client's three values are answered, the heavy call still running.
	lctx, lcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer lcancel()
	res, err := light.CallTool(lctx, &mcp.CallToolParams{Name: "meos.tint_wsum_agg",
		Arguments: map[string]any{"values": values[:3], "interv": "1 hour"}})
	if err != nil {
		t.Fatalf("another client's small aggregate was not answered while the heavy one ran: %v", err)
	}
	if res.IsError || !strings.Contains(fmt.Sprint(res.StructuredContent), "3@2025-01-01 00:00:02+00") {
		t.Fatalf("the small aggregate: %+v", res.Content[0])
	}
	select {
	case err := <-heavyDone:
		t.Fatalf("the heavy aggregate ended before it was cancelled: %s", err)
	default:
	}

	// Cancelled by its client, it stops: no bundle process keeps burning CPU.
	cancel()
	<-heavyDone
	deadline = time.Now().Add(5 * time.Second)
	for {
		pid, used := busiest(nodePid, nil, 2*time.Second)
		if used <= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("bundle process %d still burns CPU (%d ticks in 2 s) after its call was cancelled", pid, used)
		}
	}
}
