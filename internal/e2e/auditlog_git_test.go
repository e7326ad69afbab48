package e2e_test

import (
	"slices"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// TestAuditLogGitEvents: a push, a clone and a fetch of an organization's
// repository over git are git.push, git.clone and git.fetch in its audit
// log, returned with include=git and include=all and not by default
// (web); a user's repository records nothing.
func TestAuditLogGitEvents(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	boss := env.User("boss")
	env.Repo(env.Org("acme", boss), "app", apptest.RepoOpts{Private: true})
	env.Repo(boss, "own")
	token := env.Token(boss, "repo", "read:audit_log", "admin:org")
	gh := env.Client(token)

	work := apptest.WorkTree(t, map[string]string{"a.txt": "1\n"})
	apptest.Git(t, work, "push", "-q", env.GitURL("acme", "app", "boss", token), "HEAD:refs/heads/main")
	apptest.Git(t, work, "push", "-q", env.GitURL("boss", "own", "boss", token), "HEAD:refs/heads/main")
	dir := t.TempDir()
	apptest.Git(t, dir, "clone", "-q", env.GitURL("acme", "app", "boss", token), "c")
	apptest.Commit(t, work, "second", map[string]string{"b.txt": "2\n"})
	apptest.Git(t, work, "push", "-q", env.GitURL("acme", "app", "boss", token), "HEAD:refs/heads/main")
	apptest.Git(t, dir+"/c", "fetch", "-q", "origin")

	actionsOf := func(include string) []string {
		t.Helper()
		opts := &github.GetAuditLogOptions{Phrase: github.Ptr("action:git")}
		if include != "" {
			opts.Include = github.Ptr(include)
		}
		list, _, err := gh.Organizations.GetAuditLog(ctx, "acme", opts)
		apptest.Must(t, "audit log include="+include, err)
		for _, e := range list {
			if e.GetActor() != "boss" || e.AdditionalFields["repo"] != "acme/app" {
				t.Errorf("git entry %+v %v", e, e.AdditionalFields)
			}
		}
		return actions(list)
	}
	want := []string{"git.fetch", "git.push", "git.clone", "git.push"}
	if got := actionsOf("git"); !slices.Equal(got, want) {
		t.Fatalf("include=git: %v, want %v", got, want)
	}
	if got := actionsOf("all"); !slices.Equal(got, want) {
		t.Fatalf("include=all: %v, want %v", got, want)
	}
	if got := actionsOf(""); len(got) != 0 {
		t.Fatalf("default include (web) returns git events: %v", got)
	}
}
