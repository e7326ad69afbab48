package repository_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// TestCommitsAndCompare reads a pushed history with go-github: the list
// with its filters and pages, one commit with stats and patches, and a
// comparison of a branch with main.
func TestCommitsAndCompare(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo", apptest.UserOpts{Email: "author@example.com"})
	env.Repo(octo, "hello")
	if resp, body := env.Do("GET", "/repos/octo/hello/commits", "", nil); resp.StatusCode != http.StatusConflict {
		t.Fatalf("commits of an empty repository: %d %s, want 409", resp.StatusCode, body)
	}
	token := env.Token(octo, "repo")
	work := apptest.WorkTree(t, map[string]string{"README.md": "one\n"})
	apptest.Commit(t, work, "docs", map[string]string{"docs/a.md": "a\nb\n"})
	apptest.Commit(t, work, "change readme", map[string]string{"README.md": "one\ntwo\n"})
	apptest.Git(t, work, "checkout", "-q", "-b", "topic")
	apptest.Commit(t, work, "topic work", map[string]string{"topic.txt": "t\n", "docs/a.md": ""})
	apptest.Git(t, work, "checkout", "-q", "main")
	apptest.Commit(t, work, "main moves on", map[string]string{"later.txt": "l\n"})
	remote := env.GitURL("octo", "hello", "octo", token)
	apptest.Git(t, work, "push", "-q", remote, "main", "topic")
	c := env.Client("")

	list, resp, err := c.Repositories.ListCommits(ctx, "octo", "hello", &github.CommitsListOptions{ListOptions: github.ListOptions{PerPage: 2}})
	apptest.Must(t, "list", err)
	if len(list) != 2 || list[0].GetCommit().GetMessage() != "main moves on\n" || resp.NextPage != 2 ||
		list[0].GetAuthor().GetLogin() != "octo" || list[0].GetCommit().GetAuthor().GetEmail() != "author@example.com" {
		t.Fatalf("page 1: %d commits, next %d, first %+v", len(list), resp.NextPage, list[0])
	}
	page2, resp, err := c.Repositories.ListCommits(ctx, "octo", "hello", &github.CommitsListOptions{ListOptions: github.ListOptions{PerPage: 2, Page: 2}})
	apptest.Must(t, "page 2", err)
	if len(page2) != 2 || resp.NextPage != 0 || page2[1].GetCommit().GetMessage() != "initial commit\n" {
		t.Fatalf("page 2: %d commits, next %d", len(page2), resp.NextPage)
	}
	onPath, _, err := c.Repositories.ListCommits(ctx, "octo", "hello", &github.CommitsListOptions{SHA: "topic", Path: "docs"})
	apptest.Must(t, "path", err)
	if len(onPath) != 2 || onPath[0].GetCommit().GetMessage() != "topic work\n" || onPath[1].GetCommit().GetMessage() != "docs\n" {
		t.Fatalf("commits touching docs on topic: %d", len(onPath))
	}
	for author, want := range map[string]int{"octo": 4, "author@example.com": 4, "nobody": 0} {
		got, _, err := c.Repositories.ListCommits(ctx, "octo", "hello", &github.CommitsListOptions{Author: author})
		apptest.Must(t, "author", err)
		if len(got) != want {
			t.Errorf("author %s: %d commits, want %d", author, len(got), want)
		}
	}
	future, _, err := c.Repositories.ListCommits(ctx, "octo", "hello", &github.CommitsListOptions{Since: time.Now().Add(time.Hour)})
	apptest.Must(t, "since", err)
	if len(future) != 0 {
		t.Errorf("since an hour ahead: %d commits", len(future))
	}

	// One commit: stats and patches.
	commit, _, err := c.Repositories.GetCommit(ctx, "octo", "hello", list[1].GetSHA(), nil)
	apptest.Must(t, "get commit", err)
	if commit.GetStats().GetAdditions() != 1 || commit.GetStats().GetDeletions() != 0 || len(commit.Files) != 1 ||
		commit.Files[0].GetFilename() != "README.md" || commit.Files[0].GetStatus() != "modified" ||
		!strings.Contains(commit.Files[0].GetPatch(), "+two") {
		t.Fatalf("commit: stats %+v files %+v", commit.GetStats(), commit.Files)
	}
	if _, resp, _ := c.Repositories.GetCommit(ctx, "octo", "hello", "nope", nil); apptest.ResponseStatus(resp) != http.StatusUnprocessableEntity {
		t.Fatalf("unknown commit: %d, want 422", apptest.ResponseStatus(resp))
	}

	// Compare: topic is one ahead and one behind main.
	cmp, _, err := c.Repositories.CompareCommits(ctx, "octo", "hello", "main", "topic", nil)
	apptest.Must(t, "compare", err)
	if cmp.GetStatus() != "diverged" || cmp.GetAheadBy() != 1 || cmp.GetBehindBy() != 1 || len(cmp.Commits) != 1 ||
		cmp.GetMergeBaseCommit().GetSHA() != list[1].GetSHA() || len(cmp.Files) != 2 {
		t.Fatalf("compare: %s ahead %d behind %d, %d commits, %d files", cmp.GetStatus(), cmp.GetAheadBy(), cmp.GetBehindBy(), len(cmp.Commits), len(cmp.Files))
	}
	statuses := map[string]string{}
	for _, f := range cmp.Files {
		statuses[f.GetFilename()] = f.GetStatus()
	}
	if statuses["topic.txt"] != "added" || statuses["docs/a.md"] != "removed" {
		t.Fatalf("compare files: %v", statuses)
	}
	same, _, err := c.Repositories.CompareCommits(ctx, "octo", "hello", "main", "main", nil)
	apptest.Must(t, "compare identical", err)
	if same.GetStatus() != "identical" {
		t.Fatalf("main...main: %s", same.GetStatus())
	}
	if resp, _ := env.Do("GET", "/repos/octo/hello/compare/main...nope", "", nil); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("compare with an unknown head: %d", resp.StatusCode)
	}
}
