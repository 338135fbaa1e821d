package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// taskCost compares a plain call of the Go echo bundle's tool with the same tool run as a
// task (MCP's tasks extension): the call answered with a task, then tasks/get until the
// task has ended, its result read from there. One node serves the bundle twice, the
// second time with bundle.json's "tasks" saying the tool requires a task, so both routes
// call the same program over the same front.
func taskCost(cfg config, w *strings.Builder) error {
	fmt.Fprintf(w, "## A tool run as a task (`tasks`), against its plain call\n\n")
	_, bin, err := benchBundle(cfg, "echo-go")
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "toolnode-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := writeBundle(dir, "plain", []string{bin}, nil); err != nil {
		return err
	}
	if err := writeBundle(dir, "tasked", []string{bin}, map[string]any{"tasks": map[string]string{"echo": "required"}}); err != nil {
		return err
	}
	// Every task is kept until its TTL: room for all the bench makes.
	plain, _, stop, err := startNodeEnv(cfg, dir, "plain.echo", nil, "--task-ttl", "2m", "--max-client-tasks", "10000000")
	if err != nil {
		return err
	}
	defer stop()
	plain.close()
	url := plain.url
	routes := []route{
		{name: "plain call", c: startHTTPStateless(url, "plain.echo"), http: true},
		{name: "task: tools/call, then tasks/get until it ends", c: &taskCaller{startHTTPStateless(url, "tasked.echo")}, http: true},
	}
	fmt.Fprintf(w, "Over HTTP, 2026-07-28 clients; the task's client declares the extension, and polls at once\n"+
		"rather than after pollIntervalMs, so that the figure is the node's cost, not the wait.\n\n")
	fmt.Fprintf(w, "| bundle | path | in flight | calls/s | vs plain | p50 | p99 |\n|---|---|---|---|---|---|---|\n")
	res, err := compareRoutes(cfg, w, "echo-go", `{"text":"bench"}`, []int{1, 8}, routes, -1)
	if err != nil {
		return err
	}
	plainP50, taskP50 := res[0][0].p50, res[0][1].p50
	fmt.Fprintf(w, "\nWith one call in flight a task takes %s more than the plain call at the median. It makes two\n"+
		"requests where the plain call makes one; beyond that second request, keeping the task costs\n"+
		"%s (the task's median less twice the plain call's).\n\n", us(taskP50-plainP50), us(taskP50-2*plainP50))
	return nil
}

// tasksMeta is the _meta of a 2026-07-28 request of a client declaring the tasks extension.
const tasksMeta = `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
	`"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`

// taskCaller runs each call as a task: tools/call, then tasks/get until the task has
// ended; the call's result is the task's.
type taskCaller struct{ c *httpClient }

func (t *taskCaller) call(args string) error {
	created, err := t.request("tools/call", t.c.tool, `{"name":"`+t.c.tool+`","arguments":`+args+tasksMeta+`}`)
	if err != nil {
		return err
	}
	var task struct {
		Result struct {
			ResultType, TaskID string
		} `json:"result"`
	}
	if json.Unmarshal(created, &task) != nil || task.Result.ResultType != "task" {
		return fmt.Errorf("no task made: %.300s", created)
	}
	id := task.Result.TaskID
	for {
		got, err := t.request("tasks/get", id, `{"taskId":"`+id+`"`+tasksMeta+`}`)
		if err != nil {
			return err
		}
		var state struct {
			Result struct {
				Status string          `json:"status"`
				Result json.RawMessage `json:"result"`
			} `json:"result"`
		}
		if err := json.Unmarshal(got, &state); err != nil {
			return fmt.Errorf("tasks/get: %.300s", got)
		}
		switch state.Result.Status {
		case "working", "input_required":
			continue
		case "completed":
			return echoed([]byte(`{"result":`+string(state.Result.Result)+`}`), args)
		}
		return fmt.Errorf("the task ended %s: %.300s", state.Result.Status, got)
	}
}

// request posts one request of method naming name in Mcp-Name, and returns its answer.
func (t *taskCaller) request(method, name, params string) ([]byte, error) {
	c := t.c
	req := `{"jsonrpc":"2.0","id":` + strconv.FormatUint(c.ids.Add(1), 10) + `,"method":"` + method + `","params":` + params + `}`
	resp, err := c.postAs(method, name, req)
	if err != nil {
		return nil, err
	}
	return answer(resp)
}

func (t *taskCaller) close() { t.c.close() }
