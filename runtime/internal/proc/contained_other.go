//go:build !linux || toolnode_darwin_proc

package proc

// Contained reports whether this node starts each bundle process in a cgroup of its own:
// only the Linux supervision does.
func Contained() bool { return false }
