package node_test

import (
	"context"
	"encoding/json"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/toolnode/toolnode/runtime/internal/codemode"
	"github.com/toolnode/toolnode/runtime/internal/codemode/worker"
	"github.com/toolnode/toolnode/runtime/internal/node"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
)

// Programs that take more memory than their worker may have (a string doubled until it
// is gigabytes, a list of 2^27 elements) end with the error of the memory bound, while the
// node's memory stays where it was and another client's calls, made as those programs
// run one after another, are answered.
func TestProgramsPastTheMemoryBoundEndAndTheNodeDoesNotNotice(t *testing.T) {
	// Not parallel: the RSS it measures is the whole test binary's.
	if runtime.GOOS != "linux" {
		t.Skip("the kernel's memory bound of a worker is tested on Linux")
	}
	// A bound below the default: the programs reach it sooner. (The default's own size
	// is checked at the end.)
	n, _ := startMemory(t, node.Config{RunWorker: worker.Config{MaxMemory: 128 << 20}}, testkit.Memory{Name: "a"})
	runner := &testkit.Session{}
	call := func(p json.RawMessage) (json.RawMessage, error) { return n.Call(context.Background(), runner, p) }
	if out, isErr := runProgram(t, call, `a.echo(text="warm")`); isErr {
		t.Fatalf("a first program failed: %v", out)
	}
	before := testkit.RSSKiB(t, os.Getpid())

	programs := []string{"s = \"x\" * 1024\nwhile True:\n    s += s", "[0] * (1 << 27)"}
	stop := make(chan struct{})
	started := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	seen := map[string]int{}
	wg.Add(1)
	go func() { // the programs, one after another, until the other client is done
		defer wg.Done()
		for i := 0; ; i++ {
			code := programs[i%len(programs)]
			out, isErr := runProgram(t, call, code)
			errObj, _ := out["error"].(map[string]any)
			msg, _ := errObj["message"].(string)
			if !isErr || errObj["bound"] != codemode.BoundMemory || !strings.Contains(msg, "128 MiB") || !strings.Contains(msg, "--run-max-memory") {
				t.Errorf("%q: %v, want the error of the 128 MiB memory bound naming --run-max-memory", code, out)
			}
			mu.Lock()
			seen[code]++
			mu.Unlock()
			if i == 0 {
				close(started)
			}
			select {
			case <-stop:
				if i >= len(programs)-1 {
					return
				}
			default:
			}
		}
	}()
	<-started
	other := &testkit.Session{}
	for i := range 20 {
		text := "other " + string(rune('a'+i))
		res, err := n.Call(context.Background(), other, json.RawMessage(`{"name":"a.echo","arguments":{"text":"`+text+`"}}`))
		if err != nil || !strings.Contains(string(res), "a:"+text) {
			t.Fatalf("the other client's call %d: %s %v", i, res, err)
		}
	}
	close(stop)
	wg.Wait()
	for _, code := range programs {
		if seen[code] == 0 {
			t.Errorf("%q never ran", code)
		}
	}
	after := testkit.RSSKiB(t, os.Getpid())
	t.Logf("node RSS %d KiB before the programs, %d KiB after; runs %v", before, after, seen)
	if grew := after - before; grew > 50<<10 {
		t.Errorf("the node's RSS grew by %d KiB, more than 50 MiB", grew)
	}
	if worker.DefaultMaxMemory != 256<<20 {
		t.Errorf("the default memory bound is %d bytes, not 256 MiB", worker.DefaultMaxMemory)
	}
}
