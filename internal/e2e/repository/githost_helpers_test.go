package repository_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"forgeapi/internal/apptest"
)

func fastImport(t *testing.T, dir, script string) {
	t.Helper()
	cmd := exec.Command("git", "fast-import", "--quiet")
	cmd.Dir = dir
	home := filepath.Join(os.TempDir(), "forgeapi-test-home")
	cmd.Env = apptest.GitEnv(home)
	cmd.Stdin = strings.NewReader(script)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("fast-import: %v\n%s", err, out)
	}
	apptest.Git(t, dir, "reset", "-q", "--hard", "main")
}
