// Package version holds the release the node belongs to. The node and the three SDKs share
// one version, written once in the checkout's VERSION file; Go code cannot read that file
// when it is built from a module proxy, so the constant repeats it and
// runtime/internal/release's tests hold the two (and every other copy) equal.
package version

// Version is the release of the node and its SDKs (semver, without the Go tag's "v").
const Version = "0.3.0"

// Tag is the Go module tag of this release, as `go install ...@Tag` takes it.
const Tag = "v" + Version
