package codesearch_test

import (
	"bytes"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/app"
	"forgeapi/internal/apptest"
	"forgeapi/internal/codesearch"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/testwait"
)

// waitIndexed waits until the repository's default branch is indexed at
// head (the SHA git holds there).
func waitIndexed(t *testing.T, env *apptest.Env, repo *repos.Repository, head string) {
	t.Helper()
	testwait.For(t, "the index of "+repo.Name+" at "+head, func() error {
		var got string
		var due bool
		err := env.App.DB.QueryRowContext(context.Background(), `SELECT head_sha, requested > indexed
			FROM code_search_work WHERE repository_id = $1`, repo.ID).Scan(&got, &due)
		if err != nil {
			return err
		}
		if got != head || due {
			return fmt.Errorf("indexed at %q, due %v", got, due)
		}
		return nil
	})
}

// push commits files in work and pushes them to the main branch; it
// returns the commit.
func push(t *testing.T, work, remote, message string, files map[string]string) string {
	t.Helper()
	sha := apptest.Commit(t, work, message, files)
	apptest.Git(t, work, "push", "-q", remote, "HEAD:refs/heads/main")
	return sha
}

// codePaths searches code as c and returns the total and the items'
// repository/path names.
func codePaths(t *testing.T, c *github.Client, q string) (int, []string) {
	t.Helper()
	res, _, err := c.Search.Code(apptest.Ctx(), q, &github.SearchOptions{ListOptions: github.ListOptions{PerPage: 100}})
	apptest.Must(t, "search code "+q, err)
	var paths []string
	for _, r := range res.CodeResults {
		paths = append(paths, r.GetRepository().GetName()+"/"+r.GetPath())
	}
	slices.Sort(paths)
	return res.GetTotal(), paths
}

// TestSearchCode indexes pushes and searches them with go-github: words
// in the content, qualifiers, binary and large files left out, a private
// repository's files invisible to a stranger (and out of the count), a
// second push replacing the changed and removed files, the text-match
// media type, and a query without words refused.
func TestSearchCode(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octo, eve := env.User("octo"), env.User("eve")
	lib := env.Repo(octo, "lib")
	secret := env.Repo(octo, "secret", apptest.RepoOpts{Private: true})
	token := env.Token(octo, "repo")
	c, stranger := env.Client(token), env.Client(env.Token(eve, "repo"))

	work := apptest.WorkTree(t, nil)
	head := push(t, work, env.GitURL("octo", "lib", "octo", token), "first", map[string]string{
		"main.go":        "package main\n\nfunc HandleWidget() {}\n",
		"docs/guide.md":  "# The widget guide\n",
		"cmd/tool/x.py":  "print('gadget')\n",
		"blob.bin":       "widget\x00\x01\x02",
		"big/huge.txt":   strings.Repeat("widget ", (codesearch.MaxFileSize/7)+10),
		"src/Widgets.ts": "export const n = 1\n",
	})
	waitIndexed(t, env, lib, head)
	privWork := apptest.WorkTree(t, nil)
	privHead := push(t, privWork, env.GitURL("octo", "secret", "octo", token), "private", map[string]string{
		"secret.go": "package secret // widget inside\n",
	})
	waitIndexed(t, env, secret, privHead)

	for _, tc := range []struct {
		q     string
		want  []string
		total int
	}{
		{"widget", []string{"lib/docs/guide.md", "lib/main.go", "lib/src/Widgets.ts", "secret/secret.go"}, 4},
		{"widget user:octo extension:go", []string{"lib/main.go", "secret/secret.go"}, 2},
		{"widget repo:octo/lib language:go", []string{"lib/main.go"}, 1},
		{"widget path:docs", []string{"lib/docs/guide.md"}, 1},
		{"gadget path:cmd/tool", []string{"lib/cmd/tool/x.py"}, 1},
		{"widget filename:guide", []string{"lib/docs/guide.md"}, 1},
		{"widget in:file", []string{"lib/docs/guide.md", "lib/main.go", "secret/secret.go"}, 3},
		{"widgets in:path", []string{"lib/src/Widgets.ts"}, 1},
		{`"func HandleWidget"`, []string{"lib/main.go"}, 1},
		{"widget -extension:go -extension:md in:file", nil, 0},
		{"widget size:<30 in:file", []string{"lib/docs/guide.md"}, 1},
		{"wi", []string{"lib/docs/guide.md", "lib/main.go", "lib/src/Widgets.ts", "secret/secret.go"}, 4},
	} {
		total, paths := codePaths(t, c, tc.q)
		if total != tc.total || !slices.Equal(paths, tc.want) {
			t.Errorf("%q: %d %v, want %d %v", tc.q, total, paths, tc.total, tc.want)
		}
	}
	if total, paths := codePaths(t, stranger, "widget"); total != 3 || slices.Contains(paths, "secret/secret.go") {
		t.Errorf("a stranger's search: %d %v, want 3 without the private file", total, paths)
	}
	if total, _ := codePaths(t, env.Client(""), "widget repo:octo/secret"); total != 0 {
		t.Errorf("an anonymous search of a private repository counted %d", total)
	}

	res, _, err := c.Search.Code(apptest.Ctx(), "HandleWidget repo:octo/lib", &github.SearchOptions{TextMatch: true})
	apptest.Must(t, "search with text matches", err)
	if len(res.CodeResults) != 1 {
		t.Fatalf("text-match search: %+v", res)
	}
	item := res.CodeResults[0]
	if item.GetSHA() == "" || !strings.HasSuffix(item.GetHTMLURL(), "/octo/lib/blob/"+head+"/main.go") ||
		item.GetRepository().GetFullName() != "octo/lib" {
		t.Errorf("item %+v", item)
	}
	if len(item.TextMatches) == 0 || item.TextMatches[0].GetFragment() != "func HandleWidget() {}" ||
		item.TextMatches[0].Matches[0].GetText() != "HandleWidget" || !slices.Equal(item.TextMatches[0].Matches[0].Indices, []int{5, 17}) {
		t.Errorf("text matches %+v", item.TextMatches)
	}

	// A second push: main.go changes, the guide goes, a file comes.
	head = push(t, work, env.GitURL("octo", "lib", "octo", token), "second", map[string]string{
		"main.go": "package main\n\nfunc main() {}\n", "docs/guide.md": "", "notes.txt": "widget notes\n",
	})
	waitIndexed(t, env, lib, head)
	if total, paths := codePaths(t, c, "widget repo:octo/lib"); total != 2 || !slices.Equal(paths, []string{"lib/notes.txt", "lib/src/Widgets.ts"}) {
		t.Errorf("after the second push: %d %v", total, paths)
	}

	// Another default branch is indexed in its place.
	dev := apptest.Commit(t, work, "dev", map[string]string{"dev.txt": "delta widget\n"})
	apptest.Git(t, work, "push", "-q", env.GitURL("octo", "lib", "octo", token), "HEAD:refs/heads/dev")
	_, _, err = c.Repositories.Edit(apptest.Ctx(), "octo", "lib", &github.Repository{DefaultBranch: github.Ptr("dev")})
	apptest.Must(t, "change the default branch", err)
	waitIndexed(t, env, lib, dev)
	if total, paths := codePaths(t, c, "delta"); total != 1 || paths[0] != "lib/dev.txt" {
		t.Errorf("after the default branch changed: %d %v", total, paths)
	}
	// A repository made private is no longer found by a stranger.
	_, _, err = c.Repositories.Edit(apptest.Ctx(), "octo", "lib", &github.Repository{Private: github.Ptr(true)})
	apptest.Must(t, "make the repository private", err)
	if total, paths := codePaths(t, stranger, "widget"); total != 0 {
		t.Errorf("a stranger finds %d files of private repositories: %v", total, paths)
	}

	_, resp, err := c.Search.Code(apptest.Ctx(), "repo:octo/lib", nil)
	if resp == nil || resp.StatusCode != http.StatusUnprocessableEntity {
		t.Errorf("a query without words: %v", err)
	}
}

// TestSearchCommits indexes the commits of a default branch and searches
// them with go-github: words in messages, authors by login and by name
// and email, dates, merges, SHAs, sorting, and a private repository's
// commits invisible to a stranger.
func TestSearchCommits(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octo := env.User("octo", apptest.UserOpts{Email: "author@example.com"})
	eve := env.User("eve")
	lib := env.Repo(octo, "lib")
	secret := env.Repo(octo, "secret", apptest.RepoOpts{Private: true})
	token := env.Token(octo, "repo")
	c, stranger := env.Client(token), env.Client(env.Token(eve, "repo"))
	remote := env.GitURL("octo", "lib", "octo", token)

	work := apptest.WorkTree(t, nil)
	first := apptest.Commit(t, work, "Add the parser", map[string]string{"a.txt": "a\n"})
	apptest.Git(t, work, "checkout", "-q", "-b", "topic")
	apptest.Git(t, work, "commit", "-q", "--allow-empty", "--author", "Other Person <other@example.com>",
		"--date", "2020-01-02T03:04:05Z", "-m", "Fix the parser bug")
	apptest.Git(t, work, "checkout", "-q", "main")
	apptest.Commit(t, work, "Document the lexer", map[string]string{"b.txt": "b\n"})
	apptest.Git(t, work, "merge", "-q", "--no-ff", "-m", "Merge branch topic", "topic")
	head := strings.TrimSpace(apptest.Git(t, work, "rev-parse", "HEAD"))
	// A branch that is not the default one is not indexed.
	apptest.Git(t, work, "push", "-q", remote, "HEAD:refs/heads/main", "topic:refs/heads/other")
	waitIndexed(t, env, lib, head)
	privWork := apptest.WorkTree(t, nil)
	privHead := push(t, privWork, env.GitURL("octo", "secret", "octo", token), "Secret parser work", map[string]string{"s": "s\n"})
	waitIndexed(t, env, secret, privHead)

	// A fork is not indexed, pushed to or not.
	_, _, err := env.Client(env.Token(eve, "repo")).Repositories.CreateFork(apptest.Ctx(), "octo", "lib", nil)
	if _, ok := err.(*github.AcceptedError); err != nil && !ok {
		t.Fatalf("fork: %v", err)
	}
	fork, _, err := stranger.Repositories.Get(apptest.Ctx(), "eve", "lib")
	apptest.Must(t, "get the fork", err)
	forkWork := apptest.WorkTree(t, nil)
	apptest.Commit(t, forkWork, "Fork parser work", map[string]string{"f": "f\n"})
	apptest.Git(t, forkWork, "push", "-q", "-f", env.GitURL("eve", "lib", "eve", env.Token(eve, "repo")), "HEAD:refs/heads/main")
	// The push's events are emitted in the transaction that would request
	// the indexing: once its PushEvent shows, the request would be there.
	testwait.Until(t, "the fork's PushEvent", func() bool {
		evs, _, err := stranger.Activity.ListRepositoryEvents(apptest.Ctx(), "eve", "lib", nil)
		return err == nil && len(evs) > 0 && slices.ContainsFunc(evs, func(e *github.Event) bool { return e.GetType() == "PushEvent" })
	})
	var forkRows int
	apptest.Must(t, "count the fork's work", env.App.DB.QueryRowContext(apptest.Ctx(),
		`SELECT count(*) FROM code_search_work WHERE repository_id = $1`, fork.GetID()).Scan(&forkRows))
	if forkRows != 0 {
		t.Errorf("a push to a fork asked for its indexing")
	}

	messages := func(t *testing.T, c *github.Client, q string, opts *github.SearchOptions) (int, []string) {
		t.Helper()
		res, _, err := c.Search.Commits(apptest.Ctx(), q, opts)
		apptest.Must(t, "search commits "+q, err)
		var out []string
		for _, r := range res.Commits {
			out = append(out, r.GetCommit().GetMessage())
		}
		return res.GetTotal(), out
	}
	sorted := func(s []string) []string { slices.Sort(s); return s }
	for _, tc := range []struct {
		q    string
		want []string
	}{
		{"parser", []string{"Add the parser", "Fix the parser bug", "Secret parser work"}},
		{"parser repo:octo/lib", []string{"Add the parser", "Fix the parser bug"}},
		{"parser -bug user:octo", []string{"Add the parser", "Secret parser work"}},
		{"author:octo repo:octo/lib", []string{"Add the parser", "Document the lexer", "Merge branch topic"}},
		{"author-name:other", []string{"Fix the parser bug"}},
		{"author-email:other@example.com", []string{"Fix the parser bug"}},
		{"committer-email:committer@example.com is:private", []string{"Secret parser work"}},
		{"author-date:<2021-01-01", []string{"Fix the parser bug"}},
		{"merge:true", []string{"Merge branch topic"}},
		{"hash:" + first[:10], []string{"Add the parser"}},
		{"parent:" + first[:10] + " repo:octo/lib", []string{"Document the lexer", "Fix the parser bug"}},
		{`"the lexer"`, []string{"Document the lexer"}},
	} {
		total, got := messages(t, c, tc.q, nil)
		if total != len(tc.want) || !slices.Equal(sorted(got), tc.want) {
			t.Errorf("%q: %d %v, want %v", tc.q, total, got, tc.want)
		}
	}
	if total, got := messages(t, stranger, "parser", nil); total != 2 || slices.Contains(got, "Secret parser work") {
		t.Errorf("a stranger's search: %d %v", total, got)
	}
	_, got := messages(t, c, "repo:octo/lib", &github.SearchOptions{Sort: "author-date", Order: "asc"})
	if len(got) != 4 || got[0] != "Fix the parser bug" {
		t.Errorf("by author date ascending: %v", got)
	}
	res, _, err := c.Search.Commits(apptest.Ctx(), "hash:"+first, nil)
	apptest.Must(t, "search by hash", err)
	if len(res.Commits) != 1 || res.Commits[0].GetSHA() != first || res.Commits[0].GetAuthor().GetLogin() != "octo" ||
		res.Commits[0].GetRepository().GetFullName() != "octo/lib" {
		t.Errorf("commit found %+v", res.Commits)
	}
}

// TestIndexerLease drives the indexer by hand: a push while another
// (dead) process holds the repository's lease is not indexed until the
// lease expired, then it is; a run done again from scratch (as after a
// crash) writes the same rows, with files in batches of their own; a
// deleted repository's rows go with it.
func TestIndexerLease(t *testing.T) {
	t.Parallel()
	// Batches of one file: every file is written in a transaction of its own.
	env := apptest.Start(t, func(c *app.Config) { c.CodeSearch.BatchBytes = 1 })
	ctx := apptest.Ctx()
	octo := env.User("octo")
	lib := env.Repo(octo, "lib")
	token := env.Token(octo, "repo", "delete_repo")
	c := env.Client(token)
	remote := env.GitURL("octo", "lib", "octo", token)
	work := apptest.WorkTree(t, nil)
	head := push(t, work, remote, "first", map[string]string{"a.txt": "alpha\n"})
	waitIndexed(t, env, lib, head)

	exec := func(q string, args ...any) {
		t.Helper()
		_, err := env.App.DB.ExecContext(ctx, q, args...)
		apptest.Must(t, q, err)
	}
	exec(`UPDATE code_search_work SET lease_owner = 'dead', lease_until = $1 WHERE repository_id = $2`,
		store.Now().Add(time.Hour), lib.ID)
	head = push(t, work, remote, "second", map[string]string{"b.txt": "bravo\n"})
	x := codesearch.NewIndexer(env.App.DB, env.App.Repos, codesearch.Config{BatchBytes: 1}, nil)
	if n := x.RunOnce(ctx); n != 0 {
		t.Fatalf("indexed %d repositories under another process's lease", n)
	}
	if total, _ := codePaths(t, c, "bravo"); total != 0 {
		t.Fatalf("found the second push under a live lease of another process")
	}
	exec(`UPDATE code_search_work SET lease_until = $1 WHERE repository_id = $2`, store.Now().Add(-time.Second), lib.ID)
	x.RunOnce(ctx) // the app's own indexer may take it first: either does it
	waitIndexed(t, env, lib, head)
	if total, _ := codePaths(t, c, "bravo"); total != 1 {
		t.Fatalf("the second push is not found once the lease expired")
	}

	count := func() (files, commits int) {
		err := env.App.DB.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM code_files WHERE repository_id = $1),
			(SELECT count(*) FROM code_commits WHERE repository_id = $1)`, lib.ID).Scan(&files, &commits)
		apptest.Must(t, "count rows", err)
		return files, commits
	}
	files, commits := count()
	exec(`UPDATE code_search_work SET requested = indexed + 1, head_sha = '' WHERE repository_id = $1`, lib.ID)
	x.RunOnce(ctx)
	waitIndexed(t, env, lib, head)
	if f, cm := count(); f != files || cm != commits || f != 2 || cm != 2 {
		t.Errorf("after a run from scratch: %d files, %d commits; want %d, %d", f, cm, files, commits)
	}

	// A run cut short after some batches (which cleared files_at): the
	// next one, from the same recorded head, writes the files missing.
	exec(`DELETE FROM code_files WHERE repository_id = $1 AND path = 'b.txt'`, lib.ID)
	exec(`UPDATE code_search_work SET requested = indexed + 1, files_at = '' WHERE repository_id = $1`, lib.ID)
	x.RunOnce(ctx)
	waitIndexed(t, env, lib, head)
	if total, _ := codePaths(t, c, "bravo"); total != 1 {
		t.Errorf("a file missing from the rows of the indexed head is not written again")
	}

	// A deleted repository takes its rows along.
	_, err := c.Repositories.Delete(ctx, "octo", "lib")
	apptest.Must(t, "delete the repository", err)
	if f, cm := count(); f != 0 || cm != 0 {
		t.Errorf("a deleted repository left %d files and %d commits", f, cm)
	}
}

// TestGitHubCLISearchCommits runs `gh search commits` against a server
// on --tls: gh reads the commits found, with its qualifiers' flags. (The
// gh of the machine, 2.23, has no `gh search code`.)
func TestGitHubCLISearchCommits(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithTLS())
	octo := env.User("octo", apptest.UserOpts{Email: "author@example.com"})
	lib := env.Repo(octo, "lib")
	token := env.Token(octo, "repo", "read:org")
	work := apptest.WorkTree(t, nil)
	// Author dates a day apart: the sort by author date has no ties.
	apptest.Git(t, work, "commit", "-q", "--allow-empty", "--date", "2024-01-01T00:00:00Z", "-m", "Add the parser")
	first := strings.TrimSpace(apptest.Git(t, work, "rev-parse", "HEAD"))
	head := apptest.Commit(t, work, "Fix the parser", map[string]string{"a.txt": "b\n"})
	apptest.Git(t, work, "-c", "http.sslCAInfo="+env.Main.CAFile(), "push", "-q", env.GitURL("octo", "lib", "octo", token), "HEAD:refs/heads/main")
	waitIndexed(t, env, lib, head)

	gh := apptest.GH(t, env, token, false)
	run := func(args ...string) string { t.Helper(); return gh.Stdout(t, args...) }
	out := run("search", "commits", "parser", "--repo", "octo/lib", "--author", "octo", "--sort", "author-date",
		"--order", "asc", "--json", "sha,commit,repository", "--jq", `.[] | .sha + " " + .commit.message + " " + .repository.fullName`)
	want := first + " Add the parser octo/lib\n" + head + " Fix the parser octo/lib\n"
	if out != want {
		t.Errorf("gh search commits:\n%s\nwant:\n%s", out, want)
	}
	if out := run("search", "commits", "parser", "--hash", first[:8], "--json", "sha", "--jq", ".[].sha"); out != first+"\n" {
		t.Errorf("gh search commits --hash: %q", out)
	}
}

// TestHostileQueries sends odd words and qualifier values to both
// searches, with and without text matches: none may answer a 5xx.
func TestHostileQueries(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octo := env.User("octo")
	lib := env.Repo(octo, "lib")
	token := env.Token(octo, "repo")
	work := apptest.WorkTree(t, nil)
	head := push(t, work, env.GitURL("octo", "lib", "octo", token), "odd \xff message", map[string]string{
		"a.txt": "é🙂 text\n", "b.txt": "\xff\xfe latin-1\n"})
	waitIndexed(t, env, lib, head)
	values := []string{"\x00", "a\x00b", `"`, `a"b`, `""`, "*", "%", "_", `\`, "é", "🙂", "\xff\xfe", "' OR '1'='1",
		"NEAR(a b)", "a OR b", "^x", "-", "..", "*..*", ">=", "<x", "99999999999999999999", strings.Repeat("é", 300)}
	client := env.HTTPClient()
	for _, path := range []string{"/search/code", "/search/commits"} {
		for _, v := range values {
			for _, q := range []string{v, "text " + v, `"` + v + `" text`, "text path:" + v, "text repo:" + v,
				"text filename:" + v, "text size:" + v, "text author-date:" + v, "text hash:" + v, "text parent:" + v,
				"text language:" + v, "text in:" + v, "text -" + v} {
				req, err := http.NewRequest("GET", env.URL+path+"?q="+url.QueryEscape(q), nil)
				apptest.Must(t, "request", err)
				req.Header.Set("Authorization", "token "+token)
				req.Header.Set("Accept", "application/vnd.github.text-match+json")
				resp, err := client.Do(req)
				apptest.Must(t, "search", err)
				resp.Body.Close()
				if resp.StatusCode >= 500 {
					t.Errorf("%s?q=%q: %d", path, q, resp.StatusCode)
				}
			}
		}
	}
}

// TestSearchCommitsOfALongPush indexes every commit of a push of 25, not
// only the 20 a push payload lists, and pages through them.
func TestSearchCommitsOfALongPush(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octo := env.User("octo")
	lib := env.Repo(octo, "lib")
	token := env.Token(octo, "repo")
	c := env.Client(token)
	work := apptest.WorkTree(t, nil)
	for i := range 24 {
		apptest.Git(t, work, "commit", "-q", "--allow-empty", "-m", fmt.Sprintf("Step %d of the plan", i))
	}
	head := push(t, work, env.GitURL("octo", "lib", "octo", token), "Step 24 of the plan", nil)
	waitIndexed(t, env, lib, head)
	seen := map[string]bool{}
	opts := &github.SearchOptions{ListOptions: github.ListOptions{PerPage: 10}}
	for {
		res, resp, err := c.Search.Commits(apptest.Ctx(), "plan repo:octo/lib", opts)
		apptest.Must(t, "search commits", err)
		if res.GetTotal() != 25 {
			t.Fatalf("total_count %d, want 25", res.GetTotal())
		}
		for _, r := range res.Commits {
			seen[r.GetCommit().GetMessage()] = true
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	if len(seen) != 25 {
		t.Errorf("paged through %d distinct commits, want 25", len(seen))
	}
}

// TestAutoInitRepositoryIsIndexed finds the files and the commit of a
// repository created with auto_init: its creation asks for the index,
// as a push does.
func TestAutoInitRepositoryIsIndexed(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octo := env.User("octo")
	c := env.Client(env.Token(octo, "repo"))
	repo, _, err := c.Repositories.Create(apptest.Ctx(), "", &github.Repository{Name: github.Ptr("fresh"),
		AutoInit: github.Ptr(true), LicenseTemplate: github.Ptr("mit")})
	apptest.Must(t, "create", err)
	testwait.Until(t, "the auto_init files indexed", func() bool {
		total, paths := codePaths(t, c, "permission repo:octo/fresh")
		return total == 1 && paths[0] == "fresh/LICENSE"
	})
	res, _, err := c.Search.Commits(apptest.Ctx(), "initial repo:octo/fresh", nil)
	apptest.Must(t, "search commits", err)
	if res.GetTotal() != 1 || res.Commits[0].GetRepository().GetID() != repo.GetID() {
		t.Errorf("the initial commit: %+v", res)
	}
}

// TestSearchCodeStopsAtAThousandMatches pushes 1,005 files that hold the
// same word: a search reads the first 1,000 and says its answer is
// incomplete, as the platform's searches past their time limit; one that
// selects fewer is complete and exact.
func TestSearchCodeStopsAtAThousandMatches(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octo := env.User("octo")
	many := env.Repo(octo, "many")
	token := env.Token(octo, "repo")
	c := env.Client(token)
	files := map[string]string{}
	for i := range 1005 {
		files[fmt.Sprintf("d%d/f%d.txt", i%10, i)] = fmt.Sprintf("everywhere %d\n", i)
	}
	head := push(t, apptest.WorkTree(t, nil), env.GitURL("octo", "many", "octo", token), "many", files)
	waitIndexed(t, env, many, head)

	res, _, err := c.Search.Code(apptest.Ctx(), "everywhere", &github.SearchOptions{ListOptions: github.ListOptions{PerPage: 100, Page: 10}})
	apptest.Must(t, "search", err)
	if res.GetTotal() != 1000 || !res.GetIncompleteResults() || len(res.CodeResults) != 100 {
		t.Errorf("a word in 1,005 files: total %d, incomplete %v, %d items", res.GetTotal(), res.GetIncompleteResults(), len(res.CodeResults))
	}
	res, _, err = c.Search.Code(apptest.Ctx(), "everywhere path:d3", nil)
	apptest.Must(t, "search", err)
	if res.GetTotal() != 101 || res.GetIncompleteResults() {
		t.Errorf("a word in 101 files: total %d, incomplete %v", res.GetTotal(), res.GetIncompleteResults())
	}
}

// TestSearchCodeMatchExpression searches words in contents, in paths and
// in both, negated words and words too short for the trigram index
// together, and a file renamed by a push: the answers are the same
// whichever engine drives. On SQLite the text index drives the query of
// the matches (its rows in order, stopped at the first 1,000), in:path
// included, rather than building every match first.
func TestSearchCodeMatchExpression(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octo := env.User("octo")
	repo := env.Repo(octo, "mix")
	token := env.Token(octo, "repo")
	c := env.Client(token)
	work := apptest.WorkTree(t, nil)
	head := push(t, work, env.GitURL("octo", "mix", "octo", token), "first", map[string]string{
		"alpha/beta.go": "package gamma // shared\n",
		"delta.txt":     "beta shared\n",
		"notes/ab.md":   "beta\n",
	})
	waitIndexed(t, env, repo, head)
	for _, tc := range []struct {
		q    string
		want []string
	}{
		{"beta", []string{"mix/alpha/beta.go", "mix/delta.txt", "mix/notes/ab.md"}},
		{"BETA in:path", []string{"mix/alpha/beta.go"}},
		{"beta in:file", []string{"mix/delta.txt", "mix/notes/ab.md"}},
		{"beta in:file,path", []string{"mix/alpha/beta.go", "mix/delta.txt", "mix/notes/ab.md"}},
		{"shared -gamma", []string{"mix/delta.txt"}},
		{"-gamma shared in:file", []string{"mix/delta.txt"}},
		{"shared -beta", nil},
		{"shared -beta in:file", []string{"mix/alpha/beta.go"}},
		{"beta ab", []string{"mix/notes/ab.md"}},
		{"beta -ab in:path", []string{"mix/alpha/beta.go"}},
		{`"beta shared" gamma`, nil},
		{`"a/beta"`, []string{"mix/alpha/beta.go"}},
	} {
		total, paths := codePaths(t, c, tc.q)
		if total != len(tc.want) || !slices.Equal(paths, tc.want) {
			t.Errorf("%q: %d %v, want %v", tc.q, total, paths, tc.want)
		}
	}

	head = push(t, work, env.GitURL("octo", "mix", "octo", token), "rename", map[string]string{
		"alpha/beta.go": "", "alpha/omega.go": "package gamma // shared\n",
	})
	waitIndexed(t, env, repo, head)
	if total, paths := codePaths(t, c, "omega in:path"); total != 1 || paths[0] != "mix/alpha/omega.go" {
		t.Errorf("a renamed file by its new path: %d %v", total, paths)
	}
	if total, paths := codePaths(t, c, "beta in:path"); total != 0 {
		t.Errorf("a renamed file by its old path: %d %v", total, paths)
	}

	if apptest.Postgres() {
		for _, q := range []string{"shared", "beta in:path", "shared -gamma extension:txt"} {
			query, args, err := codesearch.MatchQuery(env.App.DB, q)
			apptest.Must(t, "match query", err)
			if scan := firstScan(t, env, query, args...); !strings.Contains(scan, " on code_files f") {
				t.Errorf("%q: the files are not the outer loop (first scan %q):\n%s", q, scan, query)
			}
		}
		return
	}
	for _, q := range []string{"shared", "beta in:path", "shared -gamma extension:txt"} {
		query, args, err := codesearch.MatchQuery(env.App.DB, q)
		apptest.Must(t, "match query", err)
		plan := strings.Join(env.QueryPlan(t, query, args...), "\n")
		if !strings.HasPrefix(plan, "SCAN x VIRTUAL TABLE INDEX") || strings.Contains(plan, "TEMP B-TREE") ||
			strings.Contains(plan, "SUBQUERY") || strings.Contains(query, "lower(f.path)") {
			t.Errorf("%q: the text index does not drive:\n%s\n%s", q, query, plan)
		}
	}
}

// firstScan is the first scan of PostgreSQL's plan of query, the outer
// loop's table: "Bitmap Heap Scan on code_files f", say.
func firstScan(t *testing.T, env *apptest.Env, query string, args ...any) string {
	t.Helper()
	for _, line := range env.QueryPlan(t, query, args...) {
		if strings.Contains(line, "Scan on ") {
			return strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(line), "->"))
		}
	}
	return ""
}

// TestIndexFollowsTheTree pushes changes of every kind (files added,
// changed, deleted and renamed, a text file turned binary, a large file
// made small, a symbolic link, an executable, a history replaced by a
// force push) and checks after each push that the index's files are the
// tree's text files up to MaxFileSize at their blob SHAs and its commits
// the branch's history; with batches of one file too, where changed
// files are written before the final transaction.
func TestIndexFollowsTheTree(t *testing.T) {
	t.Parallel()
	for _, batch := range []int{0, 1} {
		t.Run(fmt.Sprintf("batch-%d", batch), func(t *testing.T) {
			t.Parallel()
			env := apptest.Start(t, func(c *app.Config) { c.CodeSearch.BatchBytes = batch })
			octo := env.User("octo")
			lib := env.Repo(octo, "lib")
			remote := env.GitURL("octo", "lib", "octo", env.Token(octo, "repo"))
			work := apptest.WorkTree(t, nil)
			check := func(step string) {
				t.Helper()
				apptest.Git(t, work, "push", "-q", "-f", remote, "HEAD:refs/heads/main")
				waitIndexed(t, env, lib, strings.TrimSpace(apptest.Git(t, work, "rev-parse", "HEAD")))
				if got, want := indexRows(t, env, lib.ID), treeFiles(t, work); !maps.Equal(got, want) {
					t.Errorf("%s: indexed files %v\nwant %v", step, got, want)
				}
				got := commitRows(t, env, lib.ID)
				want := strings.Fields(apptest.Git(t, work, "rev-list", "HEAD"))
				slices.Sort(want)
				if !slices.Equal(got, want) {
					t.Errorf("%s: indexed commits %v\nwant %v", step, got, want)
				}
			}
			big := strings.Repeat("big words\n", codesearch.MaxFileSize/10+1)
			apptest.Commit(t, work, "first", map[string]string{"a.txt": "alpha\n", "b.txt": "bravo\n",
				"dir/c.go": "package c\n", "big.txt": big, "bin.dat": "\x00\x01binary", "x.txt": "text for now\n",
				"run.sh": "echo run\n"})
			if err := os.Chmod(filepath.Join(work, "run.sh"), 0o755); err != nil {
				t.Fatal(err)
			}
			apptest.Commit(t, work, "executable", map[string]string{"run.sh": "echo run\n"})
			check("the first push")

			if err := os.Symlink("a.txt", filepath.Join(work, "link")); err != nil {
				t.Fatal(err)
			}
			apptest.Git(t, work, "add", "link")
			apptest.Git(t, work, "mv", "dir", "d")
			apptest.Commit(t, work, "second", map[string]string{"a.txt": "alpha two\n", "b.txt": "",
				"x.txt": "binary\x00now", "big.txt": "small now\n", "e.txt": "echo\n"})
			check("changes of every kind")

			apptest.Commit(t, work, "third", map[string]string{"x.txt": "text again\n", "run.sh": "", "link": ""})
			check("a binary file turned text, files deleted")

			apptest.Git(t, work, "checkout", "-q", "--orphan", "other")
			apptest.Git(t, work, "rm", "-q", "-r", "--cached", ".")
			apptest.Git(t, work, "clean", "-q", "-f", "-d")
			apptest.Commit(t, work, "another history", map[string]string{"a.txt": "alpha two\n", "z.txt": "zulu\n"})
			check("a history replaced by a force push")
		})
	}
}

// indexRows returns the repository's indexed files: path to blob SHA.
func indexRows(t *testing.T, env *apptest.Env, repoID int64) map[string]string {
	t.Helper()
	rows, err := env.App.DB.QueryContext(apptest.Ctx(), `SELECT path, blob_sha FROM code_files WHERE repository_id = $1`, repoID)
	apptest.Must(t, "read the indexed files", err)
	defer rows.Close()
	files := map[string]string{}
	for rows.Next() {
		var p, sha string
		apptest.Must(t, "scan", rows.Scan(&p, &sha))
		files[p] = sha
	}
	apptest.Must(t, "read the indexed files", rows.Err())
	return files
}

// commitRows returns the SHAs of the repository's indexed commits, sorted.
func commitRows(t *testing.T, env *apptest.Env, repoID int64) []string {
	t.Helper()
	rows, err := env.App.DB.QueryContext(apptest.Ctx(), `SELECT sha FROM code_commits WHERE repository_id = $1 ORDER BY sha`, repoID)
	apptest.Must(t, "read the indexed commits", err)
	defer rows.Close()
	var shas []string
	for rows.Next() {
		var sha string
		apptest.Must(t, "scan", rows.Scan(&sha))
		shas = append(shas, sha)
	}
	apptest.Must(t, "read the indexed commits", rows.Err())
	return shas
}

// treeFiles returns what git says the index should hold for the work
// tree's HEAD: its regular files up to MaxFileSize whose content is UTF-8
// without NUL, path to blob SHA.
func treeFiles(t *testing.T, work string) map[string]string {
	t.Helper()
	files := map[string]string{}
	for _, rec := range strings.Split(apptest.Git(t, work, "ls-tree", "-r", "-l", "-z", "HEAD"), "\x00") {
		meta, pth, ok := strings.Cut(rec, "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 4 || (f[0] != "100644" && f[0] != "100755") {
			continue
		}
		if size, _ := strconv.Atoi(f[3]); size > codesearch.MaxFileSize {
			continue
		}
		if b := apptest.Git(t, work, "cat-file", "blob", f[2]); strings.IndexByte(b, 0) < 0 && utf8.ValidString(b) {
			files[pth] = f[2]
		}
	}
	return files
}

// TestIndexerRunCutShort: a run that fails after writing a batch (a
// blob whose content cannot be read) leaves the batch and no commit whose tree the
// rows hold, so the next run compares the whole tree with the rows and
// writes what is missing.
func TestIndexerRunCutShort(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, func(c *app.Config) { c.CodeSearch.BatchBytes = 1 })
	ctx := apptest.Ctx()
	octo := env.User("octo")
	lib := env.Repo(octo, "lib")
	remote := env.GitURL("octo", "lib", "octo", env.Token(octo, "repo"))
	work := apptest.WorkTree(t, nil)
	first := push(t, work, remote, "first", map[string]string{"a.txt": "alpha\n"})
	waitIndexed(t, env, lib, first)
	exec := func(q string, args ...any) {
		t.Helper()
		_, err := env.App.DB.ExecContext(ctx, q, args...)
		apptest.Must(t, q, err)
	}
	state := func() (head, filesAt string) {
		t.Helper()
		apptest.Must(t, "read the work row", env.App.DB.QueryRowContext(ctx,
			`SELECT head_sha, files_at FROM code_search_work WHERE repository_id = $1`, lib.ID).Scan(&head, &filesAt))
		return head, filesAt
	}
	if head, filesAt := state(); filesAt != first {
		t.Fatalf("after a run: head %s, files_at %q; want the head", head, filesAt)
	}

	// The second push waits under a dead process's lease while b.txt's
	// blob goes missing.
	exec(`UPDATE code_search_work SET lease_owner = 'dead', lease_until = $1 WHERE repository_id = $2`,
		store.Now().Add(time.Hour), lib.ID)
	second := push(t, work, remote, "second", map[string]string{"a.txt": "alpha two\n", "b.txt": "bravo\n"})
	blob := strings.TrimSpace(apptest.Git(t, work, "rev-parse", "HEAD:b.txt"))
	loose := filepath.Join(env.App.Repos.GitDir(lib.ID), "objects", blob[:2], blob[2:])
	saved, err := os.ReadFile(loose)
	apptest.Must(t, "read the loose blob", err)
	// its header (the size the plan reads) without all of its content
	var cut bytes.Buffer
	zw := zlib.NewWriter(&cut)
	_, err = zw.Write([]byte("blob 6\x00"))
	apptest.Must(t, "compress", errors.Join(err, zw.Flush()))
	cut.Write(bytes.Repeat([]byte{0xff}, 16))
	apptest.Must(t, "remove the blob", os.Remove(loose))
	apptest.Must(t, "cut the blob", os.WriteFile(loose, cut.Bytes(), 0o444))
	exec(`UPDATE code_search_work SET lease_until = $1 WHERE repository_id = $2`, store.Now().Add(-time.Second), lib.ID)
	x := codesearch.NewIndexer(env.App.DB, env.App.Repos, codesearch.Config{BatchBytes: 1}, nil)
	if n := x.RunOnce(ctx); n != 0 {
		t.Fatalf("indexed %d repositories without b.txt's blob", n)
	}
	if head, filesAt := state(); head != first || filesAt != "" {
		t.Fatalf("after a run cut short: head %s, files_at %q; want %s and none", head, filesAt, first)
	}
	if got := indexRows(t, env, lib.ID); got["a.txt"] != strings.TrimSpace(apptest.Git(t, work, "rev-parse", "HEAD:a.txt")) {
		t.Fatalf("the first batch (a.txt) was not written: %v", got)
	}

	apptest.Must(t, "remove the cut blob", os.Remove(loose))
	apptest.Must(t, "restore the blob", os.WriteFile(loose, saved, 0o444))
	exec(`UPDATE code_search_work SET lease_until = $1 WHERE repository_id = $2`, store.Now().Add(-time.Second), lib.ID)
	x.RunOnce(ctx)
	waitIndexed(t, env, lib, second)
	if got, want := indexRows(t, env, lib.ID), treeFiles(t, work); !maps.Equal(got, want) {
		t.Errorf("after the next run: %v, want %v", got, want)
	}
	if _, filesAt := state(); filesAt != second {
		t.Errorf("files_at %q after the next run, want %s", filesAt, second)
	}
}
