//go:build !race

package testkit

// RaceDetector is set when the tests run with -race, which multiplies what a process holds:
// bounds on memory are not checked then.
const RaceDetector = false
