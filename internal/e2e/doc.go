// Package e2e holds the end-to-end tests of the smaller API areas (blocks,
// keys, reactions, statuses, deployments...), each in files named after
// its area (blocks_test.go for internal/blocks), run against the real
// server through real clients as every area's tests are. They share one
// test binary: a binary that starts the server links all of it, a few
// seconds of CPU each, and a test binary per small area made linking
// most of the suite's time. An area outgrowing a few files' tests keeps
// them in its own package. The end-to-end tests of a package that also
// has unit tests (store, httpapi) live here too: beside the unit tests
// they made go test compile every package above it a second time.
package e2e
