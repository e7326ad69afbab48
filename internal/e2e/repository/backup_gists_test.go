package repository_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// TestBackupHoldsGists backs up a forge with a gist of two commits and
// restores it: the restored gist shows its files and history, clones, and
// takes its owner's push.
func TestBackupHoldsGists(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octo := env.User("octo")
	token := env.Token(octo, "gist")
	c := env.Client(token)
	g, _, err := c.Gists.Create(ctx, github.CreateGistRequest{Files: map[github.GistFilename]*github.CreateGistFile{"a.txt": {Content: "one"}}})
	apptest.Must(t, "create", err)
	_, _, err = c.Gists.Update(ctx, g.GetID(), github.UpdateGistRequest{Files: map[github.GistFilename]*github.UpdateGistFile{"a.txt": {Content: github.Ptr("two")}}})
	apptest.Must(t, "edit", err)
	db := copyDatabase(t, env)
	dir, s := backupOf(t, env)
	if s.Gists != 1 {
		t.Fatalf("backed up %d gists", s.Gists)
	}
	restored, _ := restoreOf(t, env, dir, db)
	rc := restored.Client(token)
	got, _, err := rc.Gists.Get(ctx, g.GetID())
	apptest.Must(t, "get the restored gist", err)
	commits, _, err := rc.Gists.ListCommits(ctx, g.GetID(), nil)
	apptest.Must(t, "its commits", err)
	f := got.Files["a.txt"]
	if f.GetContent() != "two" || len(commits) != 2 {
		t.Fatalf("restored gist: a.txt %q, %d commits", f.GetContent(), len(commits))
	}
	u, err := url.Parse(got.GetGitPullURL())
	apptest.Must(t, "pull URL", err)
	u.User = url.UserPassword("octo", token)
	work := t.TempDir()
	apptest.Git(t, work, "clone", "-q", u.String(), "g")
	apptest.Commit(t, work+"/g", "after the restore", map[string]string{"b.txt": "b\n"})
	apptest.Git(t, work+"/g", "push", "-q", "origin", "HEAD")
	got, _, err = rc.Gists.Get(ctx, g.GetID())
	apptest.Must(t, "get after the push", err)
	if _, ok := got.Files["b.txt"]; !ok || !strings.HasSuffix(got.GetGitPushURL(), g.GetID()+".git") {
		t.Fatalf("the push after the restore: files %v", got.Files)
	}
}
