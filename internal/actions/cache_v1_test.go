package actions_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// cacheV1Workflow saves a cache with the official client (@actions/cache)
// in one job and restores it by a restore key in the next, with the job's
// own GITHUB_SERVER_URL (the server's 127.0.0.1 address): the client
// takes it for the self-managed edition and speaks the v1 protocol. The
// 40 MB of random data make two chunks (the client's are 32 MiB), sent
// concurrently.
const cacheV1Workflow = `name: Cache v1
on: push
jobs:
  save:
    runs-on: ubuntu-latest
    steps:
      - run: |
          mkdir -p cached
          echo kept > cached/c.txt
          head -c 40000000 /dev/urandom > cached/big.bin
          sha256sum cached/big.bin | cut -d' ' -f1 > sum.txt
          echo "server $GITHUB_SERVER_URL sum $(cat sum.txt)"
          node SCRIPT cache-save deps-v1-abc cached
          node SCRIPT cache-save deps-v1-abc cached || echo "second save refused"
  restore:
    needs: save
    runs-on: ubuntu-latest
    steps:
      - run: |
          node SCRIPT cache-restore deps-v1-xyz deps-v1- cached
          echo "restored $(cat cached/c.txt) sum $(sha256sum cached/big.bin | cut -d' ' -f1)"
          node SCRIPT cache-restore other-key other- missing
`

// TestCacheV1WithTheOfficialClient runs @actions/cache against the v1
// protocol: the save reserves, uploads two chunks and commits; the
// restore finds the entry by its restore key and gets the same bytes; a
// miss restores nothing; the entry is listed by the REST API.
func TestCacheV1WithTheOfficialClient(t *testing.T) {
	t.Parallel()
	apptest.SkipJobsUnderRace(t)
	node := apptest.NodeModules(t, "@actions/cache")
	f := start(t)
	f.push(t, map[string]string{".github/workflows/cache.yml": strings.ReplaceAll(cacheV1Workflow, "SCRIPT",
		filepath.Join(node, "actions-runtime.mjs"))})
	run := f.completedRun(t, "cache.yml", 1)
	jobs := jobsByName(t, f, run.GetID(), "")
	saveLog, restoreLog := f.jobLog(t, jobs["save"].GetID()), f.jobLog(t, jobs["restore"].GetID())
	if run.GetConclusion() != "success" {
		t.Fatalf("run %s; save:\n%s\nrestore:\n%s", run.GetConclusion(), saveLog, restoreLog)
	}
	_, sum, _ := strings.Cut(saveLog, "server "+f.env.URL+" sum ")
	sum, _, _ = strings.Cut(sum, "\n")
	if len(sum) != 64 || !strings.Contains(saveLog, "Cache saved successfully") {
		t.Fatalf("save:\n%s", saveLog)
	}
	for _, want := range []string{`"matched":"deps-v1-abc"`, "restored kept sum " + sum, `"matched":null`} {
		if !strings.Contains(restoreLog, want) {
			t.Fatalf("restore lacks %q:\n%s", want, restoreLog)
		}
	}
	if !strings.Contains(saveLog, "another job may be creating this cache") && !strings.Contains(saveLog, "already exists") {
		t.Errorf("the second save of the key was not refused:\n%s", saveLog)
	}
	caches, _, err := f.c.Actions.ListCaches(apptest.Ctx(), "octo", "hello", &github.ActionsCacheListOptions{Key: github.Ptr("deps-")})
	apptest.Must(t, "list caches", err)
	if caches.TotalCount != 1 || caches.ActionsCaches[0].GetSizeInBytes() < 40000000 {
		t.Fatalf("caches: %+v", caches)
	}
}
