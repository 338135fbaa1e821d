//go:build linux && !toolnode_darwin_proc

package cli_test

// subreaper: the node is a child subreaper (Linux), which adopts its bundles' orphans and
// reaps them, and a killed node's bundles get the parent-death signal.
const subreaper = true
