package httpfront

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestDateCacheFollowsTheSecond(t *testing.T) {
	var d dateCache
	t0 := time.Date(2026, 12, 5, 2, 30, 7, 100e6, time.FixedZone("CET", 3600))
	for _, c := range []struct {
		at   time.Time
		want string
	}{
		{t0, "Sat, 05 Dec 2026 01:30:07 GMT"},
		{t0.Add(800 * time.Millisecond), "Sat, 05 Dec 2026 01:30:07 GMT"},
		{t0.Add(900 * time.Millisecond), "Sat, 05 Dec 2026 01:30:08 GMT"},
		{t0.Add(time.Hour), "Sat, 05 Dec 2026 02:30:07 GMT"},
		{t0, "Sat, 05 Dec 2026 01:30:07 GMT"}, // a clock set back is followed too
	} {
		if got := d.header(c.at); len(got) != 1 || got[0] != c.want {
			t.Errorf("at %s: %q, want %q", c.at, got, c.want)
		}
	}
	a, b := d.header(t0), d.header(t0.Add(time.Millisecond))
	if &a[0] != &b[0] {
		t.Error("two responses of one second formatted the date twice")
	}
}

// Every answer of the front, refusals included, carries the date it is made.
func TestAnswersCarryTheirDate(t *testing.T) {
	h := New(nil, Options{Token: "secret"})
	defer h.Close()
	before := time.Now().Truncate(time.Second)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader("{}")))
	got, err := http.ParseTime(w.Header().Get("Date"))
	if err != nil || got.Before(before) || got.After(time.Now()) {
		t.Errorf("Date %q (%v): want the time of the answer", w.Header().Get("Date"), err)
	}
}
