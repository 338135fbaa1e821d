package mcp

import (
	"encoding/json"
	"slices"
	"testing"
)

func TestStatelessVersionsStayOutOfTheSessionList(t *testing.T) {
	for _, v := range StatelessVersions() {
		if IsSupportedVersion(v) {
			t.Errorf("IsSupportedVersion(%q) = true; the session-era list must not hold stateless revisions", v)
		}
		if got := NegotiateVersion(v); got != LatestVersion {
			t.Errorf("NegotiateVersion(%q) = %q, want %q", v, got, LatestVersion)
		}
		if !slices.Contains(AllVersions(), v) {
			t.Errorf("AllVersions() lacks %q", v)
		}
	}
	if !IsStatelessVersion(Version20260728) || IsStatelessVersion(Version20251125) {
		t.Error("IsStatelessVersion misclassifies 2026-07-28 or 2025-11-25")
	}
}

func TestDiscoverResultWire(t *testing.T) {
	r := DiscoverResult{
		ResultType:        ResultTypeComplete,
		SupportedVersions: []string{Version20260728},
		CacheHint:         CacheHint{TTLMs: 1000, CacheScope: CacheScopePublic},
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{},"ttlMs":1000,"cacheScope":"public"}`
	if string(b) != want {
		t.Errorf("marshal:\n got %s\nwant %s", b, want)
	}
}

func TestAnInputRequestAlwaysCarriesParams(t *testing.T) {
	for _, tt := range []struct {
		params json.RawMessage
		want   string
	}{
		{nil, `{"method":"roots/list","params":{}}`},
		{json.RawMessage(`null`), `{"method":"roots/list","params":{}}`},
		{json.RawMessage(`{"_meta":{"k":1}}`), `{"method":"roots/list","params":{"_meta":{"k":1}}}`},
	} {
		b, err := json.Marshal(InputRequests{"r": {Method: "roots/list", Params: tt.params}})
		if err != nil {
			t.Fatal(err)
		}
		if got := string(b); got != `{"r":`+tt.want+`}` {
			t.Errorf("params %s: got %s, want %s", tt.params, got, tt.want)
		}
	}
}
