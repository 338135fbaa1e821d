package httpfront

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestAccepts(t *testing.T) {
	tests := []struct {
		header, mediaType string
		want              bool
	}{
		{"", "application/json", true},
		{"application/json, text/event-stream", "application/json", true},
		{"application/json, text/event-stream", "text/event-stream", true},
		{"text/event-stream;q=0.9", "text/event-stream", true},
		{" application/json ; q=1 ,text/html", "application/json", true},
		{"*/*", "text/event-stream", true},
		{"application/*", "application/json", true},
		{"application/*", "text/event-stream", false},
		{"text/html", "application/json", false},
		{"application/jsonx", "application/json", false},
		{"applications/*", "application/json", false},
		{",,", "application/json", false},
	}
	for _, tt := range tests {
		if got := accepts(tt.header, tt.mediaType); got != tt.want {
			t.Errorf("accepts(%q, %q) = %v, want %v", tt.header, tt.mediaType, got, tt.want)
		}
	}
}

// The guard remembers the last Host it accepted, and refuses a foreign one after it.
func TestHostAllowedRemembersOnlyWhatItAccepted(t *testing.T) {
	h := &Handler{}
	for _, tt := range []struct {
		host string
		want bool
	}{
		{"127.0.0.1:7777", true},
		{"evil.example:7777", false},
		{"127.0.0.1:7777", true},
		{"127.0.0.1.nip.io:7777", false},
		{"[::1]:7777", true},
		{"localhost", true},
		{"localhost.evil.example", false},
		{"", false},
	} {
		if got := h.hostAllowed(tt.host); got != tt.want {
			t.Errorf("hostAllowed(%q) = %v, want %v", tt.host, got, tt.want)
		}
	}
}

// A body over the limit is refused whether its length is declared (before it is read) or
// not; one within it is read whole, and one shorter than declared is an error.
func TestReadBodyBoundsEveryBody(t *testing.T) {
	const limit = 10
	for _, tt := range []struct {
		name     string
		body     string
		declared int64 // -1: not declared (chunked)
		wantErr  string
	}{
		{"declared, within", "0123456789", 10, ""},
		{"declared, over", "0123456789x", 11, "too large"},
		{"declared, short", "012", 10, "unexpected EOF"},
		{"chunked, within", "0123456789", -1, ""},
		{"chunked, over", "0123456789x", -1, "too large"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(tt.body))
			r.ContentLength = tt.declared
			got, err := readBody(httptest.NewRecorder(), r, limit)
			switch {
			case tt.wantErr == "" && (err != nil || string(got) != tt.body):
				t.Errorf("read %q, %v; want %q", got, err, tt.body)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("read %q, %v; want an error saying %q", got, err, tt.wantErr)
			}
			var tooBig *http.MaxBytesError
			if strings.Contains(tt.wantErr, "too large") && !errors.As(err, &tooBig) {
				t.Errorf("error %v is not an *http.MaxBytesError", err)
			}
		})
	}
}
