package e2e_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/git/githttp"
	"forgeapi/internal/githost"
	"forgeapi/internal/webhooks"
)

// project is a local clone of a repository of the server.
type project struct {
	t   *testing.T
	dir string
}

// newProject pushes main (README.md, app.txt) to OWNER/REPO as login.
func newProject(t *testing.T, env *apptest.Env, owner, repo, login, token string) *project {
	dir := apptest.WorkTree(t, map[string]string{"README.md": "# hello\n", "app.txt": "one\ntwo\nthree\n"})
	apptest.Git(t, dir, "remote", "add", "origin", env.GitURL(owner, repo, login, token))
	apptest.Git(t, dir, "push", "-q", "origin", "main")
	return &project{t: t, dir: dir}
}

// commitOn commits the files on branch (made from main when new), pushes
// it and returns the commit.
func (p *project) commitOn(branch, message string, files map[string]string) string {
	if out, _ := apptest.TryGit(p.t, p.dir, "rev-parse", "--verify", "-q", "refs/heads/"+branch); strings.TrimSpace(out) == "" {
		apptest.Git(p.t, p.dir, "branch", branch, "main")
	}
	apptest.Git(p.t, p.dir, "checkout", "-q", branch)
	sha := apptest.Commit(p.t, p.dir, message, files)
	apptest.Git(p.t, p.dir, "push", "-q", "origin", branch)
	apptest.Git(p.t, p.dir, "checkout", "-q", "main")
	return sha
}

// remoteRef is the commit ref names on the server.
func (p *project) remoteRef(ref string) string {
	apptest.Git(p.t, p.dir, "fetch", "-q", "origin", "+"+ref+":refs/remotes/check/x")
	return strings.TrimSpace(apptest.Git(p.t, p.dir, "rev-parse", "refs/remotes/check/x"))
}

func wantStatus(t *testing.T, what string, resp *github.Response, status int) {
	t.Helper()
	if got := apptest.ResponseStatus(resp); got != status {
		t.Fatalf("%s: status %d, want %d", what, got, status)
	}
}

// TestMergeBranches merges a branch and a commit into main with
// go-github's Repositories.Merge: a merge commit whose parents are main
// and the head, pushed (the push event reaches a hook, signed); the same
// head again is a 204; missing bases and heads are the platform's 404s, a
// conflict its 409, a body without head a 422, and a reader's token is
// refused.
func TestMergeBranches(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	ctx := apptest.Ctx()
	octo, bob := env.User("octo"), env.User("bob")
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo", "admin:repo_hook")
	c := env.Client(token)
	proj := newProject(t, env, "octo", "hello", "octo", token)
	rc := apptest.NewReceiver(t, "s")
	_, _, err := c.Repositories.CreateHook(ctx, "octo", "hello", &github.Hook{Events: []string{"push"},
		Config: &github.HookConfig{URL: github.Ptr(rc.URL), ContentType: github.Ptr("json"), Secret: github.Ptr("s")}})
	apptest.Must(t, "hook", err)

	var mergeSHA string
	apptest.Step(t, "a branch merges into main as a push", func(t *testing.T) {
		main := proj.remoteRef("refs/heads/main")
		feature := proj.in(t).commitOn("feature", "Feature", map[string]string{"feature.txt": "f\n"})
		commit, resp, err := c.Repositories.Merge(ctx, "octo", "hello", github.RepositoryMergeRequest{Base: "main", Head: "feature"})
		apptest.Must(t, "merge", err)
		wantStatus(t, "merge", resp, http.StatusCreated)
		mergeSHA = commit.GetSHA()
		if proj.in(t).remoteRef("refs/heads/main") != mergeSHA || len(commit.Parents) != 2 ||
			commit.Parents[0].GetSHA() != main || commit.Parents[1].GetSHA() != feature ||
			commit.GetCommit().GetMessage() != "Merge feature into main\n" || commit.GetCommit().GetCommitter().GetName() != "octo" {
			t.Fatalf("merge commit %+v", commit)
		}
		rc.WaitFor(t, func(d apptest.Delivery) string {
			if p, ok := d.Parsed.(*github.PushEvent); ok && p.GetAfter() == mergeSHA {
				return "push " + p.GetRef()
			}
			return ""
		}, "push refs/heads/main")
	})
	apptest.Step(t, "nothing to merge is a 204", func(t *testing.T) {
		_, resp, err := c.Repositories.Merge(ctx, "octo", "hello", github.RepositoryMergeRequest{Base: "main", Head: "feature"})
		apptest.Must(t, "merge again", err)
		wantStatus(t, "merge again", resp, http.StatusNoContent)
	})
	apptest.Step(t, "a commit SHA merges with the message given", func(t *testing.T) {
		sha := proj.in(t).commitOn("other", "Other", map[string]string{"other.txt": "o\n"})
		commit, _, err := c.Repositories.Merge(ctx, "octo", "hello", github.RepositoryMergeRequest{Base: "main", Head: sha[:12],
			CommitMessage: github.Ptr("Ship it")})
		apptest.Must(t, "merge a SHA", err)
		if commit.GetCommit().GetMessage() != "Ship it" || commit.Parents[1].GetSHA() != sha || commit.Parents[0].GetSHA() != mergeSHA {
			t.Fatalf("merged SHA: %+v", commit)
		}
	})
	apptest.Step(t, "missing bases and heads, conflicts and bad bodies", func(t *testing.T) {
		resp, body := env.DoJSON("POST", "/repos/octo/hello/merges", token, `{"base":"nope","head":"feature"}`)
		if e := apptest.WantError(t, "missing base", resp, body, http.StatusNotFound); e.Message != "Base does not exist" {
			t.Fatalf("missing base: %q", e.Message)
		}
		resp, body = env.DoJSON("POST", "/repos/octo/hello/merges", token, `{"base":"main","head":"nope"}`)
		if e := apptest.WantError(t, "missing head", resp, body, http.StatusNotFound); e.Message != "Head does not exist" {
			t.Fatalf("missing head: %q", e.Message)
		}
		proj.in(t).commitOn("left", "Left", map[string]string{"app.txt": "one\nleft\nthree\n"})
		proj.in(t).commitOn("right", "Right", map[string]string{"app.txt": "one\nright\nthree\n"})
		_, _, err := c.Repositories.Merge(ctx, "octo", "hello", github.RepositoryMergeRequest{Base: "left", Head: "right"})
		if e, ok := err.(*github.ErrorResponse); !ok || e.Response.StatusCode != http.StatusConflict || e.Message != "Merge conflict" {
			t.Fatalf("conflict: %v", err)
		}
		resp, body = env.DoJSON("POST", "/repos/octo/hello/merges", token, `{"base":"main"}`)
		if e := apptest.WantError(t, "no head", resp, body, http.StatusUnprocessableEntity); len(e.Errors) != 1 || e.Errors[0].Field != "head" {
			t.Fatalf("no head: %+v", e)
		}
	})
	apptest.Step(t, "readers cannot merge", func(t *testing.T) {
		_, resp, _ := env.Client(env.Token(bob, "repo")).Repositories.Merge(ctx, "octo", "hello", github.RepositoryMergeRequest{Base: "main", Head: "right"})
		wantStatus(t, "a reader's merge", resp, http.StatusForbidden)
		_, resp, _ = env.Client(env.FineGrainedToken(octo, octo, nil, "contents:read")).Repositories.Merge(ctx, "octo", "hello",
			github.RepositoryMergeRequest{Base: "main", Head: "right"})
		wantStatus(t, "a contents:read token's merge", resp, http.StatusForbidden)
	})
}

// TestMergeUpstream syncs a fork's main with its upstream through
// go-github's MergeUpstream: none while level, a fast forward when only
// the upstream moved, a merge when both did, a conflict's 409, and 422s
// for a repository that is not a fork and a missing branch.
func TestMergeUpstream(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo, bob := env.User("octo"), env.User("bob")
	upstream := env.Repo(octo, "hello")
	octoToken := env.Token(octo, "repo")
	up := newProject(t, env, "octo", "hello", "octo", octoToken)
	_, err := env.App.Repos.Fork(ctx, upstream, bob, "hello", false, bob)
	apptest.Must(t, "fork", err)
	bobToken := env.Token(bob, "repo")
	c := env.Client(bobToken)
	fork := &project{t: t, dir: apptest.WorkTree(t, nil)}
	apptest.Git(t, fork.dir, "remote", "add", "origin", env.GitURL("bob", "hello", "bob", bobToken))
	apptest.Git(t, fork.dir, "fetch", "-q", "origin", "main")
	apptest.Git(t, fork.dir, "checkout", "-q", "-b", "main", "FETCH_HEAD")
	sync := func(t *testing.T, wantType string) *github.RepoMergeUpstreamResult {
		t.Helper()
		res, resp, err := c.Repositories.MergeUpstream(ctx, "bob", "hello", github.RepoMergeUpstreamRequest{Branch: "main"})
		apptest.Must(t, "merge upstream", err)
		wantStatus(t, "merge upstream", resp, http.StatusOK)
		if res.GetMergeType() != wantType || res.GetBaseBranch() != "octo:main" {
			t.Fatalf("merge upstream: %+v, want %s", res, wantType)
		}
		return res
	}

	apptest.Step(t, "level: nothing to do", func(t *testing.T) {
		if res := sync(t, "none"); res.GetMessage() != "This branch is not behind the upstream octo:main." {
			t.Fatalf("none: %q", res.GetMessage())
		}
	})
	apptest.Step(t, "behind: a fast forward", func(t *testing.T) {
		apptest.Commit(t, up.dir, "Upstream one", map[string]string{"up.txt": "1\n"})
		apptest.Git(t, up.dir, "push", "-q", "origin", "main")
		upTip := up.in(t).remoteRef("refs/heads/main")
		res := sync(t, "fast-forward")
		if res.GetMessage() != "Successfully fetched and fast-forwarded from upstream octo:main." || fork.in(t).remoteRef("refs/heads/main") != upTip {
			t.Fatalf("fast forward: %+v", res)
		}
	})
	apptest.Step(t, "diverged: a merge", func(t *testing.T) {
		apptest.Git(t, fork.dir, "pull", "-q", "--ff-only", "origin", "main")
		apptest.Commit(t, fork.dir, "Fork's own", map[string]string{"fork.txt": "f\n"})
		apptest.Git(t, fork.dir, "push", "-q", "origin", "main")
		apptest.Commit(t, up.dir, "Upstream two", map[string]string{"up.txt": "2\n"})
		apptest.Git(t, up.dir, "push", "-q", "origin", "main")
		forkTip, upTip := fork.in(t).remoteRef("refs/heads/main"), up.in(t).remoteRef("refs/heads/main")
		sync(t, "merge")
		parents := strings.Fields(apptest.Git(t, fork.dir, "show", "-s", "--format=%P", fork.in(t).remoteRef("refs/heads/main")))
		if len(parents) != 2 || parents[0] != forkTip || parents[1] != upTip {
			t.Fatalf("merge parents %v, want %s %s", parents, forkTip, upTip)
		}
	})
	apptest.Step(t, "conflicts and refusals", func(t *testing.T) {
		apptest.Git(t, fork.dir, "pull", "-q", "--ff-only", "origin", "main")
		apptest.Commit(t, fork.dir, "Fork edits", map[string]string{"app.txt": "fork\n"})
		apptest.Git(t, fork.dir, "push", "-q", "origin", "main")
		apptest.Commit(t, up.dir, "Upstream edits", map[string]string{"app.txt": "upstream\n"})
		apptest.Git(t, up.dir, "push", "-q", "origin", "main")
		_, resp, _ := c.Repositories.MergeUpstream(ctx, "bob", "hello", github.RepoMergeUpstreamRequest{Branch: "main"})
		wantStatus(t, "conflict", resp, http.StatusConflict)
		_, resp, _ = c.Repositories.MergeUpstream(ctx, "bob", "hello", github.RepoMergeUpstreamRequest{Branch: "nope"})
		wantStatus(t, "missing branch", resp, http.StatusUnprocessableEntity)
		_, resp, _ = env.Client(octoToken).Repositories.MergeUpstream(ctx, "octo", "hello", github.RepoMergeUpstreamRequest{Branch: "main"})
		wantStatus(t, "not a fork", resp, http.StatusUnprocessableEntity)
		_, resp, _ = env.Client(octoToken).Repositories.MergeUpstream(ctx, "bob", "hello", github.RepoMergeUpstreamRequest{Branch: "main"})
		wantStatus(t, "someone else's fork", resp, http.StatusForbidden)
	})
}

// in returns the project failing t (a step's) when git fails.
func (p *project) in(t *testing.T) *project { return &project{t: t, dir: p.dir} }

// TestMergesArePushes: a push check (as rulesets and protections are)
// sees the merges API's and merge-upstream's branch moves as pushes by
// the caller, and its refusal is the platform's 409 with its reason;
// nothing moves.
func TestMergesArePushes(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var seen []string
	refuse := func(ctx context.Context, p *githost.Push) error {
		mu.Lock()
		defer mu.Unlock()
		for _, u := range p.Updates {
			seen = append(seen, p.Pusher.Login+" "+u.Ref)
			if u.Ref == "refs/heads/frozen" && strings.Trim(u.OldSHA, "0") != "" { // made, then frozen
				return &githttp.RefusalError{Message: "frozen is frozen"}
			}
		}
		return nil
	}
	env := apptest.Start(t, apptest.WithPushCheck(refuse))
	ctx := apptest.Ctx()
	octo := env.User("octo")
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo")
	c := env.Client(token)
	proj := newProject(t, env, "octo", "hello", "octo", token)
	apptest.Git(t, proj.dir, "push", "-q", "origin", "main:frozen")
	proj.commitOn("feature", "Feature", map[string]string{"f.txt": "f\n"})
	frozen := proj.remoteRef("refs/heads/frozen")
	_, _, err := c.Repositories.Merge(ctx, "octo", "hello", github.RepositoryMergeRequest{Base: "frozen", Head: "feature"})
	e, ok := err.(*github.ErrorResponse)
	if !ok || e.Response.StatusCode != http.StatusConflict || !strings.Contains(e.Message, "frozen is frozen") {
		t.Fatalf("a refused merge: %v", err)
	}
	if proj.remoteRef("refs/heads/frozen") != frozen {
		t.Fatal("a refused merge moved the branch")
	}
	_, _, err = c.Repositories.Merge(ctx, "octo", "hello", github.RepositoryMergeRequest{Base: "main", Head: "feature"})
	apptest.Must(t, "an allowed merge", err)
	mu.Lock()
	defer mu.Unlock()
	if !slices.Contains(seen, "octo refs/heads/frozen") || !slices.Contains(seen, "octo refs/heads/main") {
		t.Fatalf("the push checks saw %v", seen)
	}
}
