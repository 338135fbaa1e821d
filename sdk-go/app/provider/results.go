package provider

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Call is one tool call of a model's response: the API's call id ("" when Gemini gives
// none), the function name as the model wrote it, and its arguments, or why they cannot be
// read.
type Call struct {
	ID           string
	Name         string
	Arguments    map[string]any
	BadArguments string
}

// ExecError is toolnode's error shape: Dispatched says whether the call reached the tool,
// so a model knows whether it may have acted.
type ExecError struct {
	Kind       string `json:"kind"`
	Dispatched bool   `json:"dispatched"`
	Message    string `json:"message"`
}

// Image is an image of a result: its MIME type and base64 data.
type Image struct{ MIMEType, Data string }

// Outcome is what one call produced: text and images, the structured content, or an error.
type Outcome struct {
	Call       Call
	Texts      []string
	Images     []Image
	Structured any
	Error      *ExecError
}

// Text is the result as one text: the error as JSON, else the text blocks joined.
func (o *Outcome) Text() string {
	if o.Error != nil {
		return pythonJSON(map[string]any{"error": map[string]any{
			"kind": o.Error.Kind, "dispatched": o.Error.Dispatched, "message": o.Error.Message}})
	}
	return strings.Join(o.Texts, "\n")
}

func argsCall(raw any, name, id string) Call {
	switch v := raw.(type) {
	case map[string]any:
		return Call{ID: id, Name: name, Arguments: v}
	case nil:
		return Call{ID: id, Name: name, Arguments: map[string]any{}}
	case string:
		if v == "" {
			return Call{ID: id, Name: name, Arguments: map[string]any{}}
		}
		parsed, err := DecodeJSON([]byte(v))
		if err != nil {
			return Call{ID: id, Name: name, BadArguments: fmt.Sprintf("the arguments are not JSON (%v)", err)}
		}
		if m, ok := parsed.(map[string]any); ok {
			return Call{ID: id, Name: name, Arguments: m}
		}
	}
	return Call{ID: id, Name: name, BadArguments: "the arguments must be a JSON object"}
}

func str(m map[string]any, keys ...string) string {
	for _, k := range keys {
		if s, ok := m[k].(string); ok {
			return s
		}
	}
	return ""
}

func list(v any) []any { l, _ := v.([]any); return l }

func obj(v any) map[string]any { m, _ := v.(map[string]any); return m }

// CallsOf returns the tool calls of a response of the API f, given as JSON: a whole
// response, or (OpenAI) its message, (Responses) its output items, (Anthropic) its content
// blocks, (Gemini) its candidate's content.
func CallsOf(f string, response []byte) ([]Call, error) {
	data, err := DecodeJSON(response)
	if err != nil {
		return nil, fmt.Errorf("response: %w", err)
	}
	var out []Call
	switch f {
	case OpenAI:
		msg := obj(data)
		if choices := list(msg["choices"]); choices != nil {
			msg = nil
			if len(choices) > 0 {
				msg = obj(obj(choices[0])["message"])
			}
		}
		for _, tc := range list(msg["tool_calls"]) {
			fn := obj(obj(tc)["function"])
			out = append(out, argsCall(fn["arguments"], str(fn, "name"), str(obj(tc), "id")))
		}
	case OpenAIResponses:
		items := list(data)
		if m := obj(data); m != nil {
			items = list(m["output"])
		}
		for _, it := range items {
			if m := obj(it); m["type"] == "function_call" {
				out = append(out, argsCall(m["arguments"], str(m, "name"), str(m, "call_id")))
			}
		}
	case Anthropic:
		blocks := list(data)
		if m := obj(data); m != nil {
			blocks = list(m["content"])
		}
		for _, b := range blocks {
			if m := obj(b); m["type"] == "tool_use" {
				out = append(out, argsCall(m["input"], str(m, "name"), str(m, "id")))
			}
		}
	case Gemini:
		content := data
		if m := obj(data); m != nil {
			if cands := list(m["candidates"]); cands != nil {
				content = nil
				if len(cands) > 0 {
					content = obj(cands[0])["content"]
				}
			}
		}
		parts := list(content)
		if m := obj(content); m != nil {
			parts = list(m["parts"])
		}
		for _, p := range parts {
			pm := obj(p)
			fc := obj(pm["functionCall"])
			if fc == nil {
				fc = obj(pm["function_call"])
			}
			if fc != nil {
				out = append(out, argsCall(fc["args"], str(fc, "name"), str(fc, "id")))
			}
		}
	default:
		return nil, CheckFormat(f)
	}
	return out, nil
}

// OutcomeOf turns a tools/call result (JSON) into an Outcome.
func OutcomeOf(call Call, result []byte) Outcome {
	o := Outcome{Call: call}
	data, err := DecodeJSON(result)
	if err != nil {
		o.Error = &ExecError{Kind: "failed", Dispatched: true, Message: "the result is not JSON: " + err.Error()}
		return o
	}
	res := obj(data)
	for _, b := range list(res["content"]) {
		block := obj(b)
		switch block["type"] {
		case "text":
			o.Texts = append(o.Texts, fmt.Sprint(block["text"]))
		case "image":
			if d, ok := block["data"].(string); ok {
				mime := str(block, "mimeType")
				if mime == "" {
					mime = "image/png"
				}
				o.Images = append(o.Images, Image{mime, d})
			}
		case "resource":
			r := obj(block["resource"])
			if t, ok := r["text"]; ok {
				o.Texts = append(o.Texts, fmt.Sprint(t))
			} else {
				mime := str(r, "mimeType")
				if mime == "" {
					mime = "binary"
				}
				o.Texts = append(o.Texts, fmt.Sprintf("[resource %s (%s), %d bytes]", str(r, "uri"), mime, len(str(r, "blob"))*3/4))
			}
		case "resource_link":
			o.Texts = append(o.Texts, fmt.Sprintf("[resource %s: %s]", str(block, "uri"), str(block, "name")))
		case "audio":
			o.Texts = append(o.Texts, fmt.Sprintf("[audio (%s), %d bytes]", str(block, "mimeType"), len(str(block, "data"))*3/4))
		}
	}
	structured, hasStructured := res["structuredContent"]
	if res["isError"] == true {
		if e := obj(obj(structured)["error"]); e != nil {
			if kind, ok := e["kind"].(string); ok {
				dispatched := true
				if d, ok := e["dispatched"].(bool); ok {
					dispatched = d
				}
				o.Error = &ExecError{Kind: kind, Dispatched: dispatched, Message: fmt.Sprint(e["message"])}
				if e["message"] == nil {
					o.Error.Message = ""
				}
				return o
			}
		}
		msg := strings.Join(o.Texts, "\n")
		if msg == "" {
			msg = "the tool failed"
		}
		o.Error = &ExecError{Kind: "failed", Dispatched: true, Message: msg}
		return o
	}
	if hasStructured && structured != nil {
		o.Structured = structured
		want := pythonJSON(structured)
		mirrored := false
		for _, t := range o.Texts {
			if v, err := DecodeJSON([]byte(t)); err == nil && pythonJSON(v) == want {
				mirrored = true
			}
		}
		if !mirrored {
			o.Texts = append(o.Texts, pythonJSON(structured))
		}
	}
	return o
}

// ErrorOutcome is the Outcome of a call that failed before or around the tool.
func ErrorOutcome(call Call, kind string, dispatched bool, message string) Outcome {
	return Outcome{Call: call, Error: &ExecError{Kind: kind, Dispatched: dispatched, Message: message}}
}

// pythonJSON writes v as Python's json.dumps(v, sort_keys=True) does (", " and ": "
// separators, non-ASCII escaped): the texts both libraries hand a model are the same.
func pythonJSON(v any) string {
	var b strings.Builder
	writePy(&b, v)
	return b.String()
}

func writePy(b *strings.Builder, v any) {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteString(", ")
			}
			writePy(b, k)
			b.WriteString(": ")
			writePy(b, x[k])
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writePy(b, e)
		}
		b.WriteByte(']')
	case string:
		b.WriteByte('"')
		for _, r := range x {
			switch {
			case r == '"':
				b.WriteString(`\"`)
			case r == '\\':
				b.WriteString(`\\`)
			case r == '\n':
				b.WriteString(`\n`)
			case r == '\r':
				b.WriteString(`\r`)
			case r == '\t':
				b.WriteString(`\t`)
			case r < 0x20 || r > 0x7e:
				if r > 0xffff {
					r -= 0x10000
					fmt.Fprintf(b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
				} else {
					fmt.Fprintf(b, `\u%04x`, r)
				}
			default:
				b.WriteRune(r)
			}
		}
		b.WriteByte('"')
	case nil:
		b.WriteString("null")
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	default:
		raw, _ := json.Marshal(x)
		b.Write(raw)
	}
}

func dataURI(img Image) string { return "data:" + img.MIMEType + ";base64," + img.Data }

func imageNote(o *Outcome, where string) string {
	n := len(o.Images)
	s := ""
	if n > 1 {
		s = "s"
	}
	note := fmt.Sprintf("[%d image%s of this result %s]", n, s, where)
	if len(o.Texts) > 0 || o.Error != nil {
		return o.Text() + "\n" + note
	}
	return note
}

var anthropicImages = setOf("image/jpeg", "image/png", "image/gif", "image/webp")

// ResultMessages returns the messages (input items, for Responses) that carry outcomes
// back to the API f. Gemini matches a response to its call by the name the model wrote,
// which it is given back.
func ResultMessages(f string, outcomes []Outcome) ([]any, error) {
	switch f {
	case OpenAI:
		// A tool message holds text only: images follow in one user message, as image_url parts.
		var msgs, pictures []any
		for i := range outcomes {
			o := &outcomes[i]
			text := o.Text()
			if len(o.Images) > 0 {
				text = imageNote(o, "follow in the next message")
				pictures = append(pictures, map[string]any{"type": "text", "text": "Images returned by tool call " + o.Call.ID + ":"})
				for _, img := range o.Images {
					pictures = append(pictures, map[string]any{"type": "image_url", "image_url": map[string]any{"url": dataURI(img)}})
				}
			}
			msgs = append(msgs, map[string]any{"role": "tool", "tool_call_id": o.Call.ID, "content": text})
		}
		if pictures != nil {
			msgs = append(msgs, map[string]any{"role": "user", "content": pictures})
		}
		return msgs, nil
	case OpenAIResponses:
		var items []any
		for i := range outcomes {
			o := &outcomes[i]
			var output any = o.Text()
			if len(o.Images) > 0 {
				parts := []any{}
				if len(o.Texts) > 0 || o.Error != nil {
					parts = append(parts, map[string]any{"type": "input_text", "text": o.Text()})
				}
				for _, img := range o.Images {
					parts = append(parts, map[string]any{"type": "input_image", "image_url": dataURI(img)})
				}
				output = parts
			}
			items = append(items, map[string]any{"type": "function_call_output", "call_id": o.Call.ID, "output": output})
		}
		return items, nil
	case Anthropic:
		var blocks []any
		for i := range outcomes {
			o := &outcomes[i]
			content := []any{}
			if len(o.Texts) > 0 || o.Error != nil || len(o.Images) == 0 {
				text := o.Text()
				if text == "" {
					text = "(no output)"
				}
				content = append(content, map[string]any{"type": "text", "text": text})
			}
			for _, img := range o.Images {
				if anthropicImages[img.MIMEType] {
					content = append(content, map[string]any{"type": "image", "source": map[string]any{
						"type": "base64", "media_type": img.MIMEType, "data": img.Data}})
				} else {
					content = append(content, map[string]any{"type": "text", "text": "[an image of type " + img.MIMEType + ", which the API does not take]"})
				}
			}
			block := map[string]any{"type": "tool_result", "tool_use_id": o.Call.ID, "content": content}
			if o.Error != nil {
				block["is_error"] = true
			}
			blocks = append(blocks, block)
		}
		return []any{map[string]any{"role": "user", "content": blocks}}, nil
	case Gemini:
		var parts []any
		for i := range outcomes {
			o := &outcomes[i]
			var response map[string]any
			switch {
			case o.Error != nil:
				response = map[string]any{"error": map[string]any{"kind": o.Error.Kind, "dispatched": o.Error.Dispatched, "message": o.Error.Message}}
			case o.Structured != nil:
				response = map[string]any{"output": o.Structured}
			default:
				response = map[string]any{"output": strings.Join(o.Texts, "\n")}
			}
			fr := map[string]any{"name": o.Call.Name, "response": response}
			if o.Call.ID != "" {
				fr["id"] = o.Call.ID
			}
			if len(o.Images) > 0 {
				var inline []any
				for _, img := range o.Images {
					inline = append(inline, map[string]any{"inlineData": map[string]any{"mimeType": img.MIMEType, "data": img.Data}})
				}
				fr["parts"] = inline
			}
			parts = append(parts, map[string]any{"functionResponse": fr})
		}
		return []any{map[string]any{"role": "user", "parts": parts}}, nil
	}
	return nil, CheckFormat(f)
}
