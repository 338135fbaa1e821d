package testkit

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"
)

// fakeTool is one named behaviour of the fake bundle: a tool it lists, and what a call of
// it does.
type fakeTool struct {
	name string
	// props are the input schema's properties, as JSON text without braces; "$ECHO" is
	// the type FAKE_ECHO_TYPE names.
	props string
	// schema, when set, is the whole declaration instead (a tool hosts refuse).
	schema string
	// inline runs the call before the next message is read (a wedge, a task's creation);
	// other calls run on goroutines of their own.
	inline bool
	// run answers a call; nil lists a tool that no call finds (a name clients refuse).
	run func(c *fakeCall)
}

// declare is the tool as tools/list gives it.
func (t fakeTool) declare(cfg fakeConfig) json.RawMessage {
	if t.schema != "" {
		return json.RawMessage(t.schema)
	}
	desc, _ := json.Marshal(cfg.description)
	props := strings.ReplaceAll(t.props, "$ECHO", cfg.echoType)
	return json.RawMessage(fmt.Sprintf(`{"name":%q,"description":%s,"inputSchema":{"type":"object","properties":{%s}},"annotations":{"readOnlyHint":true},"title":"T %s"}`,
		t.name, desc, props, t.name))
}

// fakeTools are the fake bundle's behaviours, in the order tools/list gives them. Those
// that break the protocol or the process on purpose (junk, freeze, nullerr, spoof,
// shout, crash) are its misbehaving ones; FAKE_RAW's mode plays any other.
var fakeTools = []fakeTool{
	{name: "echo", props: `"text":{"type":"$ECHO"}`, run: (*fakeCall).echo},
	{name: "big", props: `"bytes":{"type":"integer"}`, run: (*fakeCall).big},
	{name: "sleep", props: `"ms":{"type":"integer"}`, run: (*fakeCall).sleep},
	{name: "pid", run: (*fakeCall).pid},
	{name: "env", run: (*fakeCall).env},
	{name: "node-lamp.on", run: (*fakeCall).lampOn},
	{name: "chatty", props: `"tag":{"type":"string"}`, run: (*fakeCall).chatty},
	{name: "sample", props: `"prompt":{"type":"string"}`, run: (*fakeCall).sample},
	{name: "ticker", props: `"ms":{"type":"integer"},"every":{"type":"integer"}`, run: (*fakeCall).ticker},
	{name: "freeze", inline: true, run: (*fakeCall).freeze},
	{name: "flood", props: `"n":{"type":"integer"},"bytes":{"type":"integer"}`, run: (*fakeCall).flood},
	{name: "nullerr", run: (*fakeCall).nullerr},
	{name: "late", props: `"ms":{"type":"integer"},"bytes":{"type":"integer"}`, run: (*fakeCall).late},
	{name: "hold", props: `"ms":{"type":"integer"}`, run: (*fakeCall).hold},
	{name: "spoof", props: `"token":{"type":"string"}`, run: (*fakeCall).spoof},
	{name: "shout", props: `"ms":{"type":"integer"}`, run: (*fakeCall).shout},
	{name: "elicit", props: `"question":{"type":"string"},"ms":{"type":"integer"}`, run: (*fakeCall).elicit},
	{name: "roots", run: (*fakeCall).roots},
	{name: "crash", run: (*fakeCall).crash},
	{name: "talk", props: `"text":{"type":"string"}`, run: (*fakeCall).talk},
	{name: "mirror", props: `"region":{"type":"string","x-mcp-header":"Region"},"text":{"type":"string"}`, run: (*fakeCall).echo},
	{name: "job", props: `"ms":{"type":"integer"}`, inline: true, run: (*fakeCall).job},
	{name: "bad name!"},
	// Listed with FAKE_ANYOF only: a root anyOf, and a $ref.
	{name: "either", run: (*fakeCall).either, schema: `{"name":"either","description":"takes a or b","inputSchema":{"type":"object",` +
		`"properties":{"a":{"$ref":"#/$defs/word"},"b":{"type":"integer"}},"anyOf":[{"required":["a"]},{"required":["b"]}],` +
		`"$defs":{"word":{"type":"string","minLength":1}}}}`},
}

// fakeCall is one tools/call as a behaviour sees it.
type fakeCall struct {
	f    *fake
	req  *fakeRequest
	args struct {
		Text     string `json:"text"`
		Bytes    int    `json:"bytes"`
		MS       int    `json:"ms"`
		Every    int    `json:"every"`
		N        int    `json:"n"`
		Tag      string `json:"tag"`
		Token    string `json:"token"`
		Prompt   string `json:"prompt"`
		Question string `json:"question"`
	}
}

func (c *fakeCall) reply(s string) { c.f.reply(c.req.ID, text(s)) }

func (c *fakeCall) wait() { time.Sleep(time.Duration(c.args.MS) * time.Millisecond) }

// log sends a log message about the call, tagged with its id as toolnode's SDKs do.
func (c *fakeCall) log(data string) {
	c.f.notify("notifications/message", map[string]any{"level": "info", "data": data, "_meta": map[string]any{"io.toolnode/request": c.req.ID}})
}

// progress sends progress under the call's token, with more members from kv.
func (c *fakeCall) progress(progress int, kv ...any) {
	params := map[string]any{"progressToken": c.req.Params.Meta.ProgressToken, "progress": progress}
	for i := 0; i+1 < len(kv); i += 2 {
		params[kv[i].(string)] = kv[i+1]
	}
	c.f.notify("notifications/progress", params)
}

func (c *fakeCall) hasToken() bool { return c.req.Params.Meta.ProgressToken != nil }

func (c *fakeCall) echo()   { c.reply(c.f.cfg.name + ":" + c.args.Text) }
func (c *fakeCall) either() { c.reply(c.f.cfg.name + ": either") }
func (c *fakeCall) big()    { c.reply(strings.Repeat("x", c.args.Bytes)) }
func (c *fakeCall) pid() {
	if c.f.cfg.meta == "" {
		c.reply(fmt.Sprint(os.Getpid()))
		return
	}
	var m struct {
		Params struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	json.Unmarshal(c.req.line, &m)
	c.reply(fmt.Sprintf("%s %d", m.Params.Meta[c.f.cfg.meta], os.Getpid()))
}

func (c *fakeCall) lampOn() { c.reply("lamp on by " + c.f.cfg.name) }

func (c *fakeCall) late() {
	c.wait()
	c.reply(strings.Repeat("x", c.args.Bytes))
}

func (c *fakeCall) env() {
	_, ok := os.LookupEnv(c.f.cfg.secretCheck)
	c.reply(fmt.Sprint(ok))
}

func (c *fakeCall) sleep() {
	if c.hasToken() {
		c.progress(1, "total", 2)
	}
	c.wait()
	c.reply(fmt.Sprintf("slept in %d", os.Getpid()))
}

func (c *fakeCall) ticker() {
	for t := 0; t < c.args.MS; t += c.args.Every {
		c.progress(t)
		time.Sleep(time.Duration(c.args.Every) * time.Millisecond)
	}
	c.reply(fmt.Sprint(os.Getpid()))
}

// job is a task for a client that declared the tasks extension to a bundle that holds
// them, and a plain call otherwise.
func (c *fakeCall) job() {
	if c.f.cfg.holdsTasks && strings.Contains(string(c.req.Params.Meta.Caps), "io.modelcontextprotocol/tasks") {
		c.f.send(map[string]any{"jsonrpc": "2.0", "id": c.req.ID, "result": c.f.tasks.start(c.f.cfg.name, time.Duration(c.args.MS)*time.Millisecond)})
		return
	}
	go func() {
		c.wait()
		c.reply(c.f.cfg.name + ": job done without a task")
	}()
}

// talk sends a log message about the call (a stateless bundle only when the request's
// _meta names a level) and progress under the call's token.
func (c *fakeCall) talk() {
	if !c.f.cfg.stateless || c.req.Params.Meta.LogLevel != "" {
		c.log(c.args.Text)
	}
	if c.hasToken() {
		c.progress(1)
	}
	c.reply(c.f.cfg.name + ":" + c.args.Text)
}

// chatty says something about the call, then reports progress; both must reach only the
// caller.
func (c *fakeCall) chatty() {
	time.Sleep(20 * time.Millisecond)
	c.log(c.args.Tag)
	if c.hasToken() {
		c.progress(1, "message", c.args.Tag)
	}
	time.Sleep(50 * time.Millisecond)
	c.reply("done " + c.args.Tag)
}

// flood sends log messages about the call, as many and as large as asked.
func (c *fakeCall) flood() {
	data := strings.Repeat("f", c.args.Bytes)
	for range c.args.N {
		c.log(data)
	}
	c.reply(fmt.Sprintf("flooded from %d", os.Getpid()))
}

// hold tells its caller the progress token the node gave it, then waits.
func (c *fakeCall) hold() {
	c.log(string(c.req.Params.Meta.ProgressToken))
	c.wait()
	c.reply("held")
}

func (c *fakeCall) sample() {
	res := c.f.ask("sampling/createMessage", map[string]any{
		"messages":  []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": c.args.Prompt}}},
		"maxTokens": 10, "_meta": map[string]any{"io.toolnode/request": c.req.ID}})
	var r struct {
		Content struct{ Text string }
	}
	json.Unmarshal(res, &r)
	c.reply("model said: " + r.Content.Text)
}

// roots asks for the client's roots as some servers do: no params at all, so no _meta
// relating it to the call.
func (c *fakeCall) roots() {
	var r struct{ Roots []struct{ URI string } }
	json.Unmarshal(c.f.ask("roots/list", nil), &r)
	var uris []string
	for _, root := range r.Roots {
		uris = append(uris, root.URI)
	}
	c.reply("roots: " + strings.Join(uris, " "))
}

// elicit asks its user, the 2025 way: a request to the client.
func (c *fakeCall) elicit() {
	res := c.f.ask("elicitation/create", map[string]any{"message": c.args.Question,
		"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"answer": map[string]any{"type": "string"}}},
		"_meta":           map[string]any{"io.toolnode/request": c.req.ID}})
	var r struct {
		Action  string
		Content struct{ Answer string }
	}
	json.Unmarshal(res, &r)
	c.wait() // work done with the answer
	c.reply(r.Action + ": " + r.Content.Answer)
}

// The misbehaving ones.

// freeze stops reading and answering, as a wedged server does.
func (c *fakeCall) freeze() {
	fmt.Fprintf(os.Stderr, "fake bundle %s: frozen\n", c.f.cfg.name)
	select {}
}

// nullerr answers as a server that could not read the request.
func (c *fakeCall) nullerr() {
	c.f.send(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": -32700, "message": "Parse error"}})
}

// spoof sends progress into calls this bundle does not serve: a token it was told, and
// tokens it guesses.
func (c *fakeCall) spoof() {
	guesses := []string{c.args.Token}
	for i := range 50 {
		guesses = append(guesses, fmt.Sprintf("tn-%d", i))
	}
	for _, tok := range guesses {
		c.f.notify("notifications/progress", map[string]any{"progressToken": tok, "progress": 99, "message": "spoofed"})
	}
	c.reply("spoofed")
}

// shout sends a log message that names no call.
func (c *fakeCall) shout() {
	c.f.notify("notifications/message", map[string]any{"level": "warning", "data": "shouted"})
	c.wait()
	c.reply("shout done")
}

func (c *fakeCall) crash() {
	fmt.Fprintf(os.Stderr, "fake bundle %s: crashing on purpose\n", c.f.cfg.name)
	os.Exit(2)
}
