package e2e_test

import (
	"testing"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apptest"
)

// TestCacheByIDSeesWritesAtOnce: an account read through the cache by id
// is the caller's own copy, and a committed change of the account is seen
// by the next lookup.
func TestCacheByIDSeesWritesAtOnce(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo")
	cache := accounts.NewCache(env.App.DB, 0)

	first, err := cache.ByID(ctx, env.Q(), octo.ID)
	apptest.Must(t, "by id", err)
	first.Name = "changed by the caller"
	if _, err := env.App.DB.ExecContext(ctx, `UPDATE accounts SET name = 'The Octocat' WHERE id = $1`, octo.ID); err != nil {
		t.Fatal(err)
	}
	second, err := cache.ByID(ctx, env.Q(), octo.ID)
	apptest.Must(t, "by id after the update", err)
	if second.Name != "The Octocat" || second.Login != "octo" {
		t.Errorf("after the update: name %q, login %q; want The Octocat, octo", second.Name, second.Login)
	}
	var none *accounts.Cache
	third, err := none.ByID(ctx, env.Q(), octo.ID)
	apptest.Must(t, "by id without a cache", err)
	if third.Name != "The Octocat" {
		t.Errorf("without a cache: name %q", third.Name)
	}
}
