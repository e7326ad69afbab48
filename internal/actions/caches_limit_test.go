package actions_test

import (
	"sort"
	"strings"
	"testing"

	"forgeapi/internal/app"
	"forgeapi/internal/apptest"
)

// limitWorkflow commits three 10-byte cache entries over the v1
// protocol, reading the first between the second and the third.
const limitWorkflow = `name: Limit
on: push
jobs:
  save:
    runs-on: ubuntu-latest
    steps:
      - run: |
          set -e
          auth="Authorization: Bearer $ACTIONS_RUNTIME_TOKEN"
          v1="${ACTIONS_CACHE_URL}_apis/artifactcache"
          save() {
            id=$(curl -sf -X POST -H "$auth" -H 'Content-Type: application/json' -d "{\"key\":\"$1\",\"version\":\"v\"}" "$v1/caches" | tr -dc 0-9)
            printf 'chunk-data' | curl -sf -X PATCH -H "$auth" -H 'Content-Type: application/octet-stream' -H 'Content-Range: bytes 0-9/*' --data-binary @- "$v1/caches/$id"
            curl -sf -X POST -H "$auth" -H 'Content-Type: application/json' -d '{"size":10}' "$v1/caches/$id"
            sleep 0.2
          }
          save first
          save second
          curl -sf -o /dev/null -w "read first %{http_code}\n" -H "$auth" "$v1/cache?keys=first&version=v"
          sleep 0.2
          save third
`

// TestCacheSizeLimitEvictsLeastRecentlyUsed: with a repository limit of
// 25 bytes, committing a third 10-byte entry evicts the least recently
// used one (the second: the first was read since), as the platform
// evicts over its 10 GB.
func TestCacheSizeLimitEvictsLeastRecentlyUsed(t *testing.T) {
	t.Parallel()
	apptest.SkipJobsUnderRace(t)
	env := apptest.Start(t, withRunner, func(c *app.Config) { c.ActionsCacheLimit = 25 })
	owner := env.User("octo", apptest.UserOpts{Email: "octo@example.com"})
	env.Repo(owner, "hello")
	token := env.Token(owner, "repo", "workflow")
	f := &fixture{env: env, owner: owner, token: token, c: env.Client(token), work: apptest.WorkTree(t, nil)}
	apptest.Git(t, f.work, "remote", "add", "origin", env.GitURL("octo", "hello", "octo", token))
	f.push(t, map[string]string{".github/workflows/limit.yml": limitWorkflow})
	run := f.completedRun(t, "limit.yml", 1)
	log := f.jobLog(t, jobsByName(t, f, run.GetID(), "")["save"].GetID())
	if run.GetConclusion() != "success" || !strings.Contains(log, "read first 200") {
		t.Fatalf("run %s:\n%s", run.GetConclusion(), log)
	}
	caches, _, err := f.c.Actions.ListCaches(apptest.Ctx(), "octo", "hello", nil)
	apptest.Must(t, "list caches", err)
	var keys []string
	for _, c := range caches.ActionsCaches {
		keys = append(keys, c.GetKey())
	}
	sort.Strings(keys)
	if strings.Join(keys, ",") != "first,third" {
		t.Fatalf("caches %v; want the second evicted", keys)
	}
	usage, _, err := f.c.Actions.GetCacheUsageForRepo(apptest.Ctx(), "octo", "hello")
	apptest.Must(t, "cache usage", err)
	if usage.ActiveCachesSizeInBytes != 20 || usage.ActiveCachesCount != 2 {
		t.Fatalf("usage %+v", usage)
	}
}
