// Package release holds the checks a release of the node and its SDKs must pass: one version
// written everywhere, a tagged tree that installs from a module proxy, an SDK whose exported
// API stays compatible, and `make dist`'s artifacts. It has tests only; docs/releasing.md
// says how a release is cut and which of these it runs.
package release
