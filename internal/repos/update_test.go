package repos_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/events"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// rowWatcher is an events.Sink that reads, in the event's transaction,
// the description the repository's row holds when a repository event is
// emitted.
type rowWatcher struct {
	mu   sync.Mutex
	seen []string // "event description | row description"
}

func (w *rowWatcher) HandleEvent(ctx context.Context, tx *store.Tx, e *events.Event) error {
	if e.HookEvent != "repository" || e.Repo == nil {
		return nil
	}
	row, err := repos.ByID(ctx, tx, e.Repo.ID)
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen = append(w.seen, e.Repo.Description+" | "+row.Description)
	return nil
}

func (w *rowWatcher) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.seen...)
}

// TestUpdateWritesRowLast: a change that keeps the repository's name and
// owner emits its events (with the new state) before the repository's row
// is written, so the row, which concurrent writers of the repository wait
// for on PostgreSQL, is locked only for the commit; the row and the
// response have the change after the call. A rename still writes the row
// first.
func TestUpdateWritesRowLast(t *testing.T) {
	t.Parallel()
	watcher := &rowWatcher{}
	env := apptest.Start(t, apptest.WithEventSink(watcher))
	ctx := apptest.Ctx()
	octo := env.User("octo")
	repo := env.Repo(octo, "hello", apptest.RepoOpts{Description: "old"})
	c := env.Client(env.Token(octo, "repo"))
	created := len(watcher.all()) // repository created

	got, _, err := c.Repositories.Edit(ctx, "octo", "hello", &github.Repository{Description: github.Ptr("new")})
	apptest.Must(t, "edit description", err)
	if got.GetDescription() != "new" {
		t.Fatalf("response description %q, want new", got.GetDescription())
	}
	row, err := repos.ByID(ctx, env.Q(), repo.ID)
	apptest.Must(t, "read row", err)
	if row.Description != "new" || !got.GetUpdatedAt().Time.Equal(row.UpdatedAt.Truncate(time.Second)) {
		t.Fatalf("row after the call: description %q updated_at %v, response updated_at %v", row.Description, row.UpdatedAt, got.GetUpdatedAt())
	}
	if seen := watcher.all()[created:]; len(seen) != 1 || seen[0] != "new | old" {
		t.Fatalf("event | row during the description change: %q, want [\"new | old\"]", seen)
	}

	_, _, err = c.Repositories.Edit(ctx, "octo", "hello", &github.Repository{Name: github.Ptr("hi"), Description: github.Ptr("newer")})
	apptest.Must(t, "rename", err)
	if seen := watcher.all(); len(seen) < 2 || seen[len(seen)-1] != "newer | newer" {
		t.Fatalf("event | row during the rename: %q, want the last \"newer | newer\"", seen)
	}
}
