package search

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Names of the node's own tools for searching and calling the catalog.
const (
	SearchToolName  = "toolnode.search"
	ExecuteToolName = "toolnode.execute"
)

// Bounds of the node's own tools' string arguments, in characters, as their inputSchema
// states them with maxLength. A search costs time in proportion to its query (a query of
// 15 MB took 3 s of CPU), and an unknown name is repeated in the error: past these, the
// call is refused with a tool error before any work.
const (
	// MaxQueryLen bounds a query: a task in plain words needs far fewer.
	MaxQueryLen = 1000
	// MaxBundleLen bounds a bundle name, which is at most 64 characters.
	MaxBundleLen = 64
	// MaxNameLen bounds a tool name: the catalog's are at most 193 (a 64-character bundle
	// name, a dot, and a tool name of up to 128).
	MaxNameLen = 256
)

// checkLen returns an error for a string argument s of tool longer than limit characters.
func checkLen(tool, member, s string, limit int) error {
	if len(s) <= limit { // a character is at least a byte
		return nil
	}
	if n := utf8.RuneCountInString(s); n > limit {
		return fmt.Errorf("%s arguments: %s is %d characters long, more than the %d it may have", tool, member, n, limit)
	}
	return nil
}

// SearchTool returns the tools/list entry of toolnode.search.
func SearchTool() json.RawMessage {
	return json.RawMessage(`{"name":"toolnode.search","title":"Search the tools",` +
		`"description":"Find the tools of this node that fit a task, best first. Describe the task in plain words (e.g. \"speed of a moving point\"); each result has the tool's name, description and inputSchema. Call a result by its name, or through toolnode.execute.",` +
		`"inputSchema":{"type":"object","properties":{` +
		`"query":{"type":"string","maxLength":1000,"description":"The task, in plain words, or a tool name."},` +
		`"limit":{"type":"integer","minimum":1,"maximum":100,"default":10,"description":"Most results to return."},` +
		`"bundle":{"type":"string","maxLength":64,"description":"Only tools served by this bundle."}},` +
		`"required":["query"],"additionalProperties":false},` +
		`"outputSchema":{"type":"object","properties":{` +
		`"results":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"},"title":{"type":"string"},"description":{"type":"string"},"inputSchema":{"type":"object"}},"required":["name","inputSchema"]}},` +
		`"truncated":{"type":"boolean","description":"More tools matched than were returned."}},` +
		`"required":["results","truncated"]},` +
		`"annotations":{"readOnlyHint":true,"openWorldHint":false}}`)
}

// ExecuteTool returns the tools/list entry of toolnode.execute.
func ExecuteTool() json.RawMessage {
	return json.RawMessage(`{"name":"toolnode.execute","title":"Call a tool by name",` +
		`"description":"Call one of this node's tools, found with toolnode.search, by its name with its arguments. The arguments are checked against the tool's inputSchema first. On failure the result's structuredContent is {\"error\": {\"kind\", \"dispatched\", \"message\", \"details\"}}: kind unknown_tool, invalid_arguments or forbidden means the call was not sent (dispatched false; fix and call again); dispatched true means the tool may have run (check before repeating).",` +
		`"inputSchema":{"type":"object","properties":{` +
		`"name":{"type":"string","maxLength":256,"description":"The tool's name, as toolnode.search gives it."},` +
		`"arguments":{"type":"object","description":"The tool's arguments, as its inputSchema describes."}},` +
		`"required":["name"],"additionalProperties":false}}`)
}

// ParseSearch reads toolnode.search's arguments into a Query (without Allow, which is the
// caller's to set).
func ParseSearch(args json.RawMessage) (Query, error) {
	var a struct {
		Query  *string `json:"query"`
		Limit  *int    `json:"limit"`
		Bundle string  `json:"bundle"`
	}
	if err := strictDecode(args, &a); err != nil {
		return Query{}, fmt.Errorf("%s arguments: %w", SearchToolName, err)
	}
	if a.Query == nil {
		return Query{}, fmt.Errorf("%s arguments: query is missing; describe the task in plain words", SearchToolName)
	}
	if err := errors.Join(checkLen(SearchToolName, "query", *a.Query, MaxQueryLen), checkLen(SearchToolName, "bundle", a.Bundle, MaxBundleLen)); err != nil {
		return Query{}, err
	}
	q := Query{Text: *a.Query, Limit: DefaultLimit}
	if a.Limit != nil {
		if *a.Limit < 1 || *a.Limit > MaxLimit {
			return Query{}, fmt.Errorf("%s arguments: limit is %d, must be from 1 to %d", SearchToolName, *a.Limit, MaxLimit)
		}
		q.Limit = *a.Limit
	}
	if a.Bundle != "" {
		q.Bundles = []string{a.Bundle}
	}
	return q, nil
}

// ParseExecute reads toolnode.execute's arguments: the tool's name and its arguments ({}
// when absent).
func ParseExecute(args json.RawMessage) (name string, arguments json.RawMessage, err error) {
	var a struct {
		Name      *string         `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := strictDecode(args, &a); err != nil {
		return "", nil, fmt.Errorf("%s arguments: %w", ExecuteToolName, err)
	}
	if a.Name == nil || *a.Name == "" {
		return "", nil, fmt.Errorf("%s arguments: name is missing; give the name of a tool found with %s", ExecuteToolName, SearchToolName)
	}
	if err := checkLen(ExecuteToolName, "name", *a.Name, MaxNameLen); err != nil {
		return "", nil, err
	}
	arguments = a.Arguments
	if trimmed := bytes.TrimSpace(arguments); len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		arguments = json.RawMessage("{}")
	} else if trimmed[0] != '{' {
		return "", nil, fmt.Errorf("%s arguments: arguments must be an object", ExecuteToolName)
	}
	return *a.Name, arguments, nil
}

func strictDecode(args json.RawMessage, v any) error {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s", strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

// Kinds of toolnode.execute's errors.
const (
	KindUnknownTool      = "unknown_tool"
	KindInvalidArguments = "invalid_arguments"
	KindForbidden        = "forbidden"
	// KindFailed: the bundle failed or the call timed out after it was sent.
	KindFailed = "failed"
	// KindTimeout: the call ran past its time limit after it was sent.
	KindTimeout = "timeout"
)

// ExecError is a failed toolnode.execute: the structured content of its isError result is
// {"error": ExecError}. Dispatched says whether the call was sent to a bundle: when false,
// nothing ran and the caller may fix and retry; when true, the tool may have acted, and the
// caller should check before repeating.
type ExecError struct {
	Kind       string `json:"kind"`
	Dispatched bool   `json:"dispatched"`
	Message    string `json:"message"`
	Details    any    `json:"details,omitempty"`
}

func (e *ExecError) Error() string { return e.Message }

// Result returns the tools/call result for the error: the message as text, the error as
// structured content, isError true.
func (e *ExecError) Result() json.RawMessage {
	content, _ := json.Marshal(struct {
		Error *ExecError `json:"error"`
	}{e})
	text, _ := json.Marshal(e.Message)
	return json.RawMessage(`{"content":[{"type":"text","text":` + string(text) + `}],"structuredContent":` +
		string(content) + `,"isError":true}`)
}
