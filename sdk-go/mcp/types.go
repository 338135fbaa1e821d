package mcp

import "encoding/json"

// Implementation names a client or server in the initialize exchange.
type Implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

// InitializeParams is what a client sends in initialize.
type InitializeParams struct {
	ProtocolVersion string          `json:"protocolVersion"`
	Capabilities    json.RawMessage `json:"capabilities"`
	ClientInfo      Implementation  `json:"clientInfo"`
}

// InitializeResult is what a server answers to initialize.
type InitializeResult struct {
	ProtocolVersion string             `json:"protocolVersion"`
	Capabilities    ServerCapabilities `json:"capabilities"`
	ServerInfo      Implementation     `json:"serverInfo"`
	Instructions    string             `json:"instructions,omitempty"`
}

// ServerCapabilities says which features a server offers. A nil member is absent.
type ServerCapabilities struct {
	Tools       *ListChangedCapability `json:"tools,omitempty"`
	Resources   *ResourcesCapability   `json:"resources,omitempty"`
	Prompts     *ListChangedCapability `json:"prompts,omitempty"`
	Logging     *struct{}              `json:"logging,omitempty"`
	Completions *struct{}              `json:"completions,omitempty"`
	// Extensions names the extensions the server offers (such as ExtensionTasks), each
	// with its settings object.
	Extensions map[string]json.RawMessage `json:"extensions,omitempty"`
}

// ListChangedCapability is the capability shape of tools and prompts.
type ListChangedCapability struct {
	ListChanged bool `json:"listChanged"`
}

// ResourcesCapability is the capability shape of resources.
type ResourcesCapability struct {
	Subscribe   bool `json:"subscribe,omitempty"`
	ListChanged bool `json:"listChanged,omitempty"`
}

// Tool describes one tool. Schemas and annotations stay raw so they pass through untouched.
type Tool struct {
	Name         string          `json:"name"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  json.RawMessage `json:"annotations,omitempty"`
	// Execution says how calls to the tool may run: whether one may or must become a
	// task (see ToolExecution); nil leaves it to the server.
	Execution *ToolExecution  `json:"execution,omitempty"`
	Icons     json.RawMessage `json:"icons,omitempty"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// PaginatedParams is the params of every */list request.
type PaginatedParams struct {
	Cursor string `json:"cursor,omitempty"`
}

// ListToolsResult answers tools/list. Tools stay raw so that fields this code does not know
// reach the client unchanged.
type ListToolsResult struct {
	Tools      []json.RawMessage `json:"tools"`
	NextCursor string            `json:"nextCursor,omitempty"`
}

// RequestMeta is the _meta member of a request's params.
type RequestMeta struct {
	ProgressToken json.RawMessage `json:"progressToken,omitempty"`
	// Traceparent and Tracestate are the W3C Trace Context of the caller's span, as
	// the 2026-07-28 revision (and OpenTelemetry's MCP conventions before it) carry them:
	// strings, kept raw so that a value of another type cannot fail the request.
	Traceparent json.RawMessage `json:"traceparent,omitempty"`
	Tracestate  json.RawMessage `json:"tracestate,omitempty"`
}

// CallToolParams is the params of tools/call.
type CallToolParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Meta      *RequestMeta    `json:"_meta,omitempty"`
}

// Content is one block of a tool result or a prompt message: text (Text), image or audio
// (Data, base64, and MimeType), an embedded resource (Resource) or a resource_link (URI,
// Name and the optional fields of a Resource). content.go has constructors for each.
type Content struct {
	Type        string          `json:"type"`
	Text        string          `json:"text,omitempty"`
	Data        string          `json:"data,omitempty"`
	MimeType    string          `json:"mimeType,omitempty"`
	URI         string          `json:"uri,omitempty"`
	Name        string          `json:"name,omitempty"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	Size        *int64          `json:"size,omitempty"`
	Resource    json.RawMessage `json:"resource,omitempty"`
	Annotations json.RawMessage `json:"annotations,omitempty"`
	Icons       json.RawMessage `json:"icons,omitempty"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
}

// CallToolResult answers tools/call.
type CallToolResult struct {
	Content           []Content       `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError,omitempty"`
}

// TextResult returns a result holding one text block.
func TextResult(text string) *CallToolResult {
	return &CallToolResult{Content: []Content{{Type: "text", Text: text}}}
}

// ErrorResult returns a tool error: a result with isError set and the message as text.
func ErrorResult(msg string) *CallToolResult {
	r := TextResult(msg)
	r.IsError = true
	return r
}

// ProgressParams is the params of notifications/progress.
type ProgressParams struct {
	ProgressToken json.RawMessage `json:"progressToken"`
	Progress      float64         `json:"progress"`
	Total         *float64        `json:"total,omitempty"`
	Message       string          `json:"message,omitempty"`
}

// CancelledParams is the params of notifications/cancelled.
type CancelledParams struct {
	RequestID json.RawMessage `json:"requestId"`
	Reason    string          `json:"reason,omitempty"`
}

// CancelledNotice is the params of notifications/cancelled for the request whose id is
// requestID (as JSON).
func CancelledNotice(requestID, reason string) json.RawMessage {
	b, _ := json.Marshal(CancelledParams{RequestID: json.RawMessage(requestID), Reason: reason})
	return b
}

// LoggingMessageParams is the params of notifications/message.
type LoggingMessageParams struct {
	Level  string          `json:"level"`
	Logger string          `json:"logger,omitempty"`
	Data   json.RawMessage `json:"data"`
}

// SetLevelParams is the params of logging/setLevel.
type SetLevelParams struct {
	Level string `json:"level"`
}
