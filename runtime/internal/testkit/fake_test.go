package testkit

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// fakePeer is a fake bundle served in this process on pipes, as a test of the fake itself.
type fakePeer struct {
	in    io.WriteCloser
	lines chan string
}

// startFake serves a fake bundle configured by env (FAKE_* variables) on pipes.
func startFake(t *testing.T, env map[string]string) *fakePeer {
	t.Helper()
	for k, v := range env {
		t.Setenv(k, v)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer outW.Close()
		serveFake(inR, outW)
	}()
	p := &fakePeer{in: inW, lines: make(chan string, 256)}
	go func() {
		defer close(p.lines)
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		inW.Close()
		<-done
	})
	return p
}

func (p *fakePeer) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

// next is the next line the fake writes.
func (p *fakePeer) next(t *testing.T) string {
	t.Helper()
	select {
	case line, ok := <-p.lines:
		if !ok {
			t.Fatal("the fake bundle stopped writing")
		}
		return line
	case <-time.After(10 * time.Second):
		t.Fatal("the fake bundle wrote nothing for 10s")
	}
	return ""
}

// call sends a request and returns its answer, and the lines that came before it.
func (p *fakePeer) call(t *testing.T, id int, method, params string) (answer string, before []string) {
	t.Helper()
	p.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params))
	for {
		line := p.next(t)
		var msg struct{ ID json.RawMessage }
		json.Unmarshal([]byte(line), &msg)
		if string(msg.ID) == fmt.Sprint(id) {
			return line, before
		}
		before = append(before, line)
	}
}

// Each named behaviour of the fake bundle is listed in the table's order and answers its
// call as its name says, with what it sends before its answer.
func TestFakeBundleBehavioursAnswerAsNamed(t *testing.T) {
	p := startFake(t, map[string]string{"FAKE_NAME": "kit", "FAKE_SECRET_CHECK": "FAKE_NAME", "FAKE_ANYOF": "1"})
	if got, _ := p.call(t, 1, "initialize", `{}`); !strings.Contains(got, `"name":"fake-kit"`) {
		t.Fatalf("initialize: %s", got)
	}
	list, _ := p.call(t, 2, "tools/list", `{}`)
	var tools struct {
		Result struct{ Tools []struct{ Name string } }
	}
	json.Unmarshal([]byte(list), &tools)
	if len(tools.Result.Tools) != len(fakeTools) {
		t.Fatalf("tools/list gives %d tools, the table has %d: %s", len(tools.Result.Tools), len(fakeTools), list)
	}
	for i, tool := range tools.Result.Tools {
		if tool.Name != fakeTools[i].name {
			t.Errorf("tool %d is %q, the table's is %q", i, tool.Name, fakeTools[i].name)
		}
	}
	for i, tc := range []struct{ tool, args, answer, before string }{
		{"echo", `{"text":"hi"}`, `"text":"kit:hi"`, ""},
		{"mirror", `{"text":"hi","region":"eu"}`, `"text":"kit:hi"`, ""},
		{"big", `{"bytes":3}`, `"text":"xxx"`, ""},
		{"late", `{"ms":1,"bytes":2}`, `"text":"xx"`, ""},
		{"env", `{}`, `"text":"true"`, ""},
		{"node-lamp.on", `{}`, `"text":"lamp on by kit"`, ""},
		{"either", `{"b":1}`, `"text":"kit: either"`, ""},
		{"job", `{"ms":1}`, `"text":"kit: job done without a task"`, ""},
		{"talk", `{"text":"t"}`, `"text":"kit:t"`, `"data":"t"`},
		{"chatty", `{"tag":"c"}`, `"text":"done c"`, `"data":"c"`},
		{"flood", `{"n":2,"bytes":3}`, `flooded from`, `"data":"fff"`},
		{"hold", `{"ms":1}`, `"text":"held"`, `notifications/message`},
		{"shout", `{"ms":1}`, `"text":"shout done"`, `"data":"shouted"`},
		{"spoof", `{"token":"tn-x"}`, `"text":"spoofed"`, `"progressToken":"tn-x"`},
		{"sleep", `{"ms":1}`, `"text":"slept in`, ""},
		{"ticker", `{"ms":2,"every":1}`, `"text":"`, `notifications/progress`},
		{"bad name!", `{}`, `unknown tool bad name!`, ""},
		{"nowhere", `{}`, `unknown tool nowhere`, ""},
	} {
		answer, before := p.call(t, 10+i, "tools/call", fmt.Sprintf(`{"name":%q,"arguments":%s}`, tc.tool, tc.args))
		if !strings.Contains(answer, tc.answer) {
			t.Errorf("%s answered %s, want it to hold %s", tc.tool, answer, tc.answer)
		}
		if tc.before != "" && !strings.Contains(strings.Join(before, "\n"), tc.before) {
			t.Errorf("%s sent %q before its answer, want %s", tc.tool, before, tc.before)
		}
	}
	// nullerr answers with a null id, which no call waits for.
	p.send(t, `{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"nullerr"}}`)
	if got := p.next(t); !strings.Contains(got, `"id":null`) || !strings.Contains(got, "-32700") {
		t.Errorf("nullerr answered %s", got)
	}
}

// In the raw mode the fake answers the n-th line it reads with the n-th line of its
// script, the request's id put in, and nothing for an empty one or past the script's end.
func TestFakeBundleRawModePlaysItsScript(t *testing.T) {
	script := []string{`{"jsonrpc":"2.0","id":$ID,"result":{}}` + "\nnot json", "", `{"id":$ID,"oops":true}`}
	raw, _ := json.Marshal(script)
	p := startFake(t, map[string]string{"FAKE_RAW": string(raw)})
	p.send(t, `{"jsonrpc":"2.0","id":7,"method":"initialize"}`)
	if got := p.next(t); got != `{"jsonrpc":"2.0","id":7,"result":{}}` {
		t.Errorf("first answer %s", got)
	}
	if got := p.next(t); got != "not json" {
		t.Errorf("second line of the first answer %s", got)
	}
	p.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	p.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if got := p.next(t); got != `{"id":null,"oops":true}` {
		t.Errorf("third answer %s, want the script's with a null id", got)
	}
	p.send(t, `{"jsonrpc":"2.0","id":8,"method":"tools/list"}`)
	select {
	case line := <-p.lines:
		t.Errorf("past its script the fake wrote %s", line)
	case <-time.After(50 * time.Millisecond):
	}
}
