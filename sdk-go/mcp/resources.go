package mcp

import (
	"encoding/base64"
	"encoding/json"
)

// Resource describes one resource in resources/list.
type Resource struct {
	URI         string          `json:"uri"`
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	MimeType    string          `json:"mimeType,omitempty"`
	Size        *int64          `json:"size,omitempty"`
	Annotations json.RawMessage `json:"annotations,omitempty"`
	Icons       json.RawMessage `json:"icons,omitempty"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
}

// ResourceTemplate describes a family of resources by an RFC 6570 URI template, in
// resources/templates/list.
type ResourceTemplate struct {
	URITemplate string          `json:"uriTemplate"`
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	MimeType    string          `json:"mimeType,omitempty"`
	Annotations json.RawMessage `json:"annotations,omitempty"`
	Icons       json.RawMessage `json:"icons,omitempty"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
}

// ResourceContents is what resources/read returns for one URI, and what an embedded
// resource block carries: text, or binary data as base64 in Blob.
type ResourceContents struct {
	URI      string          `json:"uri"`
	MimeType string          `json:"mimeType,omitempty"`
	Text     string          `json:"text"`
	Blob     string          `json:"blob,omitempty"`
	Meta     json.RawMessage `json:"_meta,omitempty"`
}

// MarshalJSON writes blob contents without a text member: the two are exclusive.
func (rc ResourceContents) MarshalJSON() ([]byte, error) {
	type plain ResourceContents
	if rc.Blob == "" {
		return json.Marshal(plain(rc))
	}
	return json.Marshal(struct {
		URI      string          `json:"uri"`
		MimeType string          `json:"mimeType,omitempty"`
		Blob     string          `json:"blob"`
		Meta     json.RawMessage `json:"_meta,omitempty"`
	}{rc.URI, rc.MimeType, rc.Blob, rc.Meta})
}

// TextContents returns the contents of a text resource.
func TextContents(uri, mimeType, text string) ResourceContents {
	return ResourceContents{URI: uri, MimeType: mimeType, Text: text}
}

// BlobContents returns the contents of a binary resource, base64-encoding data.
func BlobContents(uri, mimeType string, data []byte) ResourceContents {
	return ResourceContents{URI: uri, MimeType: mimeType, Blob: base64.StdEncoding.EncodeToString(data)}
}

// ReadResourceParams is the params of resources/read, resources/subscribe and
// resources/unsubscribe.
type ReadResourceParams struct {
	URI string `json:"uri"`
}

// ReadResourceResult answers resources/read.
type ReadResourceResult struct {
	Contents []ResourceContents `json:"contents"`
}

// ResourceUpdatedParams is the params of notifications/resources/updated.
type ResourceUpdatedParams struct {
	URI string `json:"uri"`
}
