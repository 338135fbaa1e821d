//go:build !linux || toolnode_darwin_proc

package testkit

// Subreaper is false under the macOS supervision (and its Linux build, tag
// toolnode_darwin_proc): orphans go to init, which reaps them in its own time, and a
// watchdog stops the bundles of a node that died.
const Subreaper = false
