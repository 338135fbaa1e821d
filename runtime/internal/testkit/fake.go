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

// capabilities are what a fake bundle offers: tools and logging, and with its surface
// prompts, resources and completions.
func capabilities(surface bool) map[string]any {
	caps := map[string]any{"tools": map[string]any{}, "logging": map[string]any{}}
	if surface {
		caps["prompts"], caps["resources"], caps["completions"] = map[string]any{}, map[string]any{"subscribe": true}, map[string]any{}
	}
	return caps
}

// serveFake is a small MCP server. Its behaviour comes from its environment, which the test
// sets through the bundle's manifest (see Fake):
//
//	FAKE_NAME          the name it reports in its answers
//	FAKE_STATELESS=1   speak 2026-07-28 too (answer server/discover, type results)
//	FAKE_SURFACE=1     also offer a prompt, a resource, a resource template and completion
//	FAKE_JUNK=1        print a non-MCP line on stdout before every answer
//	FAKE_DELAY_MS      wait this long before answering initialize
//	FAKE_SECRET_CHECK  the variable whose presence the "env" tool reports
//	FAKE_EXIT_AFTER_MS exit with status 3 this long after answering initialize
//	FAKE_RECORD        append every line received on stdin to this file
//	FAKE_ECHO_TYPE     the JSON type of echo's "text" argument (default string)
//	FAKE_DESCRIPTION   the description of its tools (default "test tool")
//	FAKE_TASKS=1       with FAKE_STATELESS, hold tasks itself (MCP's tasks extension): its
//	                   tool "job" becomes a task for a client that declared the extension
//	FAKE_ANYOF=1       also offer "either", whose input schema has a root anyOf and a $ref
func serveFake(stdin io.Reader, stdout io.Writer) {
	name := os.Getenv("FAKE_NAME")
	junk := os.Getenv("FAKE_JUNK") == "1"
	delay, _ := time.ParseDuration(os.Getenv("FAKE_DELAY_MS") + "ms")
	surface := os.Getenv("FAKE_SURFACE") == "1"
	stateless := os.Getenv("FAKE_STATELESS") == "1"
	holdsTasks := stateless && os.Getenv("FAKE_TASKS") == "1"
	fmt.Fprintf(os.Stderr, "[INFO] fake bundle %s starting\n", name)

	var wmu sync.Mutex
	out := bufio.NewWriter(stdout)
	send := func(v any) {
		b, _ := json.Marshal(v)
		wmu.Lock()
		defer wmu.Unlock()
		if junk {
			out.WriteString("this is not JSON-RPC, a stray print\n")
		}
		out.Write(append(b, '\n'))
		out.Flush()
	}
	reply := func(id json.RawMessage, result any) {
		if m, ok := result.(map[string]any); ok && stateless {
			m["resultType"] = "complete"
		}
		send(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
	}
	text := func(s string) map[string]any {
		return map[string]any{"content": []any{map[string]any{"type": "text", "text": s}}}
	}
	tool := func(n string, props string) json.RawMessage {
		desc, _ := json.Marshal(cmp.Or(os.Getenv("FAKE_DESCRIPTION"), "test tool"))
		return json.RawMessage(fmt.Sprintf(`{"name":%q,"description":%s,"inputSchema":{"type":"object","properties":{%s}},"annotations":{"readOnlyHint":true},"title":"T %s"}`, n, desc, props, n))
	}
	tools := []json.RawMessage{
		tool("echo", `"text":{"type":"`+cmp.Or(os.Getenv("FAKE_ECHO_TYPE"), "string")+`"}`),
		tool("big", `"bytes":{"type":"integer"}`),
		tool("sleep", `"ms":{"type":"integer"}`),
		tool("pid", ``),
		tool("env", ``),
		tool("node-lamp.on", ``),
		tool("chatty", `"tag":{"type":"string"}`),
		tool("sample", `"prompt":{"type":"string"}`),
		tool("ticker", `"ms":{"type":"integer"},"every":{"type":"integer"}`),
		tool("freeze", ``),
		tool("flood", `"n":{"type":"integer"},"bytes":{"type":"integer"}`),
		tool("nullerr", ``),
		tool("late", `"ms":{"type":"integer"},"bytes":{"type":"integer"}`),
		tool("hold", `"ms":{"type":"integer"}`),
		tool("spoof", `"token":{"type":"string"}`),
		tool("shout", `"ms":{"type":"integer"}`),
		tool("elicit", `"question":{"type":"string"},"ms":{"type":"integer"}`),
		tool("roots", ``),
		tool("crash", ``),
		tool("talk", `"text":{"type":"string"}`),
		tool("mirror", `"region":{"type":"string","x-mcp-header":"Region"},"text":{"type":"string"}`),
		tool("job", `"ms":{"type":"integer"}`),
		tool("bad name!", ``),
	}
	if os.Getenv("FAKE_ANYOF") == "1" {
		// A schema hosts refuse: a root anyOf, and a $ref.
		tools = append(tools, json.RawMessage(`{"name":"either","description":"takes a or b","inputSchema":{"type":"object",`+
			`"properties":{"a":{"$ref":"#/$defs/word"},"b":{"type":"integer"}},"anyOf":[{"required":["a"]},{"required":["b"]}],`+
			`"$defs":{"word":{"type":"string","minLength":1}}}}`))
	}
	// Answers to our own requests (sampling) by id.
	var pmu sync.Mutex
	pending := map[string]chan json.RawMessage{}
	var nextID int
	ask := func(method string, params map[string]any) json.RawMessage {
		pmu.Lock()
		nextID++
		id := fmt.Sprintf(`"fake-%d"`, nextID)
		ch := make(chan json.RawMessage, 1)
		pending[id] = ch
		pmu.Unlock()
		msg := map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id), "method": method}
		if params != nil {
			msg["params"] = params
		}
		send(msg)
		return <-ch
	}

	tasks := newFakeTasks(send)

	var record *os.File
	if path := os.Getenv("FAKE_RECORD"); path != "" {
		record, _ = os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	}
	in := bufio.NewReaderSize(stdin, 1<<20)
	for {
		line, err := in.ReadBytes('\n')
		if len(line) == 0 && err != nil {
			return
		}
		if record != nil {
			record.Write(line)
		}
		var req struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
			Method string          `json:"method"`
			Params struct {
				Name      string          `json:"name"`
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
		}
		if json.Unmarshal(line, &req) != nil {
			continue
		}
		if req.Method == "notifications/cancelled" {
			fmt.Fprintf(os.Stderr, "fake bundle %s: cancelled %s\n", name, line)
			continue
		}
		if req.ID == nil {
			continue
		}
		if req.Method == "" {
			pmu.Lock()
			ch := pending[string(req.ID)]
			pmu.Unlock()
			if ch != nil {
				ch <- req.Result
			}
			continue
		}
		switch req.Method {
		case "server/discover":
			if !stateless {
				send(map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": -32601, "message": "method not found"}})
				continue
			}
			caps := capabilities(surface)
			if holdsTasks {
				caps["extensions"] = map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}
			}
			reply(req.ID, map[string]any{"supportedVersions": []string{"2026-07-28", "2025-11-25"}, "capabilities": caps,
				"_meta": map[string]any{"io.modelcontextprotocol/serverInfo": map[string]any{"name": "fake-" + name, "version": "1"}}})
		case "initialize":
			time.Sleep(delay)
			reply(req.ID, map[string]any{"protocolVersion": "2025-06-18", "capabilities": capabilities(surface),
				"serverInfo": map[string]any{"name": "fake-" + name, "version": "1"}})
			if after, err := time.ParseDuration(os.Getenv("FAKE_EXIT_AFTER_MS") + "ms"); err == nil {
				go func() {
					time.Sleep(after)
					os.Exit(3)
				}()
			}
		case "tools/list":
			reply(req.ID, map[string]any{"tools": tools})
		case "prompts/list":
			reply(req.ID, map[string]any{"prompts": []any{map[string]any{"name": "greet", "description": "Greets <someone> & all",
				"arguments": []any{map[string]any{"name": "who", "required": true}}}}})
		case "resources/list":
			reply(req.ID, map[string]any{"resources": []any{map[string]any{"uri": "fake://" + name + "/readme", "name": "readme", "mimeType": "text/plain"}}})
		case "resources/templates/list":
			reply(req.ID, map[string]any{"resourceTemplates": []any{map[string]any{"uriTemplate": "fake://" + name + "/items/{id}", "name": "item"}}})
		case "resources/read":
			var p struct {
				URI string `json:"uri"`
			}
			json.Unmarshal(line, &struct {
				Params *struct {
					URI string `json:"uri"`
				} `json:"params"`
			}{&p})
			reply(req.ID, map[string]any{"contents": []any{map[string]any{"uri": p.URI, "text": "read by " + name}}})
		case "prompts/get":
			reply(req.ID, map[string]any{"messages": []any{map[string]any{"role": "user",
				"content": map[string]any{"type": "text", "text": "prompt " + req.Params.Name + " of " + name}}}})
		case "completion/complete":
			reply(req.ID, map[string]any{"completion": map[string]any{"values": []string{"completed by " + name}}})
		case "tasks/get", "tasks/update", "tasks/cancel", "subscriptions/listen":
			if !holdsTasks {
				send(map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": -32601, "message": "method not found"}})
				continue
			}
			res, err := tasks.serve(req.Method, req.ID, req.Params.TaskID, req.Params.Notifications.TaskIDs)
			switch {
			case err != "":
				send(map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": -32602, "message": err}})
			case res != nil:
				reply(req.ID, res)
			}
		case "tools/call":
			if req.Params.Name == "job" && holdsTasks && strings.Contains(string(req.Params.Meta.Caps), "io.modelcontextprotocol/tasks") {
				var a struct{ MS int }
				json.Unmarshal(req.Params.Arguments, &a)
				send(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": tasks.start(name, time.Duration(a.MS)*time.Millisecond)})
				continue
			}
			if req.Params.Name == "freeze" {
				// Stop reading and answering, as a wedged server does.
				fmt.Fprintf(os.Stderr, "fake bundle %s: frozen\n", name)
				select {}
			}
			go func() {
				var args struct {
					Text  string `json:"text"`
					Bytes int    `json:"bytes"`
					MS    int    `json:"ms"`
				}
				json.Unmarshal(req.Params.Arguments, &args)
				switch req.Params.Name {
				case "either":
					reply(req.ID, text(name+": either"))
				case "echo", "mirror":
					reply(req.ID, text(name+":"+args.Text))
				case "job":
					time.Sleep(time.Duration(args.MS) * time.Millisecond)
					reply(req.ID, text(name+": job done without a task"))
				case "talk":
					// A log message about the call, tagged with its id as toolnode's SDKs do
					// (a stateless bundle sends it only when the request's _meta names a
					// level), and progress under the call's token.
					if !stateless || req.Params.Meta.LogLevel != "" {
						send(map[string]any{"jsonrpc": "2.0", "method": "notifications/message", "params": map[string]any{
							"level": "info", "data": args.Text, "_meta": map[string]any{"io.toolnode/request": req.ID}}})
					}
					if req.Params.Meta.ProgressToken != nil {
						send(map[string]any{"jsonrpc": "2.0", "method": "notifications/progress", "params": map[string]any{
							"progressToken": req.Params.Meta.ProgressToken, "progress": 1}})
					}
					reply(req.ID, text(name+":"+args.Text))
				case "big":
					reply(req.ID, text(strings.Repeat("x", args.Bytes)))
				case "late":
					time.Sleep(time.Duration(args.MS) * time.Millisecond)
					reply(req.ID, text(strings.Repeat("x", args.Bytes)))
				case "flood":
					// Log messages about the call, as many and as large as asked.
					var a struct{ N, Bytes int }
					json.Unmarshal(req.Params.Arguments, &a)
					data := strings.Repeat("f", a.Bytes)
					for range a.N {
						send(map[string]any{"jsonrpc": "2.0", "method": "notifications/message",
							"params": map[string]any{"level": "info", "data": data, "_meta": map[string]any{"io.toolnode/request": req.ID}}})
					}
					reply(req.ID, text(fmt.Sprintf("flooded from %d", os.Getpid())))
				case "hold":
					// Tells its caller the progress token the node gave it, then waits.
					send(map[string]any{"jsonrpc": "2.0", "method": "notifications/message",
						"params": map[string]any{"level": "info", "data": string(req.Params.Meta.ProgressToken), "_meta": map[string]any{"io.toolnode/request": req.ID}}})
					time.Sleep(time.Duration(args.MS) * time.Millisecond)
					reply(req.ID, text("held"))
				case "spoof":
					// Progress into calls this bundle does not serve: a token it was told,
					// and tokens it guesses.
					var a struct{ Token string }
					json.Unmarshal(req.Params.Arguments, &a)
					guesses := []string{a.Token}
					for i := range 50 {
						guesses = append(guesses, fmt.Sprintf("tn-%d", i))
					}
					for _, tok := range guesses {
						send(map[string]any{"jsonrpc": "2.0", "method": "notifications/progress",
							"params": map[string]any{"progressToken": tok, "progress": 99, "message": "spoofed"}})
					}
					reply(req.ID, text("spoofed"))
				case "shout":
					// A log message that names no call.
					send(map[string]any{"jsonrpc": "2.0", "method": "notifications/message",
						"params": map[string]any{"level": "warning", "data": "shouted"}})
					time.Sleep(time.Duration(args.MS) * time.Millisecond)
					reply(req.ID, text("shout done"))
				case "nullerr":
					// The answer of a server that could not read the request.
					send(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": -32700, "message": "Parse error"}})
				case "sleep":
					if req.Params.Meta.ProgressToken != nil {
						send(map[string]any{"jsonrpc": "2.0", "method": "notifications/progress",
							"params": map[string]any{"progressToken": req.Params.Meta.ProgressToken, "progress": 1, "total": 2}})
					}
					time.Sleep(time.Duration(args.MS) * time.Millisecond)
					reply(req.ID, text(fmt.Sprintf("slept in %d", os.Getpid())))
				case "ticker":
					var a struct{ MS, Every int }
					json.Unmarshal(req.Params.Arguments, &a)
					for t := 0; t < a.MS; t += a.Every {
						send(map[string]any{"jsonrpc": "2.0", "method": "notifications/progress",
							"params": map[string]any{"progressToken": req.Params.Meta.ProgressToken, "progress": t}})
						time.Sleep(time.Duration(a.Every) * time.Millisecond)
					}
					reply(req.ID, text(fmt.Sprint(os.Getpid())))
				case "pid":
					reply(req.ID, text(fmt.Sprint(os.Getpid())))
				case "env":
					_, ok := os.LookupEnv(os.Getenv("FAKE_SECRET_CHECK"))
					reply(req.ID, text(fmt.Sprint(ok)))
				case "node-lamp.on":
					reply(req.ID, text("lamp on by "+name))
				case "chatty":
					// Says something about the call, tagged with the call's id as toolnode's
					// SDKs do, then reports progress; both must reach only the caller.
					var a struct{ Tag string }
					json.Unmarshal(req.Params.Arguments, &a)
					meta := map[string]any{"io.toolnode/request": req.ID}
					time.Sleep(20 * time.Millisecond)
					send(map[string]any{"jsonrpc": "2.0", "method": "notifications/message",
						"params": map[string]any{"level": "info", "data": a.Tag, "_meta": meta}})
					if req.Params.Meta.ProgressToken != nil {
						send(map[string]any{"jsonrpc": "2.0", "method": "notifications/progress",
							"params": map[string]any{"progressToken": req.Params.Meta.ProgressToken, "progress": 1, "message": a.Tag}})
					}
					time.Sleep(50 * time.Millisecond)
					reply(req.ID, text("done "+a.Tag))
				case "sample":
					var a struct{ Prompt string }
					json.Unmarshal(req.Params.Arguments, &a)
					res := ask("sampling/createMessage", map[string]any{
						"messages":  []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": a.Prompt}}},
						"maxTokens": 10, "_meta": map[string]any{"io.toolnode/request": req.ID}})
					var r struct {
						Content struct{ Text string }
					}
					json.Unmarshal(res, &r)
					reply(req.ID, text("model said: "+r.Content.Text))
				case "roots":
					// Asks for the client's roots as some servers do: no params at all, so
					// no _meta relating it to the call.
					res := ask("roots/list", nil)
					var r struct{ Roots []struct{ URI string } }
					json.Unmarshal(res, &r)
					var uris []string
					for _, root := range r.Roots {
						uris = append(uris, root.URI)
					}
					reply(req.ID, text("roots: "+strings.Join(uris, " ")))
				case "crash":
					fmt.Fprintf(os.Stderr, "fake bundle %s: crashing on purpose\n", name)
					os.Exit(2)
				case "elicit":
					// Asks its user, the 2025 way: a request to the client.
					var a struct{ Question string }
					json.Unmarshal(req.Params.Arguments, &a)
					res := ask("elicitation/create", map[string]any{"message": a.Question,
						"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"answer": map[string]any{"type": "string"}}},
						"_meta":           map[string]any{"io.toolnode/request": req.ID}})
					var r struct {
						Action  string
						Content struct{ Answer string }
					}
					json.Unmarshal(res, &r)
					time.Sleep(time.Duration(args.MS) * time.Millisecond) // work done with the answer
					reply(req.ID, text(r.Action+": "+r.Content.Answer))
				default:
					send(map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": -32602, "message": "unknown tool " + req.Params.Name}})
				}
			}()
		default:
			reply(req.ID, map[string]any{})
		}
	}
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
