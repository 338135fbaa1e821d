package worker

// denySockets has no mechanism on macOS: docs/codemode.md says what a worker keeps there.
func denySockets() error { return nil }
