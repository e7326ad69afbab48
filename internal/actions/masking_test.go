package actions_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"forgeapi/internal/apptest"
)

// TestJobTokensAreMaskedInLogs runs a job whose steps print its
// ACTIONS_RUNTIME_TOKEN and its GITHUB_TOKEN (as github.token, through
// the environment and as secrets.GITHUB_TOKEN) and keep them in files
// the test reads: the log shows *** where each was printed and neither
// value anywhere.
func TestJobTokensAreMaskedInLogs(t *testing.T) {
	t.Parallel()
	apptest.SkipJobsUnderRace(t)
	f := start(t)
	dir := t.TempDir()
	f.push(t, map[string]string{".github/workflows/mask.yml": strings.ReplaceAll(`on: push
jobs:
  show:
    runs-on: ubuntu-latest
    env:
      TOKEN_FROM_ENV: ${{ github.token }}
    steps:
      - run: |
          printf '%s' "$ACTIONS_RUNTIME_TOKEN" > DIR/runtime
          printf '%s' "$TOKEN_FROM_ENV" > DIR/token
          echo "runtime [$ACTIONS_RUNTIME_TOKEN]"
          echo "env [$TOKEN_FROM_ENV] expr [${{ github.token }}] secret [${{ secrets.GITHUB_TOKEN }}]"
`, "DIR", dir)})
	run := f.completedRun(t, "mask.yml", 1)
	log := f.jobLog(t, jobsByName(t, f, run.GetID(), "")["show"].GetID())
	if run.GetConclusion() != "success" {
		t.Fatalf("run %s:\n%s", run.GetConclusion(), log)
	}
	for _, name := range []string{"runtime", "token"} {
		v, err := os.ReadFile(filepath.Join(dir, name))
		apptest.Must(t, "read the "+name+" the step saw", err)
		if len(v) < 20 {
			t.Fatalf("the step's %s is %q", name, v)
		}
		if strings.Contains(log, string(v)) {
			t.Fatalf("the %s is in the log:\n%s", name, log)
		}
	}
	if !strings.Contains(log, "runtime [***]") || !strings.Contains(log, "env [***] expr [***] secret [***]") {
		t.Fatalf("log:\n%s", log)
	}
}
