//go:build race

package cluster

// raceDetector is set when the tests run with -race, which multiplies what a process holds.
const raceDetector = true
