package mcp

import "slices"

// Protocol revisions this code speaks, oldest first.
const (
	Version20241105 = "2024-11-05"
	Version20250326 = "2025-03-26"
	Version20250618 = "2025-06-18"
	Version20251125 = "2025-11-25"

	// LatestVersion is the revision offered in initialize and answered when a peer asks for
	// one we do not know.
	LatestVersion = Version20251125
)

// SupportedVersions lists every revision accepted from a peer, oldest first.
func SupportedVersions() []string {
	return []string{Version20241105, Version20250326, Version20250618, Version20251125}
}

// IsSupportedVersion reports whether v is a revision this code speaks.
func IsSupportedVersion(v string) bool {
	return slices.Contains(SupportedVersions(), v)
}

// NegotiateVersion returns the revision a server answers to a client that requested
// requested: the same one when supported, else the latest (the client then decides whether
// it can go on, as the lifecycle section of the spec says).
func NegotiateVersion(requested string) string {
	if IsSupportedVersion(requested) {
		return requested
	}
	return LatestVersion
}

// AllowsBatches reports whether JSON-RPC batches are part of revision v; only 2025-03-26
// had them.
func AllowsBatches(v string) bool { return v == Version20250326 }
