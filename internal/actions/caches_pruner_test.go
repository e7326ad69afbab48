package actions_test

import (
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"forgeapi/internal/apptest"
	"forgeapi/internal/webhooks"
)

// abandonWorkflow reserves three cache entries with the job's runtime
// token: one over v1 with a chunk uploaded and never committed, one over
// v2 with a block staged and never committed, and one over v1 committed.
const abandonWorkflow = `name: Abandon
on: push
jobs:
  upload:
    runs-on: ubuntu-latest
    steps:
      - run: |
          set -e
          auth="Authorization: Bearer $ACTIONS_RUNTIME_TOKEN"
          v1="${ACTIONS_CACHE_URL}_apis/artifactcache/caches"
          reserve() { curl -sf -X POST -H "$auth" -H 'Content-Type: application/json' -d "{\"key\":\"$1\",\"version\":\"v\"}" "$v1" | tr -dc 0-9; }
          chunk() { printf 'chunk-data' | curl -sf -X PATCH -H "$auth" -H 'Content-Type: application/octet-stream' -H 'Content-Range: bytes 0-9/*' --data-binary @- "$v1/$1"; }
          a=$(reserve abandoned-v1); chunk "$a"
          c=$(reserve committed-v1); chunk "$c"
          curl -sf -X POST -H "$auth" -H 'Content-Type: application/json' -d '{"size":10}' "$v1/$c"
          url=$(curl -sf -X POST -H "$auth" -H 'Content-Type: application/json' -d '{"key":"abandoned-v2","version":"v"}' \
            "${ACTIONS_RESULTS_URL}twirp/github.actions.results.api.v1.CacheService/CreateCacheEntry" | sed 's/.*"signedUploadUrl":"\([^"]*\)".*/\1/')
          printf 'block-data' | curl -sf -X PUT -H 'x-ms-blob-type: BlockBlob' --data-binary @- "$url&comp=block&blockid=YmxvY2stMQ=="
          echo "reserved $a $c"
`

// TestCachePrunerRemovesAbandonedReservations: the reservations a job
// never committed (v1 with a chunk, v2 with a staged block) are removed
// with their blobs once an hour old, the committed entry is kept, and
// is evicted once unread for seven days, as the platform evicts.
func TestCachePrunerRemovesAbandonedReservations(t *testing.T) {
	t.Parallel()
	apptest.SkipJobsUnderRace(t)
	var offset atomic.Int64
	clock := func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	env := apptest.Start(t, withRunner, apptest.WithClock(clock), apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	owner := env.User("octo", apptest.UserOpts{Email: "octo@example.com"})
	env.Repo(owner, "hello")
	token := env.Token(owner, "repo", "workflow")
	f := &fixture{env: env, owner: owner, token: token, c: env.Client(token), work: apptest.WorkTree(t, nil)}
	apptest.Git(t, f.work, "remote", "add", "origin", env.GitURL("octo", "hello", "octo", token))
	f.push(t, map[string]string{".github/workflows/abandon.yml": abandonWorkflow})
	run := f.completedRun(t, "abandon.yml", 1)
	jobs := jobsByName(t, f, run.GetID(), "")
	if log := f.jobLog(t, jobs["upload"].GetID()); run.GetConclusion() != "success" || !strings.Contains(log, "reserved ") {
		t.Fatalf("run %s:\n%s", run.GetConclusion(), log)
	}
	staged := func() []string {
		var names []string
		_ = filepath.WalkDir(env.DataDir, func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasPrefix(d.Name(), "actions-") && strings.Contains(d.Name(), "cache") {
				names = append(names, d.Name())
			}
			return nil
		})
		sort.Strings(names)
		return names
	}
	// The abandoned v1 chunk, the v2 block and the committed archive.
	if got := staged(); len(got) != 3 {
		t.Fatalf("blobs after the uploads: %v", got)
	}
	ctx := apptest.Ctx()
	pruner := env.App.ActionsCachePruner
	if n, err := pruner.RunOnce(ctx); err != nil || n != 0 {
		t.Fatalf("fresh reservations pruned: %d, %v", n, err)
	}

	offset.Store(int64(2 * time.Hour))
	n, err := pruner.RunOnce(ctx)
	apptest.Must(t, "prune", err)
	if got := staged(); n != 2 || len(got) != 1 || !strings.HasPrefix(got[0], "actions-cache-") {
		t.Fatalf("pruned %d, blobs left %v; want the 2 reservations gone and the committed archive kept", n, got)
	}
	caches, _, err := f.c.Actions.ListCaches(ctx, "octo", "hello", nil)
	apptest.Must(t, "list caches", err)
	if caches.TotalCount != 1 || caches.ActionsCaches[0].GetKey() != "committed-v1" {
		t.Fatalf("caches after pruning: %+v", caches)
	}

	offset.Store(int64(8 * 24 * time.Hour))
	n, err = pruner.RunOnce(ctx)
	apptest.Must(t, "evict", err)
	if got := staged(); n != 1 || len(got) != 0 {
		t.Fatalf("evicted %d, blobs left %v", n, got)
	}
	caches, _, err = f.c.Actions.ListCaches(ctx, "octo", "hello", nil)
	apptest.Must(t, "list caches", err)
	if caches.TotalCount != 0 {
		t.Fatalf("caches after eviction: %+v", caches)
	}
}
