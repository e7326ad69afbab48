package app_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"forgeapi/internal/app"
	"forgeapi/internal/apptest"
	"forgeapi/internal/store"
)

// A start reads no stored advisory documents: the advisory index is
// built by the first dependency review request. A document that cannot
// be parsed would fail a start-time build, which logs "load advisory
// database".
func TestStartDoesNotReadTheAdvisoryDocuments(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir, dsn := t.TempDir(), apptest.DatabaseURL(t)
	a, err := app.Open(ctx, app.Config{DataDir: dir, DatabaseURL: dsn, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	if _, err := a.DB.ExecContext(ctx, `INSERT INTO advisories (id, hash, document, created_at, updated_at)
		VALUES ('GHSA-xxxx-xxxx-xxxx', 'h', $1, $2, $2)`, []byte(`{"id": not json`), now); err != nil {
		t.Fatal(err)
	}
	if _, err := a.DB.ExecContext(ctx, `UPDATE advisory_db_state SET version = version + 1 WHERE id = 1`); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}

	var logs logBuffer
	logger, err := app.NewLogger(&logs, "info", "json")
	if err != nil {
		t.Fatal(err)
	}
	m, err := app.Start(ctx, app.Config{Addr: "127.0.0.1:0", DataDir: dir, DatabaseURL: dsn, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(logs.String(), "advisor") {
		t.Errorf("the start read the advisory documents:\n%s", logs.String())
	}
}

// A second server on the same SQLite database is refused, with the
// reason; once the first stops, it starts.
func TestSecondServerOnOneSQLiteDatabaseIsRefused(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("no file locks: a second server is not detected")
	}
	ctx := context.Background()
	cfg := app.Config{Addr: "127.0.0.1:0", DataDir: t.TempDir(), Logger: quietLogger()}
	first, err := app.Start(ctx, cfg)
	apptest.Must(t, "start the first server", err)
	second, err := app.Start(ctx, cfg)
	if err == nil {
		second.Close()
		first.Close()
		t.Fatal("a second server started on the same SQLite database")
	}
	if !errors.Is(err, store.ErrServed) || !strings.Contains(err.Error(), "PostgreSQL") {
		t.Errorf("second start: %v, want ErrServed saying what to do", err)
	}
	apptest.Must(t, "stop the first server", first.Close())
	again, err := app.Start(ctx, cfg)
	apptest.Must(t, "start after the first stopped", err)
	apptest.Must(t, "stop", again.Close())
}

// The url fields drop the default port of --base-url, as the platform's
// links have none, and a start with a base URL that would render
// unusable links fails and says why.
func TestBaseURLIsNormalized(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, func(c *app.Config) { c.BaseURL = "https://forge.example:443/" })
	user := env.User("porter")
	got, _, err := env.Client(env.Token(user)).Users.Get(apptest.Ctx(), "")
	apptest.Must(t, "GET /user", err)
	if want := "https://forge.example/users/porter"; got.GetURL() != want {
		t.Errorf("url = %q, want %q", got.GetURL(), want)
	}
	for _, bad := range []string{"forge.example", "https://forge.example/?page=2"} {
		m, err := app.Start(context.Background(), app.Config{Addr: "127.0.0.1:0", DataDir: t.TempDir(), BaseURL: bad,
			DatabaseURL: apptest.DatabaseURL(t), Logger: quietLogger()})
		if err == nil {
			m.Close()
			t.Errorf("started with --base-url %q", bad)
		} else if !strings.Contains(err.Error(), "--base-url") {
			t.Errorf("--base-url %q: %v, want an error naming the flag", bad, err)
		}
	}
}
