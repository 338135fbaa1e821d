package telemetry_test

import (
	"testing"

	"github.com/toolnode/toolnode/runtime/internal/telemetry/otlptest"
)

func startReceiver(t testing.TB) *otlptest.Receiver {
	r := otlptest.New()
	t.Cleanup(r.Close)
	return r
}
