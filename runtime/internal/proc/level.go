package proc

import (
	"encoding/json"
	"strings"

	"github.com/hashicorp/go-hclog"
)

// levelOf reads the level a stderr line names: a JSON log line's "@level" or "level", or a
// leading "[WARN]", "WARNING:", "error:" and the like, as go-plugin does for its plugins.
// Unmarked lines are Info: a bundle's stderr is where its author put things worth seeing.
func levelOf(line string) (hclog.Level, string) {
	if strings.HasPrefix(line, "{") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil {
			for _, k := range []string{"@level", "level", "severity"} {
				if s, ok := rec[k].(string); ok {
					if l := hclog.LevelFromString(normalize(s)); l != hclog.NoLevel {
						return l, line
					}
				}
			}
		}
		return hclog.Info, line
	}
	head := line
	if i := strings.IndexAny(line, " \t"); i > 0 {
		head = line[:i]
	}
	word := strings.Trim(head, "[]:")
	if l := hclog.LevelFromString(normalize(word)); l != hclog.NoLevel && word != "" {
		return l, strings.TrimSpace(line[len(head):])
	}
	return hclog.Info, line
}

func normalize(s string) string {
	switch s = strings.ToLower(s); s {
	case "warning":
		return "warn"
	case "err", "critical", "fatal", "panic":
		return "error"
	}
	return s
}
