package mcp

import "slices"

// LogLevels returns the syslog severities MCP uses, least severe first.
func LogLevels() []string {
	return []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}
}

// LogLevelRank returns the severity rank of level (0 for debug) and whether it is a level at all.
func LogLevelRank(level string) (int, bool) {
	i := slices.Index(LogLevels(), level)
	return i, i >= 0
}
