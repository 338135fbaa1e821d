package cli_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	anthropicoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	openaioption "github.com/openai/openai-go/v3/option"

	"github.com/toolnode/toolnode/runtime/internal/testkit/nodekit"
	"github.com/toolnode/toolnode/sdk-go/app"
	"github.com/toolnode/toolnode/sdk-go/app/provider"
)

// fakeAPI answers the model APIs' endpoints with what answer returns, in the shapes their
// documentation records, and keeps each request body.
type fakeAPI struct {
	mu       sync.Mutex
	requests [][]byte
	answer   func(path string, n int) any
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.requests = append(f.requests, body)
	n := len(f.requests)
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(f.answer(r.URL.Path, n))
}

func (f *fakeAPI) request(t *testing.T, i int) map[string]any {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	var m map[string]any
	if err := json.Unmarshal(f.requests[i], &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// appNode serves the Go and C examples and the Go conformance bundle (an image tool).
func appNode(t *testing.T) *app.Node {
	t.Helper()
	url := httpNode(t, nodekit.Examples(t, "go", "c", "../testdata/conformance/go"))
	n, err := app.New(app.Config{URL: url, Allow: []string{"c.greet", "node-lamp.*", "test_image_content", "go.sleep"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}

func calls(t *testing.T, n *app.Node, f string) [][3]any {
	t.Helper()
	d, err := n.Definitions(context.Background(), f, false)
	if err != nil {
		t.Fatal(err)
	}
	return [][3]any{
		{"call_1", d.Names.Render("c.greet"), map[string]any{"name": "Ada"}},
		{"call_2", d.Names.Render("node-lamp.status"), map[string]any{}},
		{"call_3", d.Names.Render("test_image_content"), map[string]any{}},
	}
}

// The official OpenAI Go SDK takes the tools and results as its own types; the calls run
// through a real node and come back in Chat Completions' format, the image as image_url.
func TestAppWithOpenAIGo(t *testing.T) {
	n := appNode(t)
	ctx := context.Background()
	want := calls(t, n, provider.OpenAI)
	api := &fakeAPI{answer: func(_ string, i int) any {
		msg := map[string]any{"role": "assistant", "content": "done"}
		finish := "stop"
		if i == 1 {
			var tcs []any
			for _, c := range want {
				args, _ := json.Marshal(c[2])
				tcs = append(tcs, map[string]any{"id": c[0], "type": "function", "function": map[string]any{"name": c[1], "arguments": string(args)}})
			}
			msg, finish = map[string]any{"role": "assistant", "content": nil, "tool_calls": tcs}, "tool_calls"
		}
		return map[string]any{"id": "chatcmpl-1", "object": "chat.completion", "created": 1764720000, "model": "gpt-test",
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
			"usage":   map[string]any{"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
	}}
	ts := httptest.NewServer(api)
	defer ts.Close()
	client := openai.NewClient(openaioption.WithBaseURL(ts.URL+"/v1"), openaioption.WithAPIKey("test"), openaioption.WithMaxRetries(0))

	conv, err := n.Conversation(provider.OpenAI, false, 3)
	if err != nil {
		t.Fatal(err)
	}
	tools, err := conv.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	messages := []any{map[string]any{"role": "user", "content": "greet Ada"}}
	request := func() *openai.ChatCompletion {
		raw, _ := json.Marshal(map[string]any{"model": "gpt-test", "messages": messages, "tools": tools})
		var params openai.ChatCompletionNewParams
		if err := json.Unmarshal(raw, &params); err != nil {
			t.Fatalf("the SDK's types refuse the request: %v", err)
		}
		if len(params.Tools) != len(tools) {
			t.Fatalf("the SDK took %d of %d tools", len(params.Tools), len(tools))
		}
		res, err := client.Chat.Completions.New(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	first := request()
	var assistant any
	json.Unmarshal([]byte(first.Choices[0].Message.RawJSON()), &assistant)
	results, err := conv.Results(ctx, []byte(first.RawJSON()))
	if err != nil {
		t.Fatal(err)
	}
	messages = append(append(messages, assistant), results...)
	if got := request().Choices[0].Message.Content; got != "done" {
		t.Errorf("final answer %q", got)
	}
	sent := api.request(t, 1)["messages"].([]any)
	byID := map[string]string{}
	image := ""
	for _, m := range sent {
		mm := m.(map[string]any)
		if mm["role"] == "tool" {
			byID[mm["tool_call_id"].(string)] = mm["content"].(string)
		}
		if parts, ok := mm["content"].([]any); ok && mm["role"] == "user" {
			for _, p := range parts {
				if pm := p.(map[string]any); pm["type"] == "image_url" {
					image = pm["image_url"].(map[string]any)["url"].(string)
				}
			}
		}
	}
	if byID["call_1"] != "Hello, Ada!" || !strings.Contains(byID["call_2"], `"on"`) {
		t.Errorf("tool results %v", byID)
	}
	if !strings.HasPrefix(image, "data:image/png;base64,") {
		t.Errorf("the image went back as %q", image)
	}
}

// The official Anthropic Go SDK, likewise: tool_result blocks, the image as an image block.
func TestAppWithAnthropicGo(t *testing.T) {
	n := appNode(t)
	ctx := context.Background()
	want := calls(t, n, provider.Anthropic)
	api := &fakeAPI{answer: func(_ string, i int) any {
		content := []any{map[string]any{"type": "text", "text": "done"}}
		stop := "end_turn"
		if i == 1 {
			content, stop = nil, "tool_use"
			for _, c := range want {
				content = append(content, map[string]any{"type": "tool_use", "id": c[0], "name": c[1], "input": c[2]})
			}
		}
		return map[string]any{"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test", "content": content,
			"stop_reason": stop, "stop_sequence": nil, "usage": map[string]any{"input_tokens": 1, "output_tokens": 1}}
	}}
	ts := httptest.NewServer(api)
	defer ts.Close()
	client := anthropic.NewClient(anthropicoption.WithBaseURL(ts.URL), anthropicoption.WithAPIKey("test"), anthropicoption.WithMaxRetries(0))

	conv, err := n.Conversation(provider.Anthropic, false, 3)
	if err != nil {
		t.Fatal(err)
	}
	tools, err := conv.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	messages := []any{map[string]any{"role": "user", "content": "greet Ada"}}
	request := func() *anthropic.Message {
		raw, _ := json.Marshal(map[string]any{"model": "claude-test", "max_tokens": 100, "messages": messages, "tools": tools})
		var params anthropic.MessageNewParams
		if err := json.Unmarshal(raw, &params); err != nil {
			t.Fatalf("the SDK's types refuse the request: %v", err)
		}
		if len(params.Tools) != len(tools) {
			t.Fatalf("the SDK took %d of %d tools", len(params.Tools), len(tools))
		}
		res, err := client.Messages.New(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	first := request()
	var content any
	json.Unmarshal([]byte(first.RawJSON()), &content)
	results, err := conv.Results(ctx, []byte(first.RawJSON()))
	if err != nil {
		t.Fatal(err)
	}
	messages = append(append(messages, map[string]any{"role": "assistant", "content": content.(map[string]any)["content"]}), results...)
	if got := request().Content[0].Text; got != "done" {
		t.Errorf("final answer %q", got)
	}
	sent := api.request(t, 1)["messages"].([]any)
	blocks := sent[len(sent)-1].(map[string]any)["content"].([]any)
	found := map[string]bool{}
	for _, b := range blocks {
		bm := b.(map[string]any)
		for _, c := range bm["content"].([]any) {
			cm := c.(map[string]any)
			switch {
			case bm["tool_use_id"] == "call_1" && cm["text"] == "Hello, Ada!":
				found["greet"] = true
			case bm["tool_use_id"] == "call_3" && cm["type"] == "image":
				found["image"] = cm["source"].(map[string]any)["media_type"] == "image/png"
			}
		}
	}
	if !found["greet"] || !found["image"] {
		t.Errorf("tool results %v: %v", found, blocks)
	}
}

// A completion's calls run at once, and a conversation past its turns is refused.
func TestAppRunsCallsTogetherAndLimitsTurns(t *testing.T) {
	n := appNode(t)
	ctx := context.Background()
	d, err := n.Definitions(ctx, provider.OpenAI, false)
	if err != nil {
		t.Fatal(err)
	}
	var cs []provider.Call
	for range 8 {
		cs = append(cs, provider.Call{ID: "s", Name: d.Names.Render("go.sleep"), Arguments: map[string]any{"ms": 500}})
	}
	// Every call holds its bundle for 500 ms; run one after another they would take 4 s,
	// so a 3.5 s bound on the whole run fails only if they do not overlap.
	runCtx, cancel := context.WithTimeout(ctx, 3500*time.Millisecond)
	defer cancel()
	out, err := n.Run(runCtx, provider.OpenAI, cs, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range out {
		if o.Error != nil || o.Text() != "slept 500 ms" {
			t.Fatalf("outcome %+v", o)
		}
	}
	conv, _ := n.Conversation(provider.Anthropic, false, 0)
	msgs, err := conv.Results(ctx, []byte(`{"content":[{"type":"tool_use","id":"x","name":"c_greet","input":{"name":"a"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(msgs)
	if !strings.Contains(string(raw), "Tool call refused") {
		t.Errorf("past the turn limit: %s", raw)
	}
}
