package testkit

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// fakeConfig is what a fake bundle is told by its environment, which the test sets through
// the bundle's manifest (see Fake):
//
//	FAKE_NAME          the name it reports in its answers
//	FAKE_STATELESS=1   speak 2026-07-28 too (answer server/discover, type results)
//	FAKE_SURFACE=1     also offer a prompt, a resource, a resource template and completion
//	FAKE_JUNK=1        print a non-MCP line on stdout before every answer
//	FAKE_DELAY_MS      wait this long before answering initialize
//	FAKE_SECRET_CHECK  the variable whose presence the "env" tool reports
//	FAKE_EXIT_AFTER_MS exit with status 3 this long after answering initialize
//	FAKE_RECORD        append every line received on stdin to this file
//	FAKE_META          the member of a call's _meta the "pid" tool answers with, before its pid
//	FAKE_ECHO_TYPE     the JSON type of echo's "text" argument (default string)
//	FAKE_DESCRIPTION   the description of its tools (default "test tool")
//	FAKE_TASKS=1       with FAKE_STATELESS, hold tasks itself (MCP's tasks extension): its
//	                   tool "job" becomes a task for a client that declared the extension
//	FAKE_ANYOF=1       also offer "either", whose input schema has a root anyOf and a $ref
//	FAKE_RAW           a JSON array of lines: speak no MCP, answer the n-th line read with
//	                   the n-th of these as it is (see Fake.Raw)
type fakeConfig struct {
	name, secretCheck, record, echoType, description string
	meta                                             string // FAKE_META
	stateless, surface, junk, holdsTasks, anyOf      bool
	delay                                            time.Duration
	exitAfter                                        time.Duration // < 0: never
	raw                                              []string
}

// readFakeConfig reads the FAKE_* variables.
func readFakeConfig() fakeConfig {
	flag := func(k string) bool { return os.Getenv(k) == "1" }
	ms := func(k string, unset time.Duration) time.Duration {
		d, err := time.ParseDuration(os.Getenv(k) + "ms")
		if err != nil {
			return unset
		}
		return d
	}
	c := fakeConfig{
		name: os.Getenv("FAKE_NAME"), secretCheck: os.Getenv("FAKE_SECRET_CHECK"), record: os.Getenv("FAKE_RECORD"),
		meta:     os.Getenv("FAKE_META"),
		echoType: cmp.Or(os.Getenv("FAKE_ECHO_TYPE"), "string"), description: cmp.Or(os.Getenv("FAKE_DESCRIPTION"), "test tool"),
		stateless: flag("FAKE_STATELESS"), surface: flag("FAKE_SURFACE"), junk: flag("FAKE_JUNK"), anyOf: flag("FAKE_ANYOF"),
		delay: ms("FAKE_DELAY_MS", 0), exitAfter: ms("FAKE_EXIT_AFTER_MS", -1),
	}
	c.holdsTasks = c.stateless && flag("FAKE_TASKS")
	if raw := os.Getenv("FAKE_RAW"); raw != "" {
		json.Unmarshal([]byte(raw), &c.raw)
		if c.raw == nil {
			c.raw = []string{}
		}
	}
	return c
}

// capabilities are what a fake bundle offers: tools and logging, and with its surface
// prompts, resources and completions.
func capabilities(surface bool) map[string]any {
	caps := map[string]any{"tools": map[string]any{}, "logging": map[string]any{}}
	if surface {
		caps["prompts"], caps["resources"], caps["completions"] = map[string]any{}, map[string]any{"subscribe": true}, map[string]any{}
	}
	return caps
}

// fake is a small MCP server: serveFake runs one on a pair of streams.
type fake struct {
	cfg   fakeConfig
	tasks *fakeTasks

	wmu sync.Mutex
	out *bufio.Writer

	// Answers to its own requests (sampling, elicitation, roots) by id.
	pmu     sync.Mutex
	pending map[string]chan json.RawMessage
	nextID  int
}

// fakeRequest is what a fake bundle reads of a message.
type fakeRequest struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Method string          `json:"method"`
	Params struct {
		Name      string          `json:"name"`
		URI       string          `json:"uri"`
		Arguments json.RawMessage `json:"arguments"`
		TaskID    string          `json:"taskId"`
		Meta      struct {
			ProgressToken json.RawMessage `json:"progressToken"`
			LogLevel      string          `json:"io.modelcontextprotocol/logLevel"`
			Caps          json.RawMessage `json:"io.modelcontextprotocol/clientCapabilities"`
		} `json:"_meta"`
		Notifications struct {
			TaskIDs []string `json:"taskIds"`
		} `json:"notifications"`
	} `json:"params"`
	line []byte
}

// serveFake serves MCP on stdin and stdout as the fake bundle its environment describes
// (fakeConfig), until stdin ends.
func serveFake(stdin io.Reader, stdout io.Writer) {
	cfg := readFakeConfig()
	fmt.Fprintf(os.Stderr, "[INFO] fake bundle %s starting\n", cfg.name)
	f := &fake{cfg: cfg, out: bufio.NewWriter(stdout), pending: map[string]chan json.RawMessage{}}
	f.tasks = newFakeTasks(f.send)
	var record *os.File
	if cfg.record != "" {
		record, _ = os.OpenFile(cfg.record, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	}
	in := bufio.NewReaderSize(stdin, 1<<20)
	for n := 0; ; n++ {
		line, err := in.ReadBytes('\n')
		if len(line) == 0 && err != nil {
			return
		}
		if record != nil {
			record.Write(line)
		}
		if cfg.raw != nil {
			f.answerRaw(n, line)
			continue
		}
		req := &fakeRequest{line: line}
		if json.Unmarshal(line, req) == nil {
			f.handle(req)
		}
	}
}

// answerRaw answers the n-th line read in the raw mode: the n-th line of the script, $ID
// replaced with the line's id ("null" when it has none); an empty line or none answers
// nothing.
func (f *fake) answerRaw(n int, line []byte) {
	if n >= len(f.cfg.raw) || f.cfg.raw[n] == "" {
		return
	}
	msg := struct{ ID json.RawMessage }{ID: json.RawMessage("null")}
	json.Unmarshal(line, &msg)
	f.write([]byte(strings.ReplaceAll(f.cfg.raw[n], "$ID", string(msg.ID))))
}

// handle answers one message.
func (f *fake) handle(req *fakeRequest) {
	switch {
	case req.Method == "notifications/cancelled":
		fmt.Fprintf(os.Stderr, "fake bundle %s: cancelled %s\n", f.cfg.name, req.line)
	case req.ID == nil:
	case req.Method == "":
		f.pmu.Lock()
		ch := f.pending[string(req.ID)]
		f.pmu.Unlock()
		if ch != nil {
			ch <- req.Result
		}
	case fakeMethods[req.Method] != nil:
		fakeMethods[req.Method](f, req)
	default:
		f.reply(req.ID, map[string]any{})
	}
}

// write puts one line on stdout, after a stray one in the junk mode.
func (f *fake) write(line []byte) {
	f.wmu.Lock()
	defer f.wmu.Unlock()
	if f.cfg.junk {
		f.out.WriteString("this is not JSON-RPC, a stray print\n")
	}
	f.out.Write(append(line, '\n'))
	f.out.Flush()
}

func (f *fake) send(v any) {
	b, _ := json.Marshal(v)
	f.write(b)
}

// reply answers a request with result, typed as complete in the stateless mode.
func (f *fake) reply(id json.RawMessage, result any) {
	if m, ok := result.(map[string]any); ok && f.cfg.stateless {
		m["resultType"] = "complete"
	}
	f.send(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
}

func (f *fake) fail(id json.RawMessage, code int, message string) {
	f.send(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": message}})
}

// notify sends a notification.
func (f *fake) notify(method string, params map[string]any) {
	f.send(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

// ask sends a request to the client and waits for its answer.
func (f *fake) ask(method string, params map[string]any) json.RawMessage {
	f.pmu.Lock()
	f.nextID++
	id := fmt.Sprintf(`"fake-%d"`, f.nextID)
	ch := make(chan json.RawMessage, 1)
	f.pending[id] = ch
	f.pmu.Unlock()
	msg := map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id), "method": method}
	if params != nil {
		msg["params"] = params
	}
	f.send(msg)
	return <-ch
}

// text is a tool result of one text.
func text(s string) map[string]any {
	return map[string]any{"content": []any{map[string]any{"type": "text", "text": s}}}
}

// fakeMethods answer the requests a fake bundle takes, but for answers to its own.
var fakeMethods = map[string]func(*fake, *fakeRequest){
	"server/discover":          (*fake).discover,
	"initialize":               (*fake).initialize,
	"tools/list":               (*fake).listTools,
	"tools/call":               (*fake).callTool,
	"prompts/list":             (*fake).listPrompts,
	"prompts/get":              (*fake).getPrompt,
	"resources/list":           (*fake).listResources,
	"resources/templates/list": (*fake).listTemplates,
	"resources/read":           (*fake).readResource,
	"completion/complete":      (*fake).complete,
	"tasks/get":                (*fake).taskRequest,
	"tasks/update":             (*fake).taskRequest,
	"tasks/cancel":             (*fake).taskRequest,
	"subscriptions/listen":     (*fake).taskRequest,
}

func (f *fake) discover(req *fakeRequest) {
	if !f.cfg.stateless {
		f.fail(req.ID, -32601, "method not found")
		return
	}
	caps := capabilities(f.cfg.surface)
	if f.cfg.holdsTasks {
		caps["extensions"] = map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}
	}
	f.reply(req.ID, map[string]any{"supportedVersions": []string{"2026-07-28", "2025-11-25"}, "capabilities": caps,
		"_meta": map[string]any{"io.modelcontextprotocol/serverInfo": map[string]any{"name": "fake-" + f.cfg.name, "version": "1"}}})
}

func (f *fake) initialize(req *fakeRequest) {
	time.Sleep(f.cfg.delay)
	f.reply(req.ID, map[string]any{"protocolVersion": "2025-06-18", "capabilities": capabilities(f.cfg.surface),
		"serverInfo": map[string]any{"name": "fake-" + f.cfg.name, "version": "1"}})
	if f.cfg.exitAfter >= 0 {
		go func() {
			time.Sleep(f.cfg.exitAfter)
			os.Exit(3)
		}()
	}
}

func (f *fake) listPrompts(req *fakeRequest) {
	f.reply(req.ID, map[string]any{"prompts": []any{map[string]any{"name": "greet", "description": "Greets <someone> & all",
		"arguments": []any{map[string]any{"name": "who", "required": true}}}}})
}

func (f *fake) getPrompt(req *fakeRequest) {
	f.reply(req.ID, map[string]any{"messages": []any{map[string]any{"role": "user",
		"content": map[string]any{"type": "text", "text": "prompt " + req.Params.Name + " of " + f.cfg.name}}}})
}

func (f *fake) listResources(req *fakeRequest) {
	f.reply(req.ID, map[string]any{"resources": []any{map[string]any{"uri": "fake://" + f.cfg.name + "/readme", "name": "readme", "mimeType": "text/plain"}}})
}

func (f *fake) listTemplates(req *fakeRequest) {
	f.reply(req.ID, map[string]any{"resourceTemplates": []any{map[string]any{"uriTemplate": "fake://" + f.cfg.name + "/items/{id}", "name": "item"}}})
}

func (f *fake) readResource(req *fakeRequest) {
	f.reply(req.ID, map[string]any{"contents": []any{map[string]any{"uri": req.Params.URI, "text": "read by " + f.cfg.name}}})
}

func (f *fake) complete(req *fakeRequest) {
	f.reply(req.ID, map[string]any{"completion": map[string]any{"values": []string{"completed by " + f.cfg.name}}})
}

// taskRequest answers tasks/* and subscriptions/listen when the bundle holds tasks itself.
func (f *fake) taskRequest(req *fakeRequest) {
	if !f.cfg.holdsTasks {
		f.fail(req.ID, -32601, "method not found")
		return
	}
	res, err := f.tasks.serve(req.Method, req.ID, req.Params.TaskID, req.Params.Notifications.TaskIDs)
	switch {
	case err != "":
		f.fail(req.ID, -32602, err)
	case res != nil:
		f.reply(req.ID, res)
	}
}

func (f *fake) listTools(req *fakeRequest) {
	var tools []json.RawMessage
	for _, b := range fakeTools {
		if b.name == "either" && !f.cfg.anyOf {
			continue
		}
		tools = append(tools, b.declare(f.cfg))
	}
	f.reply(req.ID, map[string]any{"tools": tools})
}

// callTool runs the behaviour the call names; on a goroutine of its own unless it must
// hold up the reading of what comes next.
func (f *fake) callTool(req *fakeRequest) {
	c := &fakeCall{f: f, req: req}
	json.Unmarshal(req.Params.Arguments, &c.args)
	for _, b := range fakeTools {
		if b.name != req.Params.Name || b.run == nil {
			continue
		}
		if b.inline {
			b.run(c)
		} else {
			go b.run(c)
		}
		return
	}
	f.fail(req.ID, -32602, "unknown tool "+req.Params.Name)
}

// fakeTasks are the tasks a fake bundle holds itself.
type fakeTasks struct {
	send    func(any)
	mu      sync.Mutex
	n       int
	byID    map[string]map[string]any
	listens map[string]json.RawMessage // the subscriptions/listen watching a task, by task id
}

func newFakeTasks(send func(any)) *fakeTasks {
	return &fakeTasks{send: send, byID: map[string]map[string]any{}, listens: map[string]json.RawMessage{}}
}

// start makes a task that completes after d, and returns its CreateTaskResult.
func (f *fakeTasks) start(name string, d time.Duration) map[string]any {
	f.mu.Lock()
	f.n++
	id := fmt.Sprintf("fake-task-%d", f.n)
	now := time.Now().UTC().Format(time.RFC3339Nano)
	t := map[string]any{"taskId": id, "status": "working", "createdAt": now, "lastUpdatedAt": now, "ttlMs": 600000, "pollIntervalMs": 100}
	f.byID[id] = t
	created := map[string]any{"resultType": "task"}
	for k, v := range t {
		created[k] = v
	}
	f.mu.Unlock()
	go func() {
		time.Sleep(d)
		f.mu.Lock()
		if t["status"] == "working" {
			t["status"] = "completed"
			t["result"] = map[string]any{"content": []any{map[string]any{"type": "text", "text": name + ": job done in a task"}}}
			t["lastUpdatedAt"] = time.Now().UTC().Format(time.RFC3339Nano)
		}
		f.mu.Unlock()
		f.notify(id)
	}()
	return created
}

// notify sends notifications/tasks with the task's state on the listen watching it.
func (f *fakeTasks) notify(id string) {
	f.mu.Lock()
	listen, ok := f.listens[id]
	params := map[string]any{}
	for k, v := range f.byID[id] {
		params[k] = v
	}
	f.mu.Unlock()
	if ok {
		params["_meta"] = map[string]any{"io.modelcontextprotocol/subscriptionId": listen}
		f.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/tasks", "params": params})
	}
}

// serve answers tasks/* and subscriptions/listen: a result, or an error message, or
// neither (a listen, which is answered only when it ends).
func (f *fakeTasks) serve(method string, reqID json.RawMessage, id string, listen []string) (map[string]any, string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if method == "subscriptions/listen" {
		for _, tid := range listen {
			f.listens[tid] = reqID
		}
		return nil, ""
	}
	t := f.byID[id]
	if t == nil {
		return nil, "unknown task " + id
	}
	switch method {
	case "tasks/get":
		out := map[string]any{}
		for k, v := range t {
			out[k] = v
		}
		return out, ""
	case "tasks/cancel":
		if t["status"] == "working" {
			t["status"] = "cancelled"
		}
	}
	return map[string]any{}, ""
}
