package mcp

// MaxToolNameLen is the longest tool name SEP-986 allows.
const MaxToolNameLen = 128

// ValidToolName reports whether name follows SEP-986: 1 to 128 characters, each one of
// A-Z a-z 0-9 _ - and '.'.
func ValidToolName(name string) bool {
	if len(name) == 0 || len(name) > MaxToolNameLen {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-', c == '.':
		default:
			return false
		}
	}
	return true
}
