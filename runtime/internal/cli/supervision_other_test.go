//go:build !linux || toolnode_darwin_proc

package cli_test

// subreaper is false under the macOS supervision (and its Linux build, tag
// toolnode_darwin_proc): orphans go to init, which reaps them, and a watchdog stops the
// bundles of a node that died.
const subreaper = false
