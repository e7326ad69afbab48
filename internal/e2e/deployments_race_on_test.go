//go:build race

package e2e_test

// raceDetector reports whether the test runs under the race detector.
const raceDetector = true
