package apptest

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// NodeModules returns the repository's testdata/node folder when node
// and its npm modules are installed there (`npm ci`; .ci/run does it),
// module (such as "@octokit/rest") among them. Without them the test is
// skipped, except in CI (CI set), where it fails: CI installs them.
func NodeModules(t testing.TB, module string) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "testdata", "node")
	_, nodeErr := exec.LookPath("node")
	_, modErr := os.Stat(filepath.Join(dir, "node_modules", filepath.FromSlash(module)))
	if nodeErr != nil || modErr != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI lacks node (%v) or the npm modules of testdata/node (%v)", nodeErr, modErr)
		}
		t.Skip("node or testdata/node/node_modules missing (run npm ci in testdata/node)")
	}
	return dir
}
