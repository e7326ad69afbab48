package repository_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/git/gitdiff"
)

// TestCommitAndCompareDiffs asks for commits (a root commit, an ordinary
// one, a merge) and a comparison as diffs and patches through go-github
// (GetCommitRaw, CompareCommitsRaw) and at their web addresses, and for
// a commit's SHA alone (GetCommitSHA1): each is what git writes for the
// same revisions.
func TestCommitAndCompareDiffs(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo")
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo")
	work := apptest.WorkTree(t, map[string]string{"README.md": "one\n", "a.txt": "a\n"})
	root := strings.TrimSpace(apptest.Git(t, work, "rev-parse", "HEAD"))
	second := apptest.Commit(t, work, "Change the README\n\nWith a body.", map[string]string{"README.md": "one\ntwo\n", "a.txt": ""})
	apptest.Git(t, work, "checkout", "-q", "-b", "topic/x")
	apptest.Commit(t, work, "Topic work", map[string]string{"topic.txt": "t\n"})
	apptest.Commit(t, work, "More topic work", map[string]string{"topic.txt": "t\nu\n", "README.md": "one\ntwo\nthree\n"})
	apptest.Git(t, work, "checkout", "-q", "main")
	apptest.Commit(t, work, "Main moves on", map[string]string{"later.txt": "l\n"})
	apptest.Git(t, work, "checkout", "-q", "-b", "merged")
	apptest.Git(t, work, "merge", "-q", "--no-ff", "-m", "Merge topic/x", "topic/x")
	merge := strings.TrimSpace(apptest.Git(t, work, "rev-parse", "HEAD"))
	apptest.Git(t, work, "checkout", "-q", "main")
	apptest.Git(t, work, "push", "-q", env.GitURL("octo", "hello", "octo", token), "main", "topic/x", "merged")
	c := env.Client("")
	emptyTree := strings.TrimSpace(apptest.Git(t, work, "hash-object", "-t", "tree", "/dev/null"))

	apptest.Step(t, "a commit's diff is against its first parent, a root commit's against nothing", func(t *testing.T) {
		for sha, parent := range map[string]string{root: emptyTree, second: root, merge: merge + "^1"} {
			want := apptest.Git(t, work, "diff", parent, sha)
			diff, _, err := c.Repositories.GetCommitRaw(ctx, "octo", "hello", sha, github.RawOptions{Type: github.Diff})
			apptest.Must(t, "diff of "+sha, err)
			if diff != want || want == "" {
				t.Errorf("diff of %s:\n%s\nwant (git diff %s %s):\n%s", sha, diff, parent, sha, want)
			}
		}
	})

	apptest.Step(t, "a commit's patch is git format-patch's, a merge's its diff as an email", func(t *testing.T) {
		for _, sha := range []string{root, second} {
			want := apptest.Git(t, work, "format-patch", "--stdout", "-1", sha)
			patch, _, err := c.Repositories.GetCommitRaw(ctx, "octo", "hello", sha, github.RawOptions{Type: github.Patch})
			apptest.Must(t, "patch of "+sha, err)
			if patch != want {
				t.Errorf("patch of %s:\n%s\nwant (git format-patch):\n%s", sha, patch, want)
			}
		}
		patch, _, err := c.Repositories.GetCommitRaw(ctx, "octo", "hello", merge, github.RawOptions{Type: github.Patch})
		apptest.Must(t, "patch of the merge", err)
		if !strings.HasPrefix(patch, "From "+merge+" Mon Sep 17 00:00:00 2001\n") || !strings.Contains(patch, "\nSubject: [PATCH] Merge topic/x\n") ||
			!strings.Contains(patch, apptest.Git(t, work, "diff", merge+"^1", merge)) {
			t.Errorf("patch of the merge:\n%s", patch)
		}
	})

	apptest.Step(t, "a comparison's diff is from the merge base, its patch one message per commit", func(t *testing.T) {
		mergeBase := strings.TrimSpace(apptest.Git(t, work, "merge-base", "main", "topic/x"))
		wantDiff := apptest.Git(t, work, "diff", mergeBase, "topic/x")
		wantPatch := apptest.Git(t, work, "format-patch", "--stdout", "main..topic/x")
		diff, _, err := c.Repositories.CompareCommitsRaw(ctx, "octo", "hello", "main", "topic/x", github.RawOptions{Type: github.Diff})
		apptest.Must(t, "compare diff", err)
		if diff != wantDiff {
			t.Errorf("compare diff:\n%s\nwant (git diff):\n%s", diff, wantDiff)
		}
		patch, _, err := c.Repositories.CompareCommitsRaw(ctx, "octo", "hello", "main", "topic/x", github.RawOptions{Type: github.Patch})
		apptest.Must(t, "compare patch", err)
		if patch != wantPatch || strings.Count(patch, "\nSubject: [PATCH ") != 2 {
			t.Errorf("compare patch:\n%s\nwant (git format-patch):\n%s", patch, wantPatch)
		}
		comparison, _, err := c.Repositories.CompareCommits(ctx, "octo", "hello", "main", "topic/x", nil)
		apptest.Must(t, "compare", err)
		for u, want := range map[string]string{comparison.GetDiffURL(): wantDiff, comparison.GetPatchURL(): wantPatch,
			env.URL + "/octo/hello/commit/" + second + ".diff":  apptest.Git(t, work, "diff", root, second),
			env.URL + "/octo/hello/commit/" + second + ".patch": apptest.Git(t, work, "format-patch", "--stdout", "-1", second)} {
			resp, body := getPath(t, env, u)
			if resp.StatusCode != http.StatusOK || string(body) != want || resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" {
				t.Errorf("GET %s: %d %s\n%s", u, resp.StatusCode, resp.Header.Get("Content-Type"), body)
			}
		}
	})

	apptest.Step(t, "the sha media type is the SHA, and 304 while the reference stays there", func(t *testing.T) {
		sha, resp, err := c.Repositories.GetCommitSHA1(ctx, "octo", "hello", "merged", "")
		apptest.Must(t, "sha", err)
		want := merge
		if sha != want || resp.Header.Get("Content-Type") != "application/vnd.github.sha; charset=utf-8" || resp.Header.Get("ETag") != `"`+want+`"` {
			t.Errorf("sha %q, Content-Type %s, ETag %s; want %s", sha, resp.Header.Get("Content-Type"), resp.Header.Get("ETag"), want)
		}
		_, resp, _ = c.Repositories.GetCommitSHA1(ctx, "octo", "hello", "merged", want)
		if resp == nil || resp.StatusCode != http.StatusNotModified {
			t.Errorf("sha with the same SHA: %v, want 304", resp)
		}
		_, resp, _ = c.Repositories.GetCommitSHA1(ctx, "octo", "hello", "merged", root)
		if resp == nil || resp.StatusCode != http.StatusOK {
			t.Errorf("sha with another SHA: %v, want 200", resp)
		}
	})

	apptest.Step(t, "what does not exist is the JSON 404 or 422, as for JSON", func(t *testing.T) {
		for path, status := range map[string]int{
			"/repos/octo/hello/commits/nothing":      http.StatusUnprocessableEntity,
			"/repos/octo/hello/compare/main...ghost": http.StatusNotFound,
		} {
			resp, body := env.Do("GET", path, "", nil, "Accept", "application/vnd.github.diff")
			if resp.StatusCode != status || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
				t.Errorf("GET %s as a diff: %d %s, want %d", path, resp.StatusCode, body, status)
			}
		}
	})
}

// TestCommitDiffTooLarge: a commit that adds more lines than the platform
// shows in a diff is refused as a diff and a patch with its 406, and so is
// a comparison that holds it; the JSON stays served.
func TestCommitDiffTooLarge(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octo := env.User("octo")
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo")
	work := apptest.WorkTree(t, map[string]string{"README.md": "one\n"})
	first := strings.TrimSpace(apptest.Git(t, work, "rev-parse", "HEAD"))
	big := apptest.Commit(t, work, "Big", map[string]string{"big.txt": strings.Repeat("line\n", gitdiff.MaxLines+1)})
	apptest.Git(t, work, "push", "-q", env.GitURL("octo", "hello", "octo", token), "main")
	want := fmt.Sprintf(`{"message":"Sorry, the diff exceeded the maximum number of lines (%d)","errors":[{"resource":`, gitdiff.MaxLines)
	for path, resource := range map[string]string{"/repos/octo/hello/commits/" + big: "Commit",
		"/repos/octo/hello/compare/" + first + "...main": "Comparison"} {
		for _, accept := range []string{"application/vnd.github.diff", "application/vnd.github.patch"} {
			resp, body := env.Do("GET", path, token, nil, "Accept", accept)
			if resp.StatusCode != http.StatusNotAcceptable || !strings.HasPrefix(string(body), want+`"`+resource+`","field":"diff","code":"too_large"}]`) {
				t.Errorf("%s as %s: %d %s", path, accept, resp.StatusCode, body)
			}
		}
		if resp, body := env.Do("GET", path, token, nil); resp.StatusCode != http.StatusOK {
			t.Errorf("%s as JSON: %d %.200s", path, resp.StatusCode, body)
		}
	}
}

// get sends GET url anonymously and returns the response and its body.
func getPath(t *testing.T, env *apptest.Env, url string) (*http.Response, []byte) {
	t.Helper()
	resp, err := env.HTTPClient().Get(url)
	apptest.Must(t, "GET "+url, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	apptest.Must(t, "read "+url, err)
	return resp, body
}
