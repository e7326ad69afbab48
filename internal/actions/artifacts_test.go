package actions_test

import (
	"archive/zip"
	"bytes"
	"net/http"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/webhooks"
)

// runtimeWorkflow uploads an artifact and saves a cache with the official
// clients (@actions/artifact, @actions/cache) in one job, and downloads
// and restores them in the next. GITHUB_SERVER_URL is a *.localhost name
// for the clients only: they refuse (artifacts) or downgrade (caches)
// any other host than github.com, *.ghe.com and *.localhost.
const runtimeWorkflow = `name: Runtime
on: push
jobs:
  produce:
    runs-on: ubuntu-latest
    steps:
      - run: |
          mkdir -p out/sub cached
          echo hello > out/a.txt
          echo world > out/sub/b.txt
          echo kept > cached/c.txt
          export GITHUB_SERVER_URL=http://forgeapi.localhost
          node SCRIPT upload dist out
          node SCRIPT cache-save deps-v1-abc cached
  consume:
    needs: produce
    runs-on: ubuntu-latest
    steps:
      - run: |
          export GITHUB_SERVER_URL=http://forgeapi.localhost
          node SCRIPT download dist got
          echo "got $(cat got/a.txt) $(cat got/sub/b.txt)"
          node SCRIPT cache-restore deps-v1-xyz deps-v1- cached
          echo "restored $(cat cached/c.txt)"
`

func TestArtifactsAndCachesWithTheOfficialClients(t *testing.T) {
	apptest.SkipJobsUnderRace(t)
	node := apptest.NodeModules(t, "@actions/artifact")
	var offset atomic.Int64
	clock := func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	env := apptest.Start(t, withRunner, apptest.WithClock(clock), apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	owner := env.User("octocat", apptest.UserOpts{Email: "octocat@example.com"})
	org := env.Org("octo", owner)
	env.Repo(org, "hello")
	env.Enterprise("ent", owner, org)
	token := env.Token(owner, "repo", "workflow", "read:org", "admin:enterprise")
	f := &fixture{env: env, owner: owner, token: token, c: env.Client(token), work: apptest.WorkTree(t, nil)}
	apptest.Git(t, f.work, "remote", "add", "origin", env.GitURL("octo", "hello", "octocat", token))
	script := filepath.Join(node, "actions-runtime.mjs")
	f.push(t, map[string]string{".github/workflows/runtime.yml": strings.ReplaceAll(runtimeWorkflow, "SCRIPT", script)})
	run := f.completedRun(t, "runtime.yml", 1)
	jobs := jobsByName(t, f, run.GetID(), "")
	if run.GetConclusion() != "success" {
		t.Fatalf("run %s; produce log:\n%s\nconsume log:\n%s", run.GetConclusion(), f.jobLog(t, jobs["produce"].GetID()),
			f.jobLog(t, jobs["consume"].GetID()))
	}
	consumeLog := f.jobLog(t, jobs["consume"].GetID())
	for _, want := range []string{"got hello world", "restored kept", `"listed":["dist"]`, `"matched":"deps-v1-abc"`} {
		if !strings.Contains(consumeLog, want) {
			t.Errorf("consume log lacks %q:\n%s", want, consumeLog)
		}
	}
	ctx := apptest.Ctx()

	// The REST API: the run's and the repository's artifacts, the zip.
	list, _, err := f.c.Actions.ListWorkflowRunArtifacts(ctx, "octo", "hello", run.GetID(), nil)
	apptest.Must(t, "list run artifacts", err)
	if list.GetTotalCount() != 1 || list.Artifacts[0].GetName() != "dist" || list.Artifacts[0].GetSizeInBytes() == 0 ||
		list.Artifacts[0].GetExpired() || list.Artifacts[0].GetWorkflowRun().GetHeadSHA() != run.GetHeadSHA() {
		t.Fatalf("run artifacts: %+v", list)
	}
	a := list.Artifacts[0]
	if !strings.HasPrefix(a.GetDigest(), "sha256:") {
		t.Errorf("digest %q", a.GetDigest())
	}
	if days := a.GetExpiresAt().Sub(a.GetCreatedAt().Time).Hours() / 24; days < 4.9 || days > 5.1 {
		t.Errorf("expires after %.1f days, want the 5 the client asked", days)
	}
	all, _, err := f.c.Actions.ListArtifacts(ctx, "octo", "hello", &github.ListArtifactsOptions{Name: github.Ptr("dist")})
	apptest.Must(t, "list artifacts", err)
	if all.GetTotalCount() != 1 || all.Artifacts[0].GetID() != a.GetID() {
		t.Fatalf("artifacts named dist: %+v", all)
	}
	u, resp, err := f.c.Actions.DownloadArtifact(ctx, "octo", "hello", a.GetID(), 0)
	apptest.Must(t, "download artifact", err)
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("download: %d", resp.StatusCode)
	}
	if names := zipNames(t, get(t, u.String())); strings.Join(names, ",") != "a.txt,sub/b.txt" {
		t.Fatalf("zip holds %v", names)
	}

	// Caches: listed with their ref, counted in the usage, deleted by key.
	caches, _, err := f.c.Actions.ListCaches(ctx, "octo", "hello", &github.ActionsCacheListOptions{Key: github.Ptr("deps-")})
	apptest.Must(t, "list caches", err)
	if caches.TotalCount != 1 || caches.ActionsCaches[0].GetKey() != "deps-v1-abc" || caches.ActionsCaches[0].GetRef() != "refs/heads/main" ||
		caches.ActionsCaches[0].GetSizeInBytes() == 0 {
		t.Fatalf("caches: %+v", caches)
	}
	usage, _, err := f.c.Actions.GetCacheUsageForRepo(ctx, "octo", "hello")
	apptest.Must(t, "cache usage", err)
	if usage.GetActiveCachesCount() != 1 || usage.GetActiveCachesSizeInBytes() != caches.ActionsCaches[0].GetSizeInBytes() {
		t.Fatalf("usage: %+v", usage)
	}
	orgUsage, _, err := f.c.Actions.GetTotalCacheUsageForOrg(ctx, "octo")
	apptest.Must(t, "organization cache usage", err)
	entUsage, _, err := f.c.Actions.GetTotalCacheUsageForEnterprise(ctx, "ent")
	apptest.Must(t, "enterprise cache usage", err)
	byRepo, _, err := f.c.Actions.ListCacheUsageByRepoForOrg(ctx, "octo", nil)
	apptest.Must(t, "cache usage by repository", err)
	if orgUsage.TotalActiveCachesCount != 1 || entUsage.TotalActiveCachesUsageSizeInBytes != usage.GetActiveCachesSizeInBytes() ||
		byRepo.TotalCount != 1 || byRepo.RepoCacheUsage[0].GetFullName() != "octo/hello" {
		t.Fatalf("usage: organization %+v, enterprise %+v, by repository %+v", orgUsage, entUsage, byRepo)
	}
	_, err = f.c.Actions.DeleteCachesByKey(ctx, "octo", "hello", "deps-v1-abc", nil)
	apptest.Must(t, "delete caches by key", err)
	caches, _, err = f.c.Actions.ListCaches(ctx, "octo", "hello", nil)
	apptest.Must(t, "list caches", err)
	if caches.TotalCount != 0 {
		t.Fatalf("caches after delete: %+v", caches)
	}

	// Retention: past expires_at the pruner expires it (410 on download).
	offset.Store(int64(6 * 24 * time.Hour))
	n, err := env.App.ActionsArtifactPruner.RunOnce(ctx)
	apptest.Must(t, "prune", err)
	if n != 1 {
		t.Fatalf("pruned %d artifacts, want 1", n)
	}
	got, _, err := f.c.Actions.GetArtifact(ctx, "octo", "hello", a.GetID())
	apptest.Must(t, "get artifact", err)
	if !got.GetExpired() {
		t.Fatalf("artifact not expired: %+v", got)
	}
	if _, resp, _ := f.c.Actions.DownloadArtifact(ctx, "octo", "hello", a.GetID(), 0); resp == nil || resp.StatusCode != http.StatusGone {
		t.Fatalf("download of an expired artifact: %v", resp)
	}
	_, err = f.c.Actions.DeleteArtifact(ctx, "octo", "hello", a.GetID())
	apptest.Must(t, "delete artifact", err)
	if _, resp, _ := f.c.Actions.GetArtifact(ctx, "octo", "hello", a.GetID()); resp == nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("artifact after delete: %v", resp)
	}
}

func zipNames(t *testing.T, body string) []string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader([]byte(body)), int64(len(body)))
	apptest.Must(t, "open zip", err)
	var names []string
	for _, f := range zr.File {
		if !strings.HasSuffix(f.Name, "/") {
			names = append(names, f.Name)
		}
	}
	sort.Strings(names)
	return names
}
