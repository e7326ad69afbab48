//go:build race

package deployments_test

// raceDetector reports whether the test runs under the race detector.
const raceDetector = true
