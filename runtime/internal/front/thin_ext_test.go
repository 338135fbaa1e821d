package front_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/toolnode/toolnode/runtime/internal/front"
	"github.com/toolnode/toolnode/runtime/internal/front/stdiofront"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
)

// exchange sends lines to a stdio front, as a client does (the rest only once initialize,
// when it is the first, has its answer), and returns the answers by id.
func exchange(t *testing.T, srv *front.Server, lines ...string) map[string]string {
	t.Helper()
	inR, inW := io.Pipe()
	r, w := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- stdiofront.Serve(context.Background(), srv, inR, w)
		w.Close()
	}()
	answers := map[string]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	read := func() bool {
		if !sc.Scan() {
			return false
		}
		var m struct{ ID json.RawMessage }
		if json.Unmarshal(sc.Bytes(), &m) == nil && m.ID != nil {
			answers[string(m.ID)] = sc.Text()
		}
		return true
	}
	if len(lines) > 0 && strings.Contains(lines[0], `"method":"initialize"`) {
		io.WriteString(inW, lines[0]+"\n")
		read()
		lines = lines[1:]
	}
	go func() {
		io.WriteString(inW, strings.Join(lines, "\n")+"\n")
		inW.Close()
	}()
	for read() {
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	return answers
}

type listAnswer struct {
	Result struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
		NextCursor string `json:"nextCursor"`
	} `json:"result"`
}

func names(t *testing.T, answer string) ([]string, string) {
	t.Helper()
	var a listAnswer
	if err := json.Unmarshal([]byte(answer), &a); err != nil {
		t.Fatalf("%v: %s", err, answer)
	}
	var out []string
	for _, tl := range a.Result.Tools {
		out = append(out, tl.Name)
	}
	return out, a.Result.NextCursor
}

// Under --names auto, a client that does not name itself gets every tool in one page, in
// names the model APIs take; Claude Desktop gets pages in the same names; Claude Code
// pages and canonical names; all call by either form.
func TestThinClientSeesEveryToolAndCallsByEitherName(t *testing.T) {
	srv := serveMemory(t, front.Options{PageSize: 1, Names: front.NamesAuto}, testkit.Memory{Name: "a", Session: true})
	all := srv.Node().Catalog().Len()
	if all < 3 {
		t.Fatalf("the catalog holds %d tools; the test needs more than a page", all)
	}
	session := func(client string) []string {
		return []string{
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"` + client + `","version":"1"}}}`,
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
			`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"a.echo","arguments":{"text":"dotted"}}}`,
			`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"a_echo","arguments":{"text":"underscored"}}}`,
		}
	}
	stateless := func(client string) []string {
		meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"` + client + `","version":"1"}}`
		return []string{
			`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{` + meta + `}}`,
			`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"a.echo","arguments":{"text":"dotted"},` + meta + `}}`,
			`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"a_echo","arguments":{"text":"underscored"},` + meta + `}}`,
		}
	}
	for _, era := range []struct {
		name  string
		lines func(string) []string
	}{{"session", session}, {"stateless", stateless}} {
		t.Run(era.name, func(t *testing.T) {
			thin := exchange(t, srv, era.lines("mcp")...)
			got, next := names(t, thin["2"])
			if len(got) != all || next != "" {
				t.Errorf("the thin client got %d of %d tools, next cursor %q", len(got), all, next)
			}
			for _, name := range got {
				if strings.Contains(name, ".") {
					t.Errorf("the thin client got %q, which the model APIs refuse", name)
				}
			}
			desktop := exchange(t, srv, era.lines("claude-ai")...)
			got, next = names(t, desktop["2"])
			if len(got) != 1 || next == "" || strings.Contains(got[0], ".") {
				t.Errorf("Claude Desktop got %v, next cursor %q; want one underscore name and a cursor", got, next)
			}
			code := exchange(t, srv, era.lines("claude-code")...)
			got, next = names(t, code["2"])
			if len(got) != 1 || next == "" || !strings.Contains(got[0], ".") {
				t.Errorf("Claude Code got %v, next cursor %q; want one canonical name and a cursor", got, next)
			}
			for who, answers := range map[string]map[string]string{"thin": thin, "claude-ai": desktop, "claude-code": code} {
				for id, text := range map[string]string{"3": "a:dotted", "4": "a:underscored"} {
					if !strings.Contains(answers[id], text) {
						t.Errorf("%s client, call %s: %s; want %q", who, id, answers[id], text)
					}
				}
			}
		})
	}
}
