//go:build race

package apptest

// raceDetector reports whether the test binary runs under the race
// detector (go test -race).
const raceDetector = true
