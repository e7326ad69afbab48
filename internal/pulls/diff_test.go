package pulls_test

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

// diffProject is a project whose feature branch changes, adds, renames
// and deletes files (a binary one among them) in two commits while main
// moved on: its pull request's diff starts at the merge base, and its
// patch has both commits. It returns the project and what git writes for
// the pull request: the diff from the merge base, the patch series and
// the names of the files (git diff --name-only). A server on TLS needs
// caFile, its authority's certificate; "" for another.
func diffProject(t *testing.T, env *apptest.Env, token, caFile string) (proj *project, diff, patch, names string) {
	t.Helper()
	dir := apptest.WorkTree(t, map[string]string{"README.md": "# hello\n", "app.txt": "one\ntwo\nthree\n", "old.txt": "old\n"})
	if caFile != "" {
		apptest.Git(t, dir, "config", "http.sslCAInfo", caFile)
	}
	apptest.Git(t, dir, "remote", "add", "origin", env.GitURL("octo", "hello", "octo", token))
	apptest.Git(t, dir, "push", "-q", "origin", "main")
	proj = &project{t: t, dir: dir}
	proj.commitOn("feature", "Change the app\n\nAnd add a logo.", map[string]string{"app.txt": "one\n2\nthree\nfour\n",
		"logo.png": "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "old.txt": ""})
	proj.commitOn("feature", "Move the README", map[string]string{"README.md": "", "docs/README.md": "# hello\n"})
	proj.commitOn("main", "Moves on", map[string]string{"main.txt": "main\n"})
	mergeBase := strings.TrimSpace(apptest.Git(t, dir, "merge-base", "main", "feature"))
	diff = apptest.Git(t, dir, "diff", mergeBase, "feature")
	patch = apptest.Git(t, dir, "format-patch", "--stdout", "main..feature")
	names = apptest.Git(t, dir, "diff", "--name-only", mergeBase, "feature")
	if !strings.Contains(diff, "rename to docs/README.md") || !strings.Contains(diff, "Binary files") || strings.Contains(diff, "main.txt") {
		t.Fatalf("the project's diff lacks what it should show:\n%s", diff)
	}
	return proj, diff, patch, names
}

// TestPullRequestDiffAndPatch asks for a pull request as a diff and as a
// patch: through go-github (GetRaw), with the .v3. and the spec's names
// of the media types, and at its diff_url and patch_url (plain text,
// anonymous on a public repository). Each is what git writes for the same
// revisions, with the platform's Content-Type; the answer has an ETag
// that a conditional request gets 304 for, and a JSON 404 for what does
// not exist.
func TestPullRequestDiffAndPatch(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo")
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo")
	_, wantDiff, wantPatch, _ := diffProject(t, env, token, "")
	client := env.Client(token)
	pr, _, err := client.PullRequests.Create(ctx, "octo", "hello", github.CreatePullRequest{Title: github.Ptr("Feature"),
		Head: "feature", Base: "main"})
	apptest.Must(t, "open", err)
	if strings.Count(wantPatch, "\nSubject: [PATCH ") != 2 {
		t.Fatalf("the patch series has not two messages:\n%s", wantPatch)
	}

	apptest.Step(t, "go-github's GetRaw gets the diff and the patch", func(t *testing.T) {
		diff, _, err := client.PullRequests.GetRaw(ctx, "octo", "hello", 1, github.RawOptions{Type: github.Diff})
		apptest.Must(t, "diff", err)
		if diff != wantDiff {
			t.Errorf("diff:\n%s\nwant (git diff):\n%s", diff, wantDiff)
		}
		patch, _, err := client.PullRequests.GetRaw(ctx, "octo", "hello", 1, github.RawOptions{Type: github.Patch})
		apptest.Must(t, "patch", err)
		if patch != wantPatch {
			t.Errorf("patch:\n%s\nwant (git format-patch):\n%s", patch, wantPatch)
		}
	})

	apptest.Step(t, "every name of the media types, with the platform's Content-Type and a 304", func(t *testing.T) {
		for accept, want := range map[string]string{
			"application/vnd.github.v3.diff":                       wantDiff,
			"application/vnd.service.diff":                         wantDiff,
			"application/vnd.service.v3.patch":                     wantPatch,
			"application/vnd.github.v3.diff; charset=utf-8":        wantDiff, // gh's
			"application/vnd.github.patch, application/json;q=0.5": wantPatch,
		} {
			resp, body := env.Do("GET", "/repos/octo/hello/pulls/1", token, nil, "Accept", accept)
			format := "diff"
			if want == wantPatch {
				format = "patch"
			}
			if resp.StatusCode != http.StatusOK || string(body) != want ||
				resp.Header.Get("Content-Type") != "application/vnd.github."+format+"; charset=utf-8" ||
				resp.Header.Get("X-GitHub-Media-Type") != "github.v3; param="+format {
				t.Errorf("%s: %d %s %s\n%s", accept, resp.StatusCode, resp.Header.Get("Content-Type"),
					resp.Header.Get("X-GitHub-Media-Type"), body)
				continue
			}
			etag := resp.Header.Get("ETag")
			resp, _ = env.Do("GET", "/repos/octo/hello/pulls/1", token, nil, "Accept", accept, "If-None-Match", etag)
			if etag == "" || resp.StatusCode != http.StatusNotModified {
				t.Errorf("%s with If-None-Match %q: %d, want 304", accept, etag, resp.StatusCode)
			}
		}
		resp, body := env.Do("GET", "/repos/octo/hello/pulls/9", token, nil, "Accept", "application/vnd.github.diff")
		if resp.StatusCode != http.StatusNotFound || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			t.Errorf("no such pull request as a diff: %d %s", resp.StatusCode, body)
		}
	})

	apptest.Step(t, "diff_url and patch_url are the same, as plain text, anonymously", func(t *testing.T) {
		if pr.GetDiffURL() != env.URL+"/octo/hello/pull/1.diff" || pr.GetPatchURL() != env.URL+"/octo/hello/pull/1.patch" {
			t.Fatalf("diff_url %s, patch_url %s", pr.GetDiffURL(), pr.GetPatchURL())
		}
		for u, want := range map[string]string{pr.GetDiffURL(): wantDiff, pr.GetPatchURL(): wantPatch} {
			resp, body := get(t, env, u, "")
			if resp.StatusCode != http.StatusOK || string(body) != want || resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" {
				t.Errorf("GET %s: %d %s\n%s", u, resp.StatusCode, resp.Header.Get("Content-Type"), body)
			}
		}
		for _, path := range []string{"/octo/hello/pull/9.diff", "/octo/hello/pull/x.diff", "/octo/hello/pull/1.txt", "/octo/hello/pull/1",
			"/octo/nothing/pull/1.diff", "/octo/hello/pulls/1.diff"} {
			resp, body := get(t, env, env.URL+path, "")
			if resp.StatusCode != http.StatusNotFound || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
				t.Errorf("GET %s: %d %s, want the JSON 404", path, resp.StatusCode, body)
			}
		}
	})
}

// TestPrivatePullRequestDiffURL: the diff_url of a pull request of a
// private repository takes the API's credentials (a token with repo, a
// fine-grained one with Pull requests read) and is the JSON 404 to
// anyone else, as the API is.
func TestPrivatePullRequestDiffURL(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octo, bob := env.User("octo"), env.User("bob")
	env.Repo(octo, "hello", apptest.RepoOpts{Private: true})
	token := env.Token(octo, "repo")
	_, wantDiff, _, _ := diffProject(t, env, token, "")
	pr, _, err := env.Client(token).PullRequests.Create(apptest.Ctx(), "octo", "hello", github.CreatePullRequest{
		Title: github.Ptr("Feature"), Head: "feature", Base: "main"})
	apptest.Must(t, "open", err)
	for name, tok := range map[string]string{"the owner": token, "a fine-grained token with Pull requests read": env.FineGrainedToken(octo, octo, apptest.AllRepos, "pull_requests:read")} {
		if resp, body := get(t, env, pr.GetDiffURL(), tok); resp.StatusCode != http.StatusOK || string(body) != wantDiff {
			t.Errorf("%s: %d\n%s", name, resp.StatusCode, body)
		}
	}
	for name, tok := range map[string]string{"anonymous": "", "another user": env.Token(bob, "repo")} {
		if resp, body := get(t, env, pr.GetDiffURL(), tok); resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s: %d %s, want 404", name, resp.StatusCode, body)
		}
	}
}

// TestPullRequestDiffTooLarge: a pull request that changes more files
// than the platform shows in a diff is refused as a diff and as a patch
// with its 406, while its JSON and its files stay served.
func TestPullRequestDiffTooLarge(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octo := env.User("octo")
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo")
	proj := newProject(t, env, "octo", "hello", "octo", token)
	files := map[string]string{}
	for i := range gitdiff.MaxFiles + 1 {
		files[fmt.Sprintf("f%03d.txt", i)] = "x\n"
	}
	proj.commitOn("big", "Many files", files)
	client := env.Client(token)
	_, _, err := client.PullRequests.Create(apptest.Ctx(), "octo", "hello", github.CreatePullRequest{Title: github.Ptr("Big"),
		Head: "big", Base: "main"})
	apptest.Must(t, "open", err)
	for _, accept := range []string{"application/vnd.github.diff", "application/vnd.github.patch"} {
		resp, body := env.Do("GET", "/repos/octo/hello/pulls/1", token, nil, "Accept", accept)
		want := `{"message":"Sorry, the diff exceeded the maximum number of files (300). Consider using 'List pull requests files' API or locally cloning the repository instead.","errors":[{"resource":"PullRequest","field":"diff","code":"too_large"}]`
		if resp.StatusCode != http.StatusNotAcceptable || !strings.HasPrefix(string(body), want) {
			t.Errorf("%s: %d %s", accept, resp.StatusCode, body)
		}
	}
	if _, _, err := client.PullRequests.Get(apptest.Ctx(), "octo", "hello", 1); err != nil {
		t.Errorf("the pull request as JSON: %v", err)
	}
}

// TestGitHubCLIPullRequestDiff runs `gh pr diff` (and --patch,
// --name-only) against a server on --tls: gh prints what git writes for
// the same revisions.
func TestGitHubCLIPullRequestDiff(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithTLS())
	octo := env.User("octo")
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo", "read:org")
	_, wantDiff, wantPatch, wantNames := diffProject(t, env, token, env.Main.CAFile())
	_, _, err := env.Client(token).PullRequests.Create(apptest.Ctx(), "octo", "hello", github.CreatePullRequest{
		Title: github.Ptr("Feature"), Head: "feature", Base: "main"})
	apptest.Must(t, "open", err)
	gh := apptest.GH(t, env, token, false)
	run := func(args ...string) string {
		t.Helper()
		return gh.Stdout(t, append(args, "--repo", gh.Host+"/octo/hello")...)
	}
	if out := run("pr", "diff", "1", "--color", "never"); out != wantDiff {
		t.Errorf("gh pr diff:\n%s\nwant (git diff):\n%s", out, wantDiff)
	}
	if out := run("pr", "diff", "1", "--patch", "--color", "never"); out != wantPatch {
		t.Errorf("gh pr diff --patch:\n%s\nwant (git format-patch):\n%s", out, wantPatch)
	}
	if out := run("pr", "diff", "1", "--name-only"); out != wantNames {
		t.Errorf("gh pr diff --name-only:\n%s\nwant (git diff --name-only):\n%s", out, wantNames)
	}
}

// get sends GET url with the token (none when "") and returns the
// response and its body.
func get(t *testing.T, env *apptest.Env, url, token string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	apptest.Must(t, "request", err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := env.HTTPClient().Do(req)
	apptest.Must(t, "GET "+url, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	apptest.Must(t, "read "+url, err)
	return resp, body
}
