//go:build linux && !toolnode_darwin_proc

package testkit

// Subreaper is set where the node is a child subreaper (Linux): it adopts its bundles'
// orphans and reaps them, and a killed node's bundles get the parent-death signal.
const Subreaper = true
