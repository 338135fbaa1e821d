package mcp

import "slices"

// LogLevels returns the syslog severities MCP uses, least severe first.
func LogLevels() []string {
	l := logLevelNames()
	return l[:]
}

func logLevelNames() [8]string {
	return [...]string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}
}

// LogLevelName returns the level of severity rank (as LogLevelRank gives it), and whether
// there is one.
func LogLevelName(rank int) (string, bool) {
	l := logLevelNames()
	if rank < 0 || rank >= len(l) {
		return "", false
	}
	return l[rank], true
}

// LogLevelRank returns the severity rank of level (0 for debug) and whether it is a level at all.
func LogLevelRank(level string) (int, bool) {
	i := slices.Index(LogLevels(), level)
	return i, i >= 0
}
