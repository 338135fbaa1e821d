package examples_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// vector is one case of testdata/vectors; README.md there describes the format.
type vector struct {
	Description string `json:"description"`
	Steps       []step `json:"steps"`
}

type step struct {
	Send       json.RawMessage `json:"send"`
	SendRaw    *string         `json:"sendRaw"`
	SendBase64 *string         `json:"sendBase64"`
	Expect     any             `json:"expect"`
	TimeoutMS  int             `json:"timeoutMs"`
	ExpectNone map[string]any  `json:"expectNone"`
	ForMS      int             `json:"forMs"`
	Collect    map[string]any  `json:"collect"`
	Until      map[string]any  `json:"until"`
	Min        int             `json:"min"`
	Max        *int            `json:"max"`
	Each       any             `json:"each"`
}

const defaultTimeout = 5 * time.Second

// slowdown is how many times longer than the vectors say to wait for an answer:
// VECTORS_SLOWDOWN, for bundles run under valgrind on a busy machine; 1 by default.
func slowdown() time.Duration {
	if n, err := strconv.Atoi(os.Getenv("VECTORS_SLOWDOWN")); err == nil && n > 1 {
		return time.Duration(n)
	}
	return 1
}

func readVector(t *testing.T, file string) *vector {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	var v vector
	if err := d.Decode(&v); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	for i, s := range v.Steps {
		actions := 0
		for _, set := range []bool{s.Send != nil, s.SendRaw != nil, s.SendBase64 != nil, s.Expect != nil, s.ExpectNone != nil, s.Collect != nil} {
			if set {
				actions++
			}
		}
		if actions != 1 {
			t.Fatalf("%s: step %d: want exactly one of send, sendRaw, sendBase64, expect, expectNone, collect", file, i+1)
		}
	}
	return &v
}

func (v *vector) run(t *testing.T, p *bundleProc) {
	saved := map[string]any{} // by the $save matchers of earlier steps
	for i, s := range v.Steps {
		at := fmt.Sprintf("step %d", i+1)
		switch {
		case s.Send != nil:
			var msg any
			if err := json.Unmarshal(s.Send, &msg); err != nil {
				t.Fatalf("%s: %v", at, err)
			}
			line, err := json.Marshal(fill(msg, saved))
			if err != nil {
				t.Fatalf("%s: %v", at, err)
			}
			p.send(line)
		case s.SendRaw != nil:
			p.send([]byte(*s.SendRaw))
		case s.SendBase64 != nil:
			b, err := base64.StdEncoding.DecodeString(*s.SendBase64)
			if err != nil {
				t.Fatalf("%s: %v", at, err)
			}
			p.send(b)
		case s.Expect != nil:
			want, _ := s.Expect.(map[string]any)
			sel := selectorOf(want)
			timeout := defaultTimeout
			if s.TimeoutMS > 0 {
				timeout = time.Duration(s.TimeoutMS) * time.Millisecond
			}
			timeout *= slowdown()
			got, ok := p.take(sel, timeout)
			if !ok && p.ended {
				t.Fatalf("%s: the bundle closed its stdout before sending a message with %v; if it did not start, %s", at, sel, p.hint)
			}
			if !ok {
				t.Fatalf("%s: no message with %v within %v (unread: %v)", at, sel, timeout, p.inbox)
			}
			if d := cmp.Diff(resolve(want, got), got); d != "" {
				t.Errorf("%s: (-want +got)\n%s", at, d)
			}
			save(want, got, saved)
		case s.ExpectNone != nil:
			if got, ok := p.take(s.ExpectNone, time.Duration(s.ForMS)*time.Millisecond); ok {
				t.Errorf("%s: got %v, want no message with %v", at, got, s.ExpectNone)
			}
		case s.Collect != nil:
			got, ok := p.collect(s.Collect, s.Until, defaultTimeout*slowdown())
			if !ok {
				t.Fatalf("%s: no message with %v within %v", at, s.Until, defaultTimeout*slowdown())
			}
			if len(got) < s.Min || s.Max != nil && len(got) > *s.Max {
				t.Errorf("%s: got %d messages with %v before the one with %v, want %d to %v: %v", at, len(got), s.Collect, s.Until, s.Min, maxString(s.Max), got)
			}
			for _, m := range got {
				if s.Each == nil {
					break
				}
				if d := cmp.Diff(resolve(s.Each, m), m); d != "" {
					t.Errorf("%s: (-want +got)\n%s", at, d)
				}
			}
		}
	}
	p.finish()
}

func maxString(n *int) string {
	if n == nil {
		return "any number"
	}
	return fmt.Sprint(*n)
}

// selectorOf picks out what identifies the message a shape expects: its id, or its method
// when it has no id or its id is a matcher (a request of the bundle, whose id it chooses).
func selectorOf(shape map[string]any) map[string]any {
	if id, ok := shape["id"]; ok {
		if m, isObject := id.(map[string]any); !isObject || len(m) == 0 {
			return map[string]any{"id": id}
		}
	}
	return map[string]any{"method": shape["method"]}
}

// save records in saved what got holds where want has a {"$save": name} matcher.
func save(want, got any, saved map[string]any) {
	switch w := want.(type) {
	case map[string]any:
		if op, arg, ok := matcher(w); ok {
			if name, isName := arg.(string); op == "$save" && isName {
				saved[name] = got
			}
			return
		}
		if g, ok := got.(map[string]any); ok {
			for k, wv := range w {
				save(wv, g[k], saved)
			}
		}
	case []any:
		if g, ok := got.([]any); ok {
			for i := range min(len(w), len(g)) {
				save(w[i], g[i], saved)
			}
		}
	}
}

// fill returns msg with every {"$saved": name} replaced by what an earlier step saved.
func fill(msg any, saved map[string]any) any {
	switch m := msg.(type) {
	case map[string]any:
		if name, ok := m["$saved"].(string); ok && len(m) == 1 {
			return saved[name]
		}
		out := map[string]any{}
		for k, v := range m {
			out[k] = fill(v, saved)
		}
		return out
	case []any:
		out := make([]any, len(m))
		for i, v := range m {
			out[i] = fill(v, saved)
		}
		return out
	}
	return msg
}

func selects(sel, m map[string]any) bool {
	if id, ok := sel["id"]; ok {
		got, isAnswer := m["id"]
		return isAnswer && m["method"] == nil && cmp.Equal(got, id)
	}
	return m["method"] == sel["method"]
}

// take returns the first message with sel that no step took yet, waiting up to timeout.
func (p *bundleProc) take(sel map[string]any, timeout time.Duration) (map[string]any, bool) {
	if i := slices.IndexFunc(p.inbox, func(m map[string]any) bool { return selects(sel, m) }); i >= 0 {
		m := p.inbox[i]
		p.inbox = slices.Delete(p.inbox, i, i+1)
		return m, true
	}
	deadline := time.Now().Add(timeout)
	for {
		m, ok := p.recv(deadline)
		if !ok || selects(sel, m) {
			return m, ok
		}
		p.inbox = append(p.inbox, m)
	}
}

// collect takes the messages with sel that came before the first message with until, which
// it leaves for a later step. It reports false when no message with until came in time.
func (p *bundleProc) collect(sel, until map[string]any, timeout time.Duration) ([]map[string]any, bool) {
	var taken, kept []map[string]any
	// sort files m under taken or kept and reports whether it is the one with until.
	sort := func(m map[string]any) bool {
		switch {
		case selects(until, m):
			return true
		case selects(sel, m):
			taken = append(taken, m)
		default:
			kept = append(kept, m)
		}
		return false
	}
	for i, m := range p.inbox {
		if sort(m) {
			p.inbox = append(kept, p.inbox[i:]...)
			return taken, true
		}
	}
	deadline := time.Now().Add(timeout)
	for {
		m, ok := p.recv(deadline)
		if !ok {
			p.inbox = kept
			return taken, false
		}
		if sort(m) {
			p.inbox = append(kept, m)
			return taken, true
		}
	}
}

// resolve returns want with every part that got satisfies replaced by got's own value, so
// that cmp.Diff(resolve(want, got), got) shows only what really differs.
func resolve(want, got any) any {
	switch w := want.(type) {
	case map[string]any:
		if op, arg, ok := matcher(w); ok {
			if matches(op, arg, got) {
				return got
			}
			return want
		}
		g, ok := got.(map[string]any)
		if !ok {
			return want
		}
		out := map[string]any{}
		for k, wv := range w {
			if gv, ok := g[k]; ok {
				out[k] = resolve(wv, gv)
			} else if k != "..." {
				out[k] = wv
			}
		}
		if w["..."] == true {
			for k, gv := range g {
				if _, ok := w[k]; !ok {
					out[k] = gv
				}
			}
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok {
			return want
		}
		out := slices.Clone(w)
		for i := range min(len(w), len(g)) {
			out[i] = resolve(w[i], g[i])
		}
		return out
	}
	return want
}

// matcher reports whether a shape object is a matcher such as {"$type": "string"}.
func matcher(w map[string]any) (op string, arg any, ok bool) {
	for k, v := range w {
		if len(w) == 1 && strings.HasPrefix(k, "$") {
			return k, v, true
		}
	}
	return "", nil, false
}

func matches(op string, arg, got any) bool {
	s, isString := got.(string)
	pattern, _ := arg.(string)
	switch op {
	case "$save":
		return true
	case "$type":
		return jsonType(got) == arg || arg == "number" && jsonType(got) == "integer"
	case "$contains":
		return isString && strings.Contains(s, pattern)
	case "$regex":
		ok, err := regexp.MatchString(pattern, s)
		return isString && err == nil && ok
	case "$json":
		var v any
		return isString && json.Unmarshal([]byte(s), &v) == nil && cmp.Equal(resolve(arg, v), v)
	}
	return false
}

func jsonType(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case float64:
		if v == math.Trunc(v) {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}
