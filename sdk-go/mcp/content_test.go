package mcp_test

import (
	"encoding/json"
	"testing"

	"github.com/toolnode/toolnode/sdk-go/mcp"
)

func TestContentJSON(t *testing.T) {
	size := int64(3)
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"text", mcp.TextContent("hi"), `{"type":"text","text":"hi"}`},
		{"empty text keeps its member", mcp.TextContent(""), `{"type":"text","text":""}`},
		{"empty text with annotations", mcp.Content{Type: "text", Annotations: json.RawMessage(`{"priority":1}`)},
			`{"type":"text","text":"","annotations":{"priority":1}}`},
		{"image", mcp.ImageContent([]byte{1, 2, 3}, "image/png"), `{"type":"image","data":"AQID","mimeType":"image/png"}`},
		{"audio", mcp.AudioContent([]byte("RIFF"), "audio/wav"), `{"type":"audio","data":"UklGRg==","mimeType":"audio/wav"}`},
		{"embedded text", mcp.EmbeddedResource(mcp.TextContents("test://a", "text/plain", "x")),
			`{"type":"resource","resource":{"uri":"test://a","mimeType":"text/plain","text":"x"}}`},
		{"embedded blob", mcp.EmbeddedResource(mcp.BlobContents("test://b", "", []byte{0})),
			`{"type":"resource","resource":{"uri":"test://b","blob":"AA=="}}`},
		{"resource link", mcp.ResourceLinkContent(mcp.Resource{URI: "file:///a.txt", Name: "a", Title: "A", Description: "d", MimeType: "text/plain", Size: &size}),
			`{"type":"resource_link","mimeType":"text/plain","uri":"file:///a.txt","name":"a","title":"A","description":"d","size":3}`},
		{"empty text contents keep their text", mcp.TextContents("test://e", "", ""), `{"uri":"test://e","text":""}`},
		{"prompt message", mcp.PromptMessage{Role: "user", Content: mcp.TextContent("")}, `{"role":"user","content":{"type":"text","text":""}}`},
		{"user text", mcp.UserText("hi"), `{"role":"user","content":{"type":"text","text":"hi"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.v)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tt.want {
				t.Errorf("got  %s\nwant %s", b, tt.want)
			}
		})
	}
}

func TestCreateMessageResultText(t *testing.T) {
	tests := []struct{ content, want string }{
		{`{"type":"text","text":"one"}`, "one"},
		{`[{"type":"text","text":"a"},{"type":"image","data":"","mimeType":"image/png"},{"type":"text","text":"b"}]`, "a\nb"},
		{`{"type":"image","data":"","mimeType":"image/png"}`, ""},
		{`42`, ""},
	}
	for _, tt := range tests {
		r := mcp.CreateMessageResult{Content: json.RawMessage(tt.content)}
		if got := r.Text(); got != tt.want {
			t.Errorf("Text() of %s: got %q, want %q", tt.content, got, tt.want)
		}
	}
}
