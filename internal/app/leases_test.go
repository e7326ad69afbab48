package app_test

import (
	"testing"
	"time"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/testwait"
)

// TestRestartReleasesTheWorkLeasesOfTheLastRun leaves in every work
// table a row leased for an hour by a process that no longer runs, as a
// kill -9 leaves them, and restarts the server on its SQLite database:
// knowing it is the database's only server, it ends those leases at
// start, so the export, the pull request check and the organization
// deletion are done at once instead of an hour later.
func TestRestartReleasesTheWorkLeasesOfTheLastRun(t *testing.T) {
	if apptest.Postgres() {
		t.Skip("only the one server of a SQLite database knows that a lease it finds is a dead process's")
	}
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	owner := env.User("leaser")
	acme := env.Org("acme", owner)
	doomed := env.Org("doomed", owner)
	repo := env.Repo(acme, "rockets")
	token := env.Token(owner, "repo", "admin:org", "delete_repo")
	c := env.Client(token) // the checks below read env and c, both replaced at the restart

	// A pull request whose check is done, and an exported migration.
	main, _, err := c.Repositories.CreateFile(ctx, "acme", "rockets", "README.md", &github.RepositoryContentFileOptions{
		Message: github.Ptr("first"), Content: []byte("hello\n")})
	apptest.Must(t, "create the first commit", err)
	_, _, err = c.Git.CreateRef(ctx, "acme", "rockets", github.CreateRef{Ref: "refs/heads/feature", SHA: main.Commit.GetSHA()})
	apptest.Must(t, "create a branch", err)
	_, _, err = c.Repositories.CreateFile(ctx, "acme", "rockets", "feature.txt", &github.RepositoryContentFileOptions{
		Message: github.Ptr("feature"), Content: []byte("more\n"), Branch: github.Ptr("feature")})
	apptest.Must(t, "commit on the branch", err)
	pull, _, err := c.PullRequests.Create(ctx, "acme", "rockets", github.CreatePullRequest{
		Title: github.Ptr("feature"), Head: "feature", Base: "main"})
	apptest.Must(t, "open a pull request", err)
	checked := func() bool {
		var due bool
		apptest.Must(t, "read the check", env.App.DB.QueryRowContext(ctx,
			`SELECT check_due FROM pull_requests WHERE repository_id = $1 AND number = $2`, repo.ID, pull.GetNumber()).Scan(&due))
		return !due
	}
	testwait.Until(t, "the pull request's check", checked)
	migration, _, err := c.Migrations.StartMigration(ctx, "acme", []string{"rockets"}, nil)
	apptest.Must(t, "start a migration", err)
	exported := func() bool {
		m, _, err := c.Migrations.MigrationStatus(ctx, "acme", migration.GetID())
		apptest.Must(t, "migration status", err)
		return m.GetState() == "exported"
	}
	testwait.Until(t, "the export", exported)

	// As a killed process left them: the export, the check, a deletion,
	// a push's recovery and a git gc run under way, each leased for an
	// hour.
	inAnHour := time.Now().UTC().Add(time.Hour)
	for _, leave := range []struct {
		what, query string
		args        []any
	}{
		{"an export", `UPDATE org_migrations SET state = 'exporting', lease_owner = 'killed', lease_until = $1 WHERE id = $2`,
			[]any{inAnHour, migration.GetID()}},
		{"a check", `UPDATE pull_requests SET check_due = TRUE, lease_owner = 'killed', lease_until = $1 WHERE repository_id = $2`,
			[]any{inAnHour, repo.ID}},
		{"a deletion", `INSERT INTO org_deletions (org_id, requested_at, lease_owner, lease_until) VALUES ($1, $2, 'killed', $3)`,
			[]any{doomed.ID, time.Now().UTC(), inAnHour}},
		{"a push's recovery", `INSERT INTO push_log (repository_id, pusher_id, updates, refs_before, created_at, lease_owner, lease_until)
			VALUES ($1, $2, '[]', '[]', $3, 'killed', $4)`, []any{repo.ID, owner.ID, time.Now().UTC().Add(-time.Hour), inAnHour}},
		{"a git gc run", `INSERT INTO git_maintenance (repository_id, pushes_since, last_run_at, lease_owner, lease_until)
			VALUES ($1, 0, $2, 'killed', $3) ON CONFLICT (repository_id) DO UPDATE SET lease_owner = 'killed', lease_until = $3`,
			[]any{repo.ID, time.Now().UTC(), inAnHour}},
	} {
		_, err := env.App.DB.ExecContext(ctx, leave.query, leave.args...)
		apptest.Must(t, "leave "+leave.what+" leased", err)
	}
	env.Stop()

	env = apptest.StartConfig(t, env.Config)
	c = env.Client(token)
	testwait.Until(t, "the export after the restart", exported)
	testwait.Until(t, "the check after the restart", checked)
	testwait.Until(t, "the deletion after the restart", func() bool {
		_, resp, _ := c.Organizations.Get(ctx, "doomed")
		return apptest.ResponseStatus(resp) == 404
	})
	var cutShort int
	apptest.Must(t, "count the push log", env.App.DB.QueryRowContext(ctx, `SELECT COUNT(*) FROM push_log`).Scan(&cutShort))
	if cutShort != 0 {
		t.Errorf("%d pushes cut short left in the push log, want the one recovered by the start", cutShort)
	}
	for _, table := range []string{"org_migrations", "pull_requests", "org_deletions", "push_log", "git_maintenance"} {
		var leased int
		apptest.Must(t, "count "+table+"'s leases", env.App.DB.QueryRowContext(ctx,
			`SELECT COUNT(*) FROM `+table+` WHERE lease_until > $1`, inAnHour.Add(-time.Minute)).Scan(&leased))
		if leased > 0 {
			t.Errorf("%s: %d rows still leased by the killed process", table, leased)
		}
	}
}
