package mcp

import (
	"encoding/json"
	"strings"
)

// MetaRelatedRequest is the _meta member by which a toolnode bundle relates a notification
// or a request of its own to the request it is serving: the JSON-RPC id of that request,
// as the bundle received it. The node uses it to pass what a bundle sends on behalf of a
// call to the client session that made the call.
const MetaRelatedRequest = "io.toolnode/request"

// SamplingMessage is one message of a sampling/createMessage request. Content is one
// block or, from 2025-11-25, an array of them.
type SamplingMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// CreateMessageParams is the params of sampling/createMessage, the request by which a
// server asks the client's model for a completion.
type CreateMessageParams struct {
	Messages         []SamplingMessage `json:"messages"`
	MaxTokens        int               `json:"maxTokens"`
	SystemPrompt     string            `json:"systemPrompt,omitempty"`
	ModelPreferences json.RawMessage   `json:"modelPreferences,omitempty"`
	IncludeContext   string            `json:"includeContext,omitempty"`
	Temperature      *float64          `json:"temperature,omitempty"`
	StopSequences    []string          `json:"stopSequences,omitempty"`
	Metadata         json.RawMessage   `json:"metadata,omitempty"`
	Meta             json.RawMessage   `json:"_meta,omitempty"`
}

// CreateMessageResult answers sampling/createMessage.
type CreateMessageResult struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	Model      string          `json:"model"`
	StopReason string          `json:"stopReason,omitempty"`
}

// Text returns the text of the result's text blocks, joined by newlines.
func (r *CreateMessageResult) Text() string {
	var blocks []Content
	if err := json.Unmarshal(r.Content, &blocks); err != nil {
		var one Content
		if json.Unmarshal(r.Content, &one) != nil {
			return ""
		}
		blocks = []Content{one}
	}
	var texts []string
	for _, b := range blocks {
		if b.Type == ContentText {
			texts = append(texts, b.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// UserText returns a user message holding one text block, for CreateMessageParams.
func UserText(text string) SamplingMessage {
	b, _ := json.Marshal(TextContent(text))
	return SamplingMessage{Role: "user", Content: b}
}

// ElicitParams is the params of elicitation/create in form mode: a message for the user
// and the flat JSON Schema object of what to ask.
type ElicitParams struct {
	Mode            string          `json:"mode,omitempty"`
	Message         string          `json:"message"`
	RequestedSchema json.RawMessage `json:"requestedSchema"`
	Meta            json.RawMessage `json:"_meta,omitempty"`
}

// Elicitation actions.
const (
	ElicitAccept  = "accept"
	ElicitDecline = "decline"
	ElicitCancel  = "cancel"
)

// ElicitResult answers elicitation/create: the user's action and, when they accepted, the
// values they gave.
type ElicitResult struct {
	Action  string          `json:"action"`
	Content json.RawMessage `json:"content,omitempty"`
}
