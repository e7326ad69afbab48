package repository_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	"forgeapi/internal/apptest"
)

// recordedRef is the value recorded_refs holds for the reference ("" for
// no row).
func recordedRef(t *testing.T, env *apptest.Env, repoID int64, ref string) string {
	t.Helper()
	var sha string
	err := env.Q().QueryRowContext(context.Background(), `SELECT sha FROM recorded_refs WHERE repository_id = $1 AND ref = $2`,
		repoID, ref).Scan(&sha)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		t.Fatal(err)
	}
	return sha
}

// TestRecordedRefsFollowGit: recorded_refs holds the value git gave a
// reference by the last push recorded, never an older one: a push whose
// recording failed and that the recovery records after a later push was
// recorded leaves the later value, and a branch made and deleted by two
// such pushes is recorded deleted.
func TestRecordedRefsFollowGit(t *testing.T) {
	t.Parallel()
	f := startRecovery(t)
	rec, env, work, url, first := f.rec, f.env, f.work, f.url, f.first
	if got := recordedRef(t, env, f.repo.ID, "refs/heads/main"); got != first {
		t.Fatalf("recorded main after the first push: %q, want %s", got, first)
	}

	apptest.Commit(t, work, "second", map[string]string{"a.txt": "a\n"})
	rec.Fail(true)
	apptest.Git(t, work, "push", url, "main")
	rec.Fail(false)
	third := apptest.Commit(t, work, "third", map[string]string{"b.txt": "b\n"})
	apptest.Git(t, work, "push", url, "main")
	if n := env.App.PushRecovery.RunOnce(context.Background()); n != 1 {
		t.Fatalf("recovered %d pushes, want 1", n)
	}
	if got := recordedRef(t, env, f.repo.ID, "refs/heads/main"); got != third {
		t.Errorf("recorded main after a late recovery of an earlier push: %q, want %s", got, third)
	}

	rec.Fail(true)
	apptest.Git(t, work, "push", url, "main:refs/heads/feature")
	apptest.Git(t, work, "push", "--delete", url, "feature")
	rec.Fail(false)
	if n := env.App.PushRecovery.RunOnce(context.Background()); n != 2 {
		t.Fatalf("recovered %d pushes, want 2", n)
	}
	if got := recordedRef(t, env, f.repo.ID, "refs/heads/feature"); got != "0000000000000000000000000000000000000000" {
		t.Errorf("recorded feature after its creation and deletion were recovered: %q, want the zero SHA", got)
	}
}
