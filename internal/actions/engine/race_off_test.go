//go:build !race

package engine

// raceDetector reports whether the test runs under the race detector.
const raceDetector = false
