//go:build darwin || (linux && toolnode_darwin_proc)

package proc

// inCgroups is false: only the Linux supervision starts bundles in cgroups.
func inCgroups() bool { return false }
