package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/telemetry"
)

var floorFlag = flag.String("serve-floor", "", "serve the HTTP floor on this address and do nothing else (the benchmark starts itself so)")

// The floor is the least an MCP server over Go's net/http can do per call: it decodes the
// JSON-RPC request, answers initialize, tools/list and tools/call (an echo) itself and
// encodes the answer as one JSON response, relaying nothing. It runs in a process of its own, as the node
// does, and the same client drives both, so an HTTP figure divided by the floor's is the
// share of what Go's HTTP stack allows on this machine that a front reaches.

// floorRequest is the part of a JSON-RPC request the floor reads.
type floorRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  struct {
		Name            string            `json:"name"`
		Arguments       map[string]string `json:"arguments"`
		ProtocolVersion string            `json:"protocolVersion"`
	} `json:"params"`
}

// floorTools is the floor's tools/list result: the echo-go bundle's one tool.
var floorTools = json.RawMessage(`{"tools":[{"name":"echo","description":"Answer the text given.",` +
	`"inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}}]}`)

// serveFloor answers MCP calls on ln until ctx ends.
func serveFloor(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: http.HandlerFunc(floorHandler), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("floor: %w", err)
	}
	return nil
}

func floorHandler(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 16<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req floorRequest
	if err := json.Unmarshal(body, &req); err != nil || req.JSONRPC != "2.0" {
		http.Error(w, "not JSON-RPC 2.0", http.StatusBadRequest)
		return
	}
	if len(req.ID) == 0 { // a notification
		w.WriteHeader(http.StatusAccepted)
		return
	}
	var result any
	switch req.Method {
	case "initialize":
		id := make([]byte, 16)
		rand.Read(id)
		w.Header().Set("Mcp-Session-Id", hex.EncodeToString(id))
		result = map[string]any{"protocolVersion": req.Params.ProtocolVersion, "capabilities": map[string]any{"tools": map[string]any{}},
			"serverInfo": map[string]any{"name": "floor", "version": "1"}}
	case "tools/list":
		result = floorTools
	case "tools/call":
		// Every tool is echo here, whatever its name and the name of its one argument, so
		// that the floor stands beside any of the benchmark's trivial tools.
		if len(req.Params.Arguments) != 1 {
			http.Error(w, "tools/call: want one argument", http.StatusBadRequest)
			return
		}
		var text string
		for _, v := range req.Params.Arguments {
			text = v
		}
		result = map[string]any{"content": []map[string]string{{"type": "text", "text": text}}}
	default:
		http.Error(w, "no method "+req.Method, http.StatusBadRequest)
		return
	}
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

// runFloor is the whole of the program when -serve-floor is given.
func runFloor(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("floor: %w", err)
	}
	stopProfile, err := telemetry.StartCPUProfile()
	if err != nil {
		return fmt.Errorf("floor: %w", err)
	}
	defer stopProfile()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serveFloor(ctx, ln)
}

// floorName is the floor's name in tables.
const floorName = "floor: Go net/http answering itself"

// startFloor runs this program as the floor in a process of its own, with env added to its
// environment, and connects to it.
func startFloor(env ...string) (peer, error) {
	self, err := os.Executable()
	if err != nil {
		return peer{}, fmt.Errorf("floor: %w", err)
	}
	return startPeer("the floor", func(port string) []string { return []string{self, "-serve-floor", "127.0.0.1:" + port} },
		env, "", func(addr string) (caller, error) { return startHTTP("http://"+addr+"/mcp", "echo") })
}
