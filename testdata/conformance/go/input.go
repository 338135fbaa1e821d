package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/toolnode/toolnode/sdk-go/bundle"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// The tools and the prompt of the 2026-07-28 input_required scenarios (SEP-2322). Each
// asks through bundle.Input, so under 2025-11-25 the same tools ask by request.

func question(method, params string) mcp.InputRequest {
	return mcp.InputRequest{Method: method, Params: compact(params)}
}

var (
	askName = question(mcp.MethodElicitation, `{"message":"What is your name?",
		"requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}`)
	askCapital = question(mcp.MethodSampling, `{"messages":[{"role":"user",
		"content":{"type":"text","text":"What is the capital of France?"}}],"maxTokens":100}`)
	askRoots = question(mcp.MethodRootsList, `{}`)
)

// field returns a string member of an elicitation answer's content, or of a sampling
// answer's text block.
func field(answer json.RawMessage, name string) string {
	var a struct {
		Content map[string]any `json:"content"`
	}
	_ = json.Unmarshal(answer, &a)
	s, _ := a.Content[name].(string)
	return s
}

func inputTools() []tool {
	ask := func(name string, questions func(*bundle.Call) mcp.InputRequests, answer func(map[string]json.RawMessage) string) tool {
		return tool{mcp.Tool{Name: name, Description: "Asks for input (SEP-2322)", InputSchema: noArgs},
			func(ctx context.Context, c *bundle.Call) (*mcp.CallToolResult, error) {
				answers, err := c.Ask(ctx, questions(c))
				if err != nil {
					return nil, err
				}
				return mcp.TextResult(answer(answers)), nil
			}}
	}
	fixed := func(q mcp.InputRequests) func(*bundle.Call) mcp.InputRequests {
		return func(*bundle.Call) mcp.InputRequests { return q }
	}
	hello := func(a map[string]json.RawMessage) string { return "Hello, " + field(a["user_name"], "name") + "!" }
	return []tool{
		ask("test_input_required_result_elicitation", fixed(mcp.InputRequests{"user_name": askName}), hello),
		ask("test_input_required_result_tampered_state", fixed(mcp.InputRequests{"user_name": askName}), hello),
		ask("test_input_required_result_sampling", fixed(mcp.InputRequests{"capital_question": askCapital}),
			func(a map[string]json.RawMessage) string {
				return "LLM response: " + field(a["capital_question"], "text")
			}),
		ask("test_input_required_result_list_roots", fixed(mcp.InputRequests{"client_roots": askRoots}),
			func(a map[string]json.RawMessage) string { return "Client roots: " + string(a["client_roots"]) }),
		ask("test_input_required_result_request_state", fixed(mcp.InputRequests{"confirm": question(mcp.MethodElicitation,
			`{"message":"Please confirm","requestedSchema":{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}}`)}),
			func(a map[string]json.RawMessage) string { return "state-ok: confirmed " + string(a["confirm"]) }),
		ask("test_input_required_result_multiple_inputs", fixed(mcp.InputRequests{
			"user_name":    askName,
			"greeting":     question(mcp.MethodSampling, `{"messages":[{"role":"user","content":{"type":"text","text":"Generate a greeting"}}],"maxTokens":50}`),
			"client_roots": askRoots,
		}), func(a map[string]json.RawMessage) string {
			return fmt.Sprintf("Got %d answers: %s", len(a), field(a["user_name"], "name"))
		}),
		ask("test_input_required_result_capabilities", func(c *bundle.Call) mcp.InputRequests {
			q := mcp.InputRequests{}
			if c.Capable("elicitation") {
				q["user_name"] = askName
			}
			if c.Capable("sampling") {
				q["capital_question"] = askCapital
			}
			return q
		}, func(a map[string]json.RawMessage) string { return fmt.Sprintf("Got %d answers", len(a)) }),
		// The stateless scenario's probe: what a call asks for must come back as an
		// input_required result, never as a request of its own on the stream.
		ask("test_streaming_elicitation", fixed(mcp.InputRequests{"user_name": askName}), hello),
		ask("test_missing_capability", fixed(mcp.InputRequests{"capital_question": askCapital}),
			func(a map[string]json.RawMessage) string {
				return "LLM response: " + field(a["capital_question"], "text")
			}),
		{mcp.Tool{Name: "test_input_required_result_multi_round", Description: "Asks for input twice (SEP-2322)", InputSchema: noArgs},
			func(ctx context.Context, c *bundle.Call) (*mcp.CallToolResult, error) {
				first, err := c.Ask(ctx, mcp.InputRequests{"step1": question(mcp.MethodElicitation, `{"message":"Step 1: What is your name?",
					"requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}`)})
				if err != nil {
					return nil, err
				}
				second, err := c.Ask(ctx, mcp.InputRequests{"step2": question(mcp.MethodElicitation, `{"message":"Step 2: What is your favorite color?",
					"requestedSchema":{"type":"object","properties":{"color":{"type":"string"}},"required":["color"]}}`)})
				if err != nil {
					return nil, err
				}
				return mcp.TextResult(field(first["step1"], "name") + " likes " + field(second["step2"], "color")), nil
			}},
	}
}

func inputPrompt() prompt {
	return prompt{mcp.Prompt{Name: "test_input_required_result_prompt", Description: "A prompt that asks for input (SEP-2322)"},
		func(ctx context.Context, r *bundle.PromptRequest) (*mcp.GetPromptResult, error) {
			a, err := r.Ask(ctx, mcp.InputRequests{"user_context": question(mcp.MethodElicitation, `{"message":"What context should the prompt use?",
				"requestedSchema":{"type":"object","properties":{"context":{"type":"string"}},"required":["context"]}}`)})
			if err != nil {
				return nil, err
			}
			return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: "user",
				Content: mcp.TextContent("Context: " + field(a["user_context"], "context"))}}}, nil
		}}
}

// fieldBool returns a boolean member of an elicitation answer's content.
func fieldBool(answer json.RawMessage, name string) bool {
	var a struct {
		Content map[string]any `json:"content"`
	}
	_ = json.Unmarshal(answer, &a)
	b, _ := a.Content[name].(bool)
	return b
}
