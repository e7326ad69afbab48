package repository_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"forgeapi/internal/app"
	"forgeapi/internal/apptest"
	"forgeapi/internal/githost"
	"forgeapi/internal/repos"
)

// withMaintenance makes repositories due after pushes pushes; the worker
// runs only when the test calls RunOnce.
func withMaintenance(pushes int64) apptest.Option {
	return func(c *app.Config) {
		c.GitMaintenance = githost.MaintenanceConfig{Pushes: pushes, PollInterval: -1}
	}
}

// pushesSince is the repository's maintenance push count (0 without a row).
func pushesSince(t *testing.T, env *apptest.Env, repoID int64) int64 {
	t.Helper()
	var n int64
	err := env.Q().QueryRowContext(context.Background(),
		`SELECT COALESCE(SUM(pushes_since), 0) FROM git_maintenance WHERE repository_id = $1`, repoID).Scan(&n)
	apptest.Must(t, "read pushes_since", err)
	return n
}

// objectCounts returns git count-objects -v of the bare repository: loose
// objects ("count") and packs ("packs").
func objectCounts(t *testing.T, dir string) (loose, packs int) {
	t.Helper()
	for _, line := range strings.Split(apptest.Git(t, dir, "count-objects", "-v"), "\n") {
		key, value, _ := strings.Cut(line, ": ")
		n, _ := strconv.Atoi(strings.TrimSpace(value))
		switch key {
		case "count":
			loose = n
		case "packs":
			packs = n
		}
	}
	return loose, packs
}

// pushCommits pushes n commits to the repository, one push each.
func pushCommits(t *testing.T, url string, n int) {
	t.Helper()
	work := apptest.WorkTree(t, nil)
	for i := range n {
		apptest.Commit(t, work, fmt.Sprintf("commit %d", i), map[string]string{fmt.Sprintf("f%d.txt", i): fmt.Sprintf("content %d\n", i)})
		apptest.Git(t, work, "push", "-q", url, "HEAD:refs/heads/main")
	}
}

func TestMaintenancePacksAfterThreshold(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, withMaintenance(3))
	owner := env.User("octocat")
	repo := env.Repo(owner, "hello")
	pushCommits(t, env.GitURL("octocat", "hello", "octocat", env.Token(owner, "repo")), 3)
	if n := pushesSince(t, env, repo.ID); n != 3 {
		t.Fatalf("pushes counted: %d, want 3", n)
	}
	dir := env.App.Repos.GitDir(repo.ID)
	looseBefore, packsBefore := objectCounts(t, dir)
	if looseBefore == 0 {
		t.Fatalf("no loose objects after 3 small pushes (packs %d)", packsBefore)
	}

	if n := env.App.GitMaintenance.RunOnce(context.Background()); n != 1 {
		t.Fatalf("maintained %d repositories, want 1", n)
	}
	loose, packs := objectCounts(t, dir)
	if loose != 0 || packs < 1 {
		t.Fatalf("after maintenance: %d loose objects, %d packs (before: %d, %d)", loose, packs, looseBefore, packsBefore)
	}
	if n := pushesSince(t, env, repo.ID); n != 0 {
		t.Fatalf("pushes counted after maintenance: %d, want 0", n)
	}
	var lastRun time.Time
	var leaseOwner string
	apptest.Must(t, "read maintenance row", env.Q().QueryRowContext(context.Background(),
		`SELECT last_run_at, lease_owner FROM git_maintenance WHERE repository_id = $1`, repo.ID).Scan(&lastRun, &leaseOwner))
	if leaseOwner != "" {
		t.Fatalf("lease still held by %q", leaseOwner)
	}
	if n := env.App.GitMaintenance.RunOnce(context.Background()); n != 0 {
		t.Fatalf("second run maintained %d repositories, want 0", n)
	}
	// The repository still serves its history.
	clone := t.TempDir()
	apptest.Git(t, clone, "clone", "-q", env.GitURL("octocat", "hello", "octocat", env.Token(owner, "repo")), ".")
	if got := strings.TrimSpace(apptest.Git(t, clone, "rev-list", "--count", "HEAD")); got != "3" {
		t.Fatalf("clone after maintenance has %s commits, want 3", got)
	}
}

func TestMaintenanceLeavesRepositoryBelowThreshold(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, withMaintenance(5))
	owner := env.User("octocat")
	repo := env.Repo(owner, "hello")
	pushCommits(t, env.GitURL("octocat", "hello", "octocat", env.Token(owner, "repo")), 2)
	dir := env.App.Repos.GitDir(repo.ID)
	looseBefore, packsBefore := objectCounts(t, dir)

	if n := env.App.GitMaintenance.RunOnce(context.Background()); n != 0 {
		t.Fatalf("maintained %d repositories, want 0", n)
	}
	if loose, packs := objectCounts(t, dir); loose != looseBefore || packs != packsBefore {
		t.Fatalf("objects changed: %d loose, %d packs (before: %d, %d)", loose, packs, looseBefore, packsBefore)
	}
	if n := pushesSince(t, env, repo.ID); n != 2 {
		t.Fatalf("pushes counted: %d, want 2", n)
	}
}

func TestMaintenanceSkipsRepositoryLockedForMigration(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, withMaintenance(1))
	owner := env.User("octocat")
	repo := env.Repo(owner, "hello")
	pushCommits(t, env.GitURL("octocat", "hello", "octocat", env.Token(owner, "repo")), 1)
	dir := env.App.Repos.GitDir(repo.ID)
	looseBefore, _ := objectCounts(t, dir)
	apptest.Must(t, "lock", repos.SetMigrationLock(context.Background(), env.Q(), repo.ID, true))

	if n := env.App.GitMaintenance.RunOnce(context.Background()); n != 0 {
		t.Fatalf("maintained %d repositories, want 0", n)
	}
	if loose, _ := objectCounts(t, dir); loose != looseBefore {
		t.Fatalf("loose objects of a locked repository: %d, before %d", loose, looseBefore)
	}
	if n := pushesSince(t, env, repo.ID); n != 1 {
		t.Fatalf("pushes counted: %d, want 1", n)
	}
}

func TestMaintenanceRunsAfterMaxAge(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, withMaintenance(50))
	owner := env.User("octocat")
	repo := env.Repo(owner, "hello")
	pushCommits(t, env.GitURL("octocat", "hello", "octocat", env.Token(owner, "repo")), 1)
	if n := env.App.GitMaintenance.RunOnce(context.Background()); n != 0 {
		t.Fatalf("maintained %d repositories one push after the first, want 0", n)
	}
	old := time.Now().UTC().Add(-githost.DefaultMaintenanceMaxAge - time.Hour)
	_, err := env.Q().ExecContext(context.Background(), `UPDATE git_maintenance SET last_run_at = $1 WHERE repository_id = $2`, old, repo.ID)
	apptest.Must(t, "age the maintenance row", err)

	if n := env.App.GitMaintenance.RunOnce(context.Background()); n != 1 {
		t.Fatalf("maintained %d repositories past the maximum age, want 1", n)
	}
	if loose, _ := objectCounts(t, env.App.Repos.GitDir(repo.ID)); loose != 0 {
		t.Fatalf("%d loose objects after maintenance", loose)
	}
	if n := pushesSince(t, env, repo.ID); n != 0 {
		t.Fatalf("pushes counted after maintenance: %d, want 0", n)
	}
}

// TestMaintenanceMeasuresUnmeasuredRepositories: a repository whose size
// was never measured (size_kb NULL, as migration 00052 leaves those that
// predate it) is measured by the next maintenance run, gc or not, and
// then served; a missing git directory leaves it for the next run.
func TestMaintenanceMeasuresUnmeasuredRepositories(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, withMaintenance(50))
	ctx := context.Background()
	owner := env.User("octocat")
	token := env.Token(owner, "repo")
	repo, gone := env.Repo(owner, "hello"), env.Repo(owner, "gone")
	pushCommits(t, env.GitURL("octocat", "hello", "octocat", token), 2)
	apptest.Must(t, "remove a git directory", os.RemoveAll(env.App.Repos.GitDir(gone.ID)))
	_, err := env.Q().ExecContext(ctx, `INSERT INTO repository_counts (repository_id, size_kb) VALUES ($1, NULL), ($2, NULL)
		ON CONFLICT (repository_id) DO UPDATE SET size_kb = NULL`, repo.ID, gone.ID)
	apptest.Must(t, "forget the sizes", err)
	served := func() int {
		r, _, err := env.Client(token).Repositories.Get(ctx, "octocat", "hello")
		apptest.Must(t, "GET the repository", err)
		return r.GetSize()
	}
	if got := served(); got != 0 {
		t.Fatalf("unmeasured size served as %d, want 0", got)
	}

	if n := env.App.GitMaintenance.RunOnce(ctx); n != 0 {
		t.Fatalf("maintained %d repositories, want 0", n)
	}
	want := 0
	for _, line := range strings.Split(apptest.Git(t, env.App.Repos.GitDir(repo.ID), "count-objects", "-v"), "\n") {
		if key, value, _ := strings.Cut(line, ": "); key == "size" || key == "size-pack" {
			n, _ := strconv.Atoi(value)
			want += n
		}
	}
	if got := served(); got != want || want == 0 {
		t.Fatalf("measured size served as %d, git counts %d", got, want)
	}
	var unmeasured int
	apptest.Must(t, "count unmeasured", env.Q().QueryRowContext(ctx,
		`SELECT count(*) FROM repository_counts WHERE size_kb IS NULL`).Scan(&unmeasured))
	if unmeasured != 1 {
		t.Fatalf("%d repositories left unmeasured, want 1 (the one without git data)", unmeasured)
	}
}
