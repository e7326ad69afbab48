package actions_test

import (
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"testing"

	"forgeapi/internal/app"
	"forgeapi/internal/apptest"
)

// cacheKeys lists the keys of octo/hello's caches, sorted.
func cacheKeys(t *testing.T, f *fixture) string {
	t.Helper()
	caches, _, err := f.c.Actions.ListCaches(apptest.Ctx(), "octo", "hello", nil)
	apptest.Must(t, "list caches", err)
	var keys []string
	for _, c := range caches.ActionsCaches {
		keys = append(keys, c.GetKey())
	}
	sort.Strings(keys)
	return strings.Join(keys, ",")
}

// doPolicy sends a request to a cache usage policy and checks its status;
// it returns the body.
func doPolicy(t *testing.T, env *apptest.Env, method, path, token, body string, want int) string {
	t.Helper()
	resp, b := env.DoJSON(method, path, token, body)
	if resp.StatusCode != want {
		t.Fatalf("%s %s %s: %d %s; want %d", method, path, body, resp.StatusCode, b, want)
	}
	return strings.TrimSpace(string(b))
}

// wantFieldError checks a 422 body names the field in errors[].
func wantFieldError(t *testing.T, body, field string) {
	t.Helper()
	var e struct {
		Errors []struct{ Field string } `json:"errors"`
	}
	if err := json.Unmarshal([]byte(body), &e); err != nil || len(e.Errors) != 1 || e.Errors[0].Field != field {
		t.Fatalf("errors %s; want one on %s", body, field)
	}
}

// TestCacheUsagePoliciesEvictAndPersist: an organization repository of an
// enterprise starts with the enterprise's default limit (the server's 10
// GB) and maximum (25 GB); a repository limit over the maximum, or an
// enterprise default over its maximum, is a 422; lowering the
// enterprise's default evicts the repository's least recently used
// entries at once, as does lowering the repository's own limit; the
// policies survive a restart. A "gigabyte" is 10 bytes here.
func TestCacheUsagePoliciesEvictAndPersist(t *testing.T) {
	t.Parallel()
	apptest.SkipJobsUnderRace(t)
	env := apptest.Start(t, withRunner, func(c *app.Config) { c.ActionsCacheGB = 10 })
	mona := env.User("mona", apptest.UserOpts{Email: "mona@example.com"})
	org := env.Org("octo", mona)
	env.Repo(org, "hello")
	env.Enterprise("acme", mona, org)
	token := env.Token(mona, "repo", "workflow", "admin:enterprise")
	f := &fixture{env: env, owner: org, token: token, c: env.Client(token), work: apptest.WorkTree(t, nil)}
	apptest.Git(t, f.work, "remote", "add", "origin", env.GitURL("octo", "hello", "mona", token))
	const repoPolicy, entPolicy = "/repos/octo/hello/actions/cache/usage-policy", "/enterprises/acme/actions/cache/usage-policy"

	apptest.Step(t, "three entries fit the default limit", func(t *testing.T) {
		f.push(t, map[string]string{".github/workflows/limit.yml": limitWorkflow})
		if run := f.completedRun(t, "limit.yml", 1); run.GetConclusion() != "success" {
			t.Fatalf("run %s", run.GetConclusion())
		}
		if keys := cacheKeys(t, f); keys != "first,second,third" {
			t.Fatalf("caches %s", keys)
		}
		if b := doPolicy(t, env, "GET", repoPolicy, token, "", 200); b != `{"repo_cache_size_limit_in_gb":10}` {
			t.Fatalf("repository policy %s", b)
		}
		if b := doPolicy(t, env, "GET", entPolicy, token, "", 200); b != `{"repo_cache_size_limit_in_gb":10,"max_repo_cache_size_limit_in_gb":25}` {
			t.Fatalf("enterprise policy %s", b)
		}
	})
	apptest.Step(t, "limits out of bounds are refused", func(t *testing.T) {
		wantFieldError(t, doPolicy(t, env, "PATCH", repoPolicy, token, `{"repo_cache_size_limit_in_gb":26}`, 422), "repo_cache_size_limit_in_gb")
		wantFieldError(t, doPolicy(t, env, "PATCH", repoPolicy, token, `{}`, 422), "repo_cache_size_limit_in_gb")
		wantFieldError(t, doPolicy(t, env, "PATCH", entPolicy, token, `{"max_repo_cache_size_limit_in_gb":3}`, 422), "repo_cache_size_limit_in_gb")
		wantFieldError(t, doPolicy(t, env, "PATCH", entPolicy, token, `{"max_repo_cache_size_limit_in_gb":0}`, 422), "max_repo_cache_size_limit_in_gb")
	})
	apptest.Step(t, "the enterprise lowers its default", func(t *testing.T) {
		doPolicy(t, env, "PATCH", entPolicy, token, `{"repo_cache_size_limit_in_gb":2,"max_repo_cache_size_limit_in_gb":3}`, http.StatusNoContent)
		if keys := cacheKeys(t, f); keys != "first,third" {
			t.Fatalf("caches %s; want the second (least recently used) evicted", keys)
		}
		if b := doPolicy(t, env, "GET", repoPolicy, token, "", 200); b != `{"repo_cache_size_limit_in_gb":2}` {
			t.Fatalf("repository policy %s", b)
		}
	})
	apptest.Step(t, "the repository lowers its own limit", func(t *testing.T) {
		wantFieldError(t, doPolicy(t, env, "PATCH", repoPolicy, token, `{"repo_cache_size_limit_in_gb":4}`, 422), "repo_cache_size_limit_in_gb")
		doPolicy(t, env, "PATCH", repoPolicy, token, `{"repo_cache_size_limit_in_gb":1}`, http.StatusNoContent)
		if keys := cacheKeys(t, f); keys != "third" {
			t.Fatalf("caches %s; want the first evicted", keys)
		}
		usage, _, err := f.c.Actions.GetCacheUsageForRepo(apptest.Ctx(), "octo", "hello")
		apptest.Must(t, "cache usage", err)
		if usage.ActiveCachesSizeInBytes != 10 || usage.ActiveCachesCount != 1 {
			t.Fatalf("usage %+v", usage)
		}
	})
	apptest.Step(t, "the policies survive a restart", func(t *testing.T) {
		env.Stop()
		env2 := apptest.StartConfig(t, env.Config)
		if b := doPolicy(t, env2, "GET", repoPolicy, token, "", 200); b != `{"repo_cache_size_limit_in_gb":1}` {
			t.Fatalf("repository policy %s", b)
		}
		if b := doPolicy(t, env2, "GET", entPolicy, token, "", 200); b != `{"repo_cache_size_limit_in_gb":2,"max_repo_cache_size_limit_in_gb":3}` {
			t.Fatalf("enterprise policy %s", b)
		}
	})
}
