//go:build !race

package actions_test

// raceDetector reports whether the test runs under the race detector.
const raceDetector = false
