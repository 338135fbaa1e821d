package manifest

import (
	"strings"
	"testing"
)

func TestTasksKeyChecked(t *testing.T) {
	tests := []struct {
		name, tasks, wantErr string
	}{
		{"names and patterns", `{"build": "required", "slow_*": "optional", "*": "forbidden"}`, ""},
		{"bad value", `{"build": "always"}`, `tasks["build"] is "always": use "optional"`},
		{"empty key", `{"": "optional"}`, `an empty key names no tool`},
		{"other pattern syntax", `{"b?ild": "optional"}`, `a pattern knows only *`},
		{"not an object", `["build"]`, `key "tasks" must be an object`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(`{"name": "x", "command": ["./run"], "tasks": `+tt.tasks+`}`), t.TempDir())
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestTaskSupportPrefersTheExactNameThenTheLongestPattern(t *testing.T) {
	m := &Manifest{Tasks: map[string]string{"*": "forbidden", "slow_*": "optional", "slow_build": "required", "slow_b*": "forbidden"}}
	for tool, want := range map[string]string{
		"slow_build": "required",  // named exactly
		"slow_bake":  "forbidden", // slow_b* is longer than slow_*
		"slow_cook":  "optional",
		"greet":      "forbidden",
	} {
		if got := m.TaskSupport(tool); got != want {
			t.Errorf("TaskSupport(%q) = %q, want %q", tool, got, want)
		}
	}
	if got := (&Manifest{}).TaskSupport("greet"); got != "" {
		t.Errorf("without the key: %q, want \"\" (the tool decides)", got)
	}
}
