package telemetry_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/telemetry"
)

// Label values a client or a bundle chooses (methods, error codes, protocol revisions)
// are recorded as themselves only when the node knows them, else as _OTHER: no number of
// requests can mint more than a few series.
func TestUnknownValuesFoldIntoOther(t *testing.T) {
	ctx := context.Background()
	tel, err := telemetry.New(ctx, telemetry.Config{Prometheus: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tel.Shutdown(ctx) })
	rec := tel.Recorder()
	const junk = 3000 // past the SDK's 2,000 series of one instrument
	for i := range junk {
		_, op := rec.StartRequest(ctx, telemetry.Request{Method: fmt.Sprintf("junk/%d", i), ProtocolVersion: fmt.Sprintf("v%d", i)})
		op.End(telemetry.ErrorCode(-32601))
		_, op = rec.StartRequest(ctx, telemetry.Request{Method: "tools/call", Target: "real.tool"})
		op.End(telemetry.ErrorCode(int64(1000 + i))) // a bundle's made-up codes
		rec.SessionOpened()
		rec.SessionClosed(fmt.Sprintf("v%d", i), time.Second)
	}
	_, op := rec.StartRequest(ctx, telemetry.Request{Method: "tools/list", Target: "not.a.tool"})
	op.End("")
	rec.SessionOpened()
	rec.SessionClosed("2025-11-25", time.Second)

	srv := httptest.NewServer(tel.MetricsHandler())
	t.Cleanup(srv.Close)
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	page := string(b)
	want := map[string]string{
		`mcp_server_operation_duration_seconds_count{error_type="-32601",mcp_method_name="_OTHER"}`:                                  fmt.Sprint(junk),
		`mcp_server_operation_duration_seconds_count{error_type="_OTHER",gen_ai_tool_name="real.tool",mcp_method_name="tools/call"}`: fmt.Sprint(junk),
		`mcp_server_operation_duration_seconds_count{mcp_method_name="tools/list"}`:                                                  "1",
		`mcp_server_session_duration_seconds_count{mcp_protocol_version="_OTHER"}`:                                                   fmt.Sprint(junk),
		`mcp_server_session_duration_seconds_count{mcp_protocol_version="2025-11-25"}`:                                               "1",
	}
	var series int
	for _, line := range strings.Split(page, "\n") {
		if !strings.HasPrefix(line, "mcp_server_") || !strings.Contains(line, "_count{") {
			continue
		}
		series++
		key, value, _ := strings.Cut(line, " ")
		if w, ok := want[key]; ok && w == value {
			delete(want, key)
		}
	}
	for k, v := range want {
		t.Errorf("no %s %s", k, v)
	}
	if series != 5 || strings.Contains(page, "overflow") {
		t.Errorf("%d series, want 5:\n%s", series, page)
	}
}

func TestErrorCode(t *testing.T) {
	for code, want := range map[int64]string{
		-32700: "-32700", -32602: "-32602", -32002: "-32002", -32022: "-32022", -32042: "-32042", -32000: "-32000",
		-32001: "_OTHER", 0: "_OTHER", 42: "_OTHER", -1 << 62: "_OTHER",
	} {
		if got := telemetry.ErrorCode(code); got != want {
			t.Errorf("ErrorCode(%d) = %q, want %q", code, got, want)
		}
	}
}
