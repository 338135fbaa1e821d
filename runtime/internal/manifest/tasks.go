package manifest

import (
	"fmt"
	"path"
	"sort"
	"strings"
)

// Values of the "tasks" key: whether calls to a tool may, must or must not become tasks.
// They are the values of MCP's execution.taskSupport.
const (
	TaskOptional  = "optional"
	TaskRequired  = "required"
	TaskForbidden = "forbidden"
)

// checkTasks checks the "tasks" key: each key a tool name or a pattern, each value one of
// the three.
func checkTasks(tasks map[string]string) error {
	for pattern, mode := range tasks {
		switch mode {
		case TaskOptional, TaskRequired, TaskForbidden:
		default:
			return fmt.Errorf("tasks[%q] is %q: use %q (a call may become a task), %q (it must) or %q (it never does)",
				pattern, mode, TaskOptional, TaskRequired, TaskForbidden)
		}
		if err := checkPattern("tasks", "key", pattern); err != nil {
			return err
		}
	}
	return nil
}

// checkPattern checks a tool name or pattern written as what ("key", "entry") of the
// manifest's key: not empty, and * its only special character.
func checkPattern(key, what, pattern string) error {
	if pattern == "" {
		return fmt.Errorf("%s: an empty %s names no tool; use \"*\" for every tool", key, what)
	}
	if strings.ContainsAny(pattern, "[]\\?") {
		return fmt.Errorf("%s: %s %q: a pattern knows only * (any run of characters)", key, what, pattern)
	}
	if _, err := path.Match(pattern, ""); err != nil {
		return fmt.Errorf("%s: %s %q: %w", key, what, pattern, err)
	}
	return nil
}

// TaskSupport says whether a call to the bundle's tool named tool (its own name, as the
// bundle lists it) may, must or must not become a task, as the "tasks" key says: the key
// naming the tool exactly, else the longest pattern matching it (the first in sorted
// order among equally long ones). "" when no key applies: the tool's own declaration
// decides then.
func (m *Manifest) TaskSupport(tool string) string {
	if mode, ok := m.Tasks[tool]; ok {
		return mode
	}
	var best string
	found := false
	keys := make([]string, 0, len(m.Tasks))
	for k := range m.Tasks {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if ok, _ := path.Match(k, tool); ok && (!found || len(k) > len(best)) {
			best, found = k, true
		}
	}
	if !found {
		return ""
	}
	return m.Tasks[best]
}
