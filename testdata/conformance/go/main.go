// Command conformance is a bundle offering exactly what the official MCP conformance suite
// (npm @modelcontextprotocol/conformance) asks of a server, written with the Go SDK: run
// the suite against the node serving this bundle to check the SDK and the node together.
package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/toolnode/toolnode/sdk-go/bundle"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s, err := newServer(ctx)
	if err == nil {
		err = s.ServeStdio(ctx)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "conformance:", err)
		os.Exit(1)
	}
}

// watchedURI is the resource the suite subscribes to; it changes every few seconds.
const watchedURI = "test://watched-resource"

func newServer(ctx context.Context) (*bundle.Server, error) {
	s := bundle.NewServer(bundle.Options{Name: "toolnode-conformance", Version: "0.1.0"})
	var errs []error
	for _, t := range append(append(tools(), inputTools()...), taskTools()...) {
		errs = append(errs, s.AddTool(t.tool, t.handler))
	}
	for _, r := range resources() {
		errs = append(errs, s.AddResource(r.resource, r.handler))
	}
	errs = append(errs,
		s.AddResourceTemplate(mcp.ResourceTemplate{
			URITemplate: "test://template/{id}/data",
			Name:        "template",
			Title:       "Resource Template",
			Description: "A resource template with parameter substitution",
			MimeType:    "application/json",
		}, templateData),
		s.CompleteTemplateVariable("test://template/{id}/data", "id", bundle.CompleteFrom("1", "12", "123")))
	for _, p := range append(prompts(), inputPrompt()) {
		errs = append(errs, s.AddPrompt(p.prompt, p.handler))
	}
	errs = append(errs, s.CompletePromptArgument("test_prompt_with_arguments", "arg1",
		bundle.CompleteFrom("paris", "park", "party", "test", "testValue1")))
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	go watch(ctx, s)
	return s, nil
}

// watch changes the watched resource every 3 seconds, telling the clients that subscribed.
func watch(ctx context.Context, s *bundle.Server) {
	t := time.NewTicker(3 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.ResourceUpdated(watchedURI)
		}
	}
}

type tool struct {
	tool    mcp.Tool
	handler bundle.Handler
}

// noArgs is the input schema of the tools that take no arguments.
var noArgs = json.RawMessage(`{"type":"object","properties":{}}`)

func tools() []tool {
	text := func(s string) bundle.Handler {
		return func(context.Context, *bundle.Call) (*mcp.CallToolResult, error) { return mcp.TextResult(s), nil }
	}
	content := func(c ...mcp.Content) bundle.Handler {
		return func(context.Context, *bundle.Call) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: c}, nil
		}
	}
	return []tool{
		{mcp.Tool{Name: "test_simple_text", Description: "Tests simple text content response", InputSchema: noArgs},
			text("This is a simple text response for testing.")},
		{mcp.Tool{Name: "test_image_content", Description: "Tests image content response", InputSchema: noArgs},
			content(mcp.ImageContent(redPixel, "image/png"))},
		{mcp.Tool{Name: "test_audio_content", Description: "Tests audio content response", InputSchema: noArgs},
			content(mcp.AudioContent(silence, "audio/wav"))},
		{mcp.Tool{Name: "test_embedded_resource", Description: "Tests embedded resource content response", InputSchema: noArgs},
			content(mcp.EmbeddedResource(mcp.TextContents("test://embedded-resource", "text/plain", "This is an embedded resource content.")))},
		{mcp.Tool{Name: "test_multiple_content_types", Description: "Tests response with multiple content types (text, image, resource)", InputSchema: noArgs},
			content(
				mcp.TextContent("Multiple content types test:"),
				mcp.ImageContent(redPixel, "image/png"),
				mcp.EmbeddedResource(mcp.TextContents("test://mixed-content-resource", "application/json", `{"test":"data","value":123}`)))},
		{mcp.Tool{Name: "test_tool_with_logging", Description: "Tests tool that emits log messages during execution", InputSchema: noArgs},
			withLogging},
		// The stateless scenario's probe: log messages of a request that names no log
		// level must not reach the client.
		{mcp.Tool{Name: "test_logging_tool", Description: "Emits log messages during execution", InputSchema: noArgs},
			withLogging},
		{mcp.Tool{Name: "test_tool_with_progress", Description: "Tests tool that reports progress notifications", InputSchema: noArgs},
			withProgress},
		{mcp.Tool{Name: "test_error_handling", Description: "Tests error response handling", InputSchema: noArgs},
			func(context.Context, *bundle.Call) (*mcp.CallToolResult, error) {
				//lint:ignore ST1005 the wording of the suite's reference server
				return nil, errors.New("This tool intentionally returns an error for testing")
			}},
		{mcp.Tool{
			Name:        "test_sampling",
			Description: "Tests server-initiated sampling (LLM completion request)",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"prompt":{"type":"string","description":"The prompt to send to the LLM"}},"required":["prompt"]}`),
		}, sampling},
		{mcp.Tool{
			Name:        "test_elicitation",
			Description: "Tests server-initiated elicitation (user input request)",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string","description":"The message to show the user"}},"required":["message"]}`),
		}, func(ctx context.Context, c *bundle.Call) (*mcp.CallToolResult, error) {
			var args struct{ Message string }
			if err := c.Bind(&args); err != nil {
				return nil, err
			}
			return elicit(ctx, c, "User response", args.Message, `{"type":"object","properties":{
				"username":{"type":"string","description":"User's response"},
				"email":{"type":"string","description":"User's email address"}},
				"required":["username","email"]}`)
		}},
		{mcp.Tool{Name: "test_elicitation_sep1034_defaults", Description: "Tests elicitation with default values per SEP-1034", InputSchema: noArgs},
			func(ctx context.Context, c *bundle.Call) (*mcp.CallToolResult, error) {
				return elicit(ctx, c, "Elicitation completed", "Please review and update the form fields with defaults", `{"type":"object","properties":{
					"name":{"type":"string","description":"User name","default":"John Doe"},
					"age":{"type":"integer","description":"User age","default":30},
					"score":{"type":"number","description":"User score","default":95.5},
					"status":{"type":"string","description":"User status","enum":["active","inactive","pending"],"default":"active"},
					"verified":{"type":"boolean","description":"Verification status","default":true}},
					"required":[]}`)
			}},
		{mcp.Tool{Name: "test_elicitation_sep1330_enums", Description: "Tests elicitation with enum schema improvements per SEP-1330", InputSchema: noArgs},
			func(ctx context.Context, c *bundle.Call) (*mcp.CallToolResult, error) {
				return elicit(ctx, c, "Elicitation completed", "Please select options from the enum fields", `{"type":"object","properties":{
					"untitledSingle":{"type":"string","description":"Select one option","enum":["option1","option2","option3"]},
					"titledSingle":{"type":"string","description":"Select one option with titles","oneOf":[
						{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]},
					"legacyEnum":{"type":"string","description":"Select one option (legacy)","enum":["opt1","opt2","opt3"],
						"enumNames":["Option One","Option Two","Option Three"]},
					"untitledMulti":{"type":"array","description":"Select multiple options","minItems":1,"maxItems":3,
						"items":{"type":"string","enum":["option1","option2","option3"]}},
					"titledMulti":{"type":"array","description":"Select multiple options with titles","minItems":1,"maxItems":3,
						"items":{"anyOf":[{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"},{"const":"value3","title":"Third Choice"}]}}},
					"required":[]}`)
			}},
		{mcp.Tool{
			Name:        "json_schema_2020_12_tool",
			Description: "Tool with JSON Schema 2020-12 features",
			InputSchema: json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",
				"$defs":{"address":{"type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},
				"properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"}},
				"additionalProperties":false}`),
		}, func(_ context.Context, c *bundle.Call) (*mcp.CallToolResult, error) {
			return mcp.TextResult("JSON Schema 2020-12 tool called with: " + string(c.Arguments)), nil
		}},
		{mcp.Tool{
			Name:        "test_reconnection",
			Description: "Tests SSE stream disconnection and client reconnection (SEP-1699): answers after a pause, during which the server may close the stream",
			InputSchema: noArgs,
		}, func(ctx context.Context, _ *bundle.Call) (*mcp.CallToolResult, error) {
			if err := pause(ctx, 100*time.Millisecond); err != nil {
				return nil, err
			}
			return mcp.TextResult("Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure."), nil
		}},
	}
}

func withLogging(ctx context.Context, c *bundle.Call) (*mcp.CallToolResult, error) {
	for i, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
		if i > 0 {
			if err := pause(ctx, 50*time.Millisecond); err != nil {
				return nil, err
			}
		}
		if err := c.Log("info", msg); err != nil {
			return nil, err
		}
	}
	return mcp.TextResult("Tool with logging executed successfully"), nil
}

func withProgress(ctx context.Context, c *bundle.Call) (*mcp.CallToolResult, error) {
	for i, done := range []float64{0, 50, 100} {
		if i > 0 {
			if err := pause(ctx, 50*time.Millisecond); err != nil {
				return nil, err
			}
		}
		if err := c.Progress(done, 100, fmt.Sprintf("Completed step %g of 100", done)); err != nil {
			return nil, err
		}
	}
	return mcp.TextResult("Tool with progress executed successfully"), nil
}

func sampling(ctx context.Context, c *bundle.Call) (*mcp.CallToolResult, error) {
	var args struct{ Prompt string }
	if err := c.Bind(&args); err != nil {
		return nil, err
	}
	res, err := c.CreateMessage(ctx, mcp.CreateMessageParams{
		Messages:  []mcp.SamplingMessage{mcp.UserText(args.Prompt)},
		MaxTokens: 100,
	})
	if err != nil {
		return nil, fmt.Errorf("sampling failed: %w", err)
	}
	return mcp.TextResult("LLM response: " + res.Text()), nil
}

// elicit asks the user for what schema describes and reports their answer after label.
func elicit(ctx context.Context, c *bundle.Call, label, message, schema string) (*mcp.CallToolResult, error) {
	res, err := c.Elicit(ctx, mcp.ElicitParams{Message: message, RequestedSchema: compact(schema)})
	if err != nil {
		return nil, fmt.Errorf("elicitation failed: %w", err)
	}
	content := res.Content
	if len(content) == 0 {
		content = json.RawMessage(`{}`)
	}
	return mcp.TextResult(fmt.Sprintf("%s: action=%s, content=%s", label, res.Action, content)), nil
}

type resource struct {
	resource mcp.Resource
	handler  bundle.ResourceHandler
}

func resources() []resource {
	fixed := func(rc mcp.ResourceContents) bundle.ResourceHandler {
		return func(context.Context, *bundle.ResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{rc}, nil
		}
	}
	return []resource{
		{mcp.Resource{URI: "test://static-text", Name: "static-text", Title: "Static Text Resource",
			Description: "A static text resource for testing", MimeType: "text/plain"},
			fixed(mcp.TextContents("test://static-text", "text/plain", "This is the content of the static text resource."))},
		{mcp.Resource{URI: "test://static-binary", Name: "static-binary", Title: "Static Binary Resource",
			Description: "A static binary resource (image) for testing", MimeType: "image/png"},
			fixed(mcp.BlobContents("test://static-binary", "image/png", redPixel))},
		{mcp.Resource{URI: watchedURI, Name: "watched-resource", Title: "Watched Resource",
			Description: "A resource that is updated every 3 seconds; subscribe to hear of it", MimeType: "text/plain"},
			func(context.Context, *bundle.ResourceRequest) ([]mcp.ResourceContents, error) {
				return []mcp.ResourceContents{mcp.TextContents(watchedURI, "text/plain",
					"Watched resource content at "+time.Now().UTC().Format(time.RFC3339))}, nil
			}},
	}
}

func templateData(_ context.Context, r *bundle.ResourceRequest) ([]mcp.ResourceContents, error) {
	id := r.Vars["id"]
	b, err := json.Marshal(map[string]any{"id": id, "templateTest": true, "data": "Data for ID: " + id})
	if err != nil {
		return nil, err
	}
	return []mcp.ResourceContents{mcp.TextContents(r.URI, "application/json", string(b))}, nil
}

type prompt struct {
	prompt  mcp.Prompt
	handler bundle.PromptHandler
}

func prompts() []prompt {
	messages := func(m ...mcp.PromptMessage) *mcp.GetPromptResult { return &mcp.GetPromptResult{Messages: m} }
	user := func(c mcp.Content) mcp.PromptMessage { return mcp.PromptMessage{Role: "user", Content: c} }
	return []prompt{
		{mcp.Prompt{Name: "test_simple_prompt", Title: "Simple Test Prompt", Description: "A simple prompt without arguments"},
			func(context.Context, *bundle.PromptRequest) (*mcp.GetPromptResult, error) {
				return messages(user(mcp.TextContent("This is a simple prompt for testing."))), nil
			}},
		{mcp.Prompt{Name: "test_prompt_with_arguments", Title: "Prompt With Arguments", Description: "A prompt with required arguments",
			Arguments: []mcp.PromptArgument{
				{Name: "arg1", Description: "First test argument", Required: true},
				{Name: "arg2", Description: "Second test argument", Required: true},
			}},
			func(_ context.Context, r *bundle.PromptRequest) (*mcp.GetPromptResult, error) {
				return messages(user(mcp.TextContent(fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'",
					r.Arguments["arg1"], r.Arguments["arg2"])))), nil
			}},
		{mcp.Prompt{Name: "test_prompt_with_embedded_resource", Title: "Prompt With Embedded Resource",
			Description: "A prompt that includes an embedded resource",
			Arguments:   []mcp.PromptArgument{{Name: "resourceUri", Description: "URI of the resource to embed", Required: true}}},
			func(_ context.Context, r *bundle.PromptRequest) (*mcp.GetPromptResult, error) {
				return messages(
					user(mcp.EmbeddedResource(mcp.TextContents(r.Arguments["resourceUri"], "text/plain", "Embedded resource content for testing."))),
					user(mcp.TextContent("Please process the embedded resource above."))), nil
			}},
		{mcp.Prompt{Name: "test_prompt_with_image", Title: "Prompt With Image", Description: "A prompt that includes image content"},
			func(context.Context, *bundle.PromptRequest) (*mcp.GetPromptResult, error) {
				return messages(
					user(mcp.ImageContent(redPixel, "image/png")),
					user(mcp.TextContent("Please analyze the image above."))), nil
			}},
	}
}

func pause(ctx context.Context, d time.Duration) error {
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// compact removes the layout of a JSON literal written over several lines.
func compact(s string) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		panic(err)
	}
	return b.Bytes()
}

// redPixel is a 1x1 red PNG.
var redPixel = func() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 1, 1))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		panic(err)
	}
	return b.Bytes()
}()

// silence is a WAV file holding one silent sample: 8 kHz, mono, 16 bits.
var silence = func() []byte {
	const rate, bits, channels, samples = 8000, 16, 1, 1
	dataLen := samples * channels * bits / 8
	var b bytes.Buffer
	le := func(v any) { _ = binary.Write(&b, binary.LittleEndian, v) }
	b.WriteString("RIFF")
	le(uint32(36 + dataLen))
	b.WriteString("WAVEfmt ")
	le(uint32(16))
	le(uint16(1)) // PCM
	le(uint16(channels))
	le(uint32(rate))
	le(uint32(rate * channels * bits / 8))
	le(uint16(channels * bits / 8))
	le(uint16(bits))
	b.WriteString("data")
	le(uint32(dataLen))
	b.Write(make([]byte, dataLen))
	return b.Bytes()
}()
