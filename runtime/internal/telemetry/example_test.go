package telemetry_test

import (
	"context"
	"encoding/json"
	"log"
	"net/http"

	"github.com/toolnode/toolnode/runtime/internal/telemetry"
)

// What the node does per tools/call it routes to a bundle.
func ExampleRecorder() {
	ctx := context.Background()
	tel, err := telemetry.New(ctx, telemetry.Config{Prometheus: true})
	if err != nil {
		log.Fatal(err)
	}
	defer tel.Shutdown(ctx)
	go func() { log.Print(http.ListenAndServe("127.0.0.1:9464", tel.MetricsHandler())) }()

	rec := tel.Recorder()
	// On a request from a client: its _meta may carry its traceparent.
	rctx, op := rec.StartRequest(ctx, telemetry.Request{
		Method: "tools/call", Target: "weather.forecast", ID: json.RawMessage(`7`),
		SessionID: "9f2c", ProtocolVersion: "2025-11-25", Transport: "tcp",
		Meta: json.RawMessage(`{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}`),
	})
	// On the message to the bundle: the node's span goes in its _meta, in the edit that
	// readies the request for the bundle (upstream.Edit.Meta).
	bctx, call := rec.StartBundleCall(rctx, telemetry.BundleCall{Bundle: "weather", Method: "tools/call", Target: "forecast", ID: json.RawMessage(`3`)})
	meta := rec.TraceMeta(bctx)
	_ = meta // traceparent and tracestate, sent with the request
	call.End("")
	op.End("") // or telemetry.ToolError, telemetry.ErrorCode(-32602)
}
