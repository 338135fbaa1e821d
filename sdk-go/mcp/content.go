package mcp

import (
	"encoding/base64"
	"encoding/json"
)

// Content block types.
const (
	ContentText         = "text"
	ContentImage        = "image"
	ContentAudio        = "audio"
	ContentResource     = "resource"
	ContentResourceLink = "resource_link"
)

// MarshalJSON writes the block as it is, except that a text block always carries its text:
// the schema requires it even when empty.
func (c Content) MarshalJSON() ([]byte, error) {
	type plain Content
	if c.Type != ContentText || c.Text != "" {
		return json.Marshal(plain(c))
	}
	return json.Marshal(struct {
		Type        string          `json:"type"`
		Text        string          `json:"text"`
		Annotations json.RawMessage `json:"annotations,omitempty"`
		Meta        json.RawMessage `json:"_meta,omitempty"`
	}{c.Type, c.Text, c.Annotations, c.Meta})
}

// TextContent returns a text block.
func TextContent(text string) Content { return Content{Type: ContentText, Text: text} }

// ImageContent returns an image block holding data, base64-encoded, e.g. a PNG with
// mimeType "image/png".
func ImageContent(data []byte, mimeType string) Content {
	return Content{Type: ContentImage, Data: base64.StdEncoding.EncodeToString(data), MimeType: mimeType}
}

// AudioContent returns an audio block holding data, base64-encoded, e.g. a WAV file with
// mimeType "audio/wav".
func AudioContent(data []byte, mimeType string) Content {
	return Content{Type: ContentAudio, Data: base64.StdEncoding.EncodeToString(data), MimeType: mimeType}
}

// EmbeddedResource returns a resource block carrying rc. rc.Meta, when set, must be valid
// JSON.
func EmbeddedResource(rc ResourceContents) Content {
	b, err := json.Marshal(rc)
	if err != nil {
		panic("mcp: embedded resource " + rc.URI + ": " + err.Error())
	}
	return Content{Type: ContentResource, Resource: b}
}

// ResourceLinkContent returns a resource_link block pointing at r, which the client may
// read with resources/read.
func ResourceLinkContent(r Resource) Content {
	return Content{
		Type: ContentResourceLink, URI: r.URI, Name: r.Name, Title: r.Title,
		Description: r.Description, MimeType: r.MimeType, Size: r.Size,
		Annotations: r.Annotations, Icons: r.Icons, Meta: r.Meta,
	}
}
