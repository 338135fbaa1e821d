package httpfront

import "testing"

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
