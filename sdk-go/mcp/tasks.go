package mcp

import (
	"bytes"
	"encoding/json"
)

// The tasks extension, io.modelcontextprotocol/tasks (SEP-2663): a server may answer a
// tools/call of a client that declared the extension in the request's capabilities with a
// task (resultType "task") instead of the tool's result; the client then polls tasks/get,
// answers input requests with tasks/update and may cancel with tasks/cancel.

// ExtensionTasks names the tasks extension in capabilities.extensions.
const ExtensionTasks = "io.modelcontextprotocol/tasks"

// Methods and notifications of the tasks extension.
const (
	MethodTasksGet    = "tasks/get"
	MethodTasksUpdate = "tasks/update"
	MethodTasksCancel = "tasks/cancel"
	NotifyTasks       = "notifications/tasks"
)

// ResultTypeTask is the resultType of a CreateTaskResult.
const ResultTypeTask = "task"

// Task statuses.
const (
	TaskWorking       = "working"
	TaskInputRequired = "input_required"
	TaskCompleted     = "completed"
	TaskFailed        = "failed"
	TaskCancelled     = "cancelled"
)

// TaskTerminal reports whether a task in status will change no more.
func TaskTerminal(status string) bool {
	return status == TaskCompleted || status == TaskFailed || status == TaskCancelled
}

// Values of a tool's execution.taskSupport: whether a call to it may, must or must not
// become a task.
const (
	TaskForbidden = "forbidden"
	TaskOptional  = "optional"
	TaskRequired  = "required"
)

// ValidTaskSupport reports whether s is a value of execution.taskSupport.
func ValidTaskSupport(s string) bool {
	return s == TaskForbidden || s == TaskOptional || s == TaskRequired
}

// ToolExecution is a tool's execution member: how calls to it may run.
type ToolExecution struct {
	// TaskSupport is TaskForbidden, TaskOptional or TaskRequired; "" leaves it to the
	// server.
	TaskSupport string `json:"taskSupport,omitempty"`
}

// Task is the state of a task as tasks/get, notifications/tasks and (with resultType
// "task") a CreateTaskResult carry it. Result, Error and InputRequests are set by status:
// the tool's result once completed, the JSON-RPC error once failed, the requests waiting
// for the client while input_required.
type Task struct {
	ResultType     string          `json:"resultType,omitempty"`
	TaskID         string          `json:"taskId"`
	Status         string          `json:"status"`
	StatusMessage  string          `json:"statusMessage,omitempty"`
	CreatedAt      string          `json:"createdAt"`
	LastUpdatedAt  string          `json:"lastUpdatedAt"`
	TTLMs          *int64          `json:"ttlMs"`
	PollIntervalMs int64           `json:"pollIntervalMs,omitempty"`
	InputRequests  InputRequests   `json:"inputRequests,omitempty"`
	Result         json.RawMessage `json:"result,omitempty"`
	Error          json.RawMessage `json:"error,omitempty"`
	Meta           json.RawMessage `json:"_meta,omitempty"`
}

// TaskParams is the params of tasks/get and tasks/cancel, and with InputResponses of
// tasks/update.
type TaskParams struct {
	TaskID         string         `json:"taskId"`
	InputResponses InputResponses `json:"inputResponses,omitempty"`
}

// DeclaresExtension reports whether a capabilities object (a client's or a server's)
// declares the extension id under "extensions".
func DeclaresExtension(caps json.RawMessage, id string) bool {
	if len(caps) == 0 || !bytes.Contains(caps, []byte(id)) { // most declare none: spare the decoding
		return false
	}
	var c struct {
		Extensions map[string]json.RawMessage `json:"extensions"`
	}
	if json.Unmarshal(caps, &c) != nil {
		return false
	}
	v, ok := c.Extensions[id]
	return ok && len(v) > 0 && v[0] == '{'
}
