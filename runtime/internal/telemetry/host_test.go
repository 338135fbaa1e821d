package telemetry_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolnode/toolnode/runtime/internal/telemetry"
)

// The metrics listener answers requests naming it by loopback name, IP address or the
// name it was given, and refuses any other Host: a DNS rebinding page's.
func TestCheckHost(t *testing.T) {
	for _, tt := range []struct {
		addr  string
		hosts map[string]int
	}{
		{"127.0.0.1:9464", map[string]int{
			"127.0.0.1:9464": 200, "localhost:9464": 200, "LOCALHOST": 200, "[::1]:9464": 200, "10.1.2.3:9464": 200,
			"evil.example:9464": 403, "evil.example": 403, "127.0.0.1.nip.io:9464": 403,
		}},
		{"metrics.internal:9464", map[string]int{
			"metrics.internal:9464": 200, "Metrics.Internal": 200, "192.0.2.7:9464": 200,
			"other.internal:9464": 403,
		}},
		{"[::1]:9464", map[string]int{"[::1]:9464": 200, "rebind.example": 403}},
	} {
		srv := httptest.NewServer(telemetry.CheckHost(tt.addr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "metrics")
		})))
		for host, want := range tt.hosts {
			req, _ := http.NewRequest(http.MethodGet, srv.URL+"/metrics", nil)
			req.Host = host
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != want {
				t.Errorf("--metrics %s, Host %s: %d %s, want %d", tt.addr, host, resp.StatusCode, b, want)
			}
			if want == 403 && !strings.Contains(string(b), "not this node's") {
				t.Errorf("--metrics %s, Host %s: the refusal does not say why: %s", tt.addr, host, b)
			}
		}
		srv.Close()
	}
}
