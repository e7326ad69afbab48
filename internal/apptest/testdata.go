package apptest

import (
	"os"
	"path/filepath"
)

// testdataDir is the repository's testdata folder joined with parts, or
// "" when the repository's root cannot be found. The root is the nearest
// folder above the working directory (a test runs in its package's
// folder) that holds go.mod: unlike a source file's compiled-in path, this
// holds under -trimpath, which CI builds with so that its build cache does
// not depend on where the checkout is.
func testdataDir(parts ...string) string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(append([]string{dir, "testdata"}, parts...)...)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}
