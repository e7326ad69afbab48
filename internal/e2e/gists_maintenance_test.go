package e2e_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/gists"
)

// looseObjects counts the loose objects of the bare repository dir.
func looseObjects(t *testing.T, dir string) string {
	t.Helper()
	out, err := exec.Command("git", "--git-dir", dir, "count-objects", "-v").Output()
	apptest.Must(t, "count-objects", err)
	for _, line := range strings.Split(string(out), "\n") {
		if n, ok := strings.CutPrefix(line, "count: "); ok {
			return n
		}
	}
	t.Fatalf("count-objects printed %q", out)
	return ""
}

func TestMaintenancePacksGistsThatChangedEnough(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	alice := env.User("alice")
	c := env.Client(env.Token(alice, "gist"))
	busy, _, err := c.Gists.Create(ctx, github.CreateGistRequest{Files: files("a.txt", "0")})
	apptest.Must(t, "create", err)
	quiet, _, err := c.Gists.Create(ctx, github.CreateGistRequest{Files: files("q.txt", "0")})
	apptest.Must(t, "create", err)
	edit := func(g *github.Gist, content string) {
		_, _, err := c.Gists.Update(ctx, g.GetID(), github.UpdateGistRequest{
			Files: map[github.GistFilename]*github.UpdateGistFile{"a.txt": {Content: github.Ptr(content)}}})
		apptest.Must(t, "edit", err)
	}
	edit(busy, "1")
	edit(busy, "2")
	edit(busy, "2") // no change: no commit, not counted
	edit(quiet, "1")
	m := gists.NewMaintainer(env.App.Gists, gists.MaintenanceConfig{Changes: 2, PollInterval: -1}, nil)
	if n := m.RunOnce(ctx); n != 1 {
		t.Fatalf("maintained %d gists, want the busy one", n)
	}
	if n := looseObjects(t, env.App.Gists.Dir(busy.GetID())); n != "0" {
		t.Fatalf("the busy gist keeps %s loose objects after git gc", n)
	}
	if n := looseObjects(t, env.App.Gists.Dir(quiet.GetID())); n == "0" {
		t.Fatal("the quiet gist was packed")
	}
	if n := m.RunOnce(ctx); n != 0 {
		t.Fatalf("maintained %d gists again without changes", n)
	}
	got, _, err := c.Gists.Get(ctx, busy.GetID())
	apptest.Must(t, "get after gc", err)
	if f := got.Files["a.txt"]; f.GetContent() != "2" {
		t.Fatalf("a.txt after gc: %q", f.GetContent())
	}
}
