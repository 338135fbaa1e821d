package provider

import "strings"

// Match reports whether a tool name matches a pattern of the node's access files: *
// matches any run of characters, dots included, ? exactly one, anything else itself. It
// backtracks only to the last *, so it runs in time proportional to len(pattern) *
// len(name) at worst. The node's access.Pattern and package app both use it.
func Match(pattern, name string) bool {
	p := pattern
	if !strings.ContainsAny(p, "*?") {
		return p == name
	}
	pi, ni := 0, 0
	star, mark := -1, 0
	for ni < len(name) {
		switch {
		case pi < len(p) && p[pi] == '*': // a wildcard even where the name has a '*'
			star, mark = pi, ni
			pi++
		case pi < len(p) && (p[pi] == '?' || p[pi] == name[ni]):
			pi++
			ni++
		case star >= 0:
			pi = star + 1
			mark++
			ni = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}
