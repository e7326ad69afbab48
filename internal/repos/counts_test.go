package repos_test

import (
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apptest"
	"forgeapi/internal/store"
)

// TestRepositoryCountsFollowEveryChange stars, watches, ignores, forks
// and deletes through the API, and deletes a user and a forked
// repository (whose cascades delete stars and subscriptions and unset
// fork_of_id), and checks after every step that the kept counts
// (repository_counts, migration 00044) are what counting the rows gives,
// and what the API answers.
func TestRepositoryCountsFollowEveryChange(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo, hubot, mona := env.User("octo"), env.User("hubot"), env.User("mona")
	env.Repo(octo, "hello")
	work := apptest.WorkTree(t, map[string]string{"README.md": "hi\n"})
	apptest.Git(t, work, "push", "-q", env.GitURL("octo", "hello", "octo", env.Token(octo, "repo")), "HEAD:refs/heads/main")
	hubotC, monaC := env.Client(env.Token(hubot, "repo", "delete_repo")), env.Client(env.Token(mona, "repo", "delete_repo"))

	check := func(step string, stars, watchers, forks int) {
		t.Helper()
		rows, err := env.App.DB.QueryContext(ctx, `SELECT r.id, r.name,
			(SELECT count(*) FROM stars s WHERE s.repository_id = r.id),
			(SELECT count(*) FROM subscriptions w WHERE w.repository_id = r.id AND NOT w.ignored),
			(SELECT count(*) FROM repositories f WHERE f.fork_of_id = r.id),
			COALESCE(c.stars, 0), COALESCE(c.subscribers, 0), COALESCE(c.forks, 0)
			FROM repositories r LEFT JOIN repository_counts c ON c.repository_id = r.id`)
		apptest.Must(t, "read the counts", err)
		defer rows.Close()
		for rows.Next() {
			var id int64
			var name string
			var counted, kept [3]int
			apptest.Must(t, "scan", rows.Scan(&id, &name, &counted[0], &counted[1], &counted[2], &kept[0], &kept[1], &kept[2]))
			if counted != kept {
				t.Errorf("%s: repository %s: kept (stars, watchers, forks) %v, counted %v", step, name, kept, counted)
			}
		}
		apptest.Must(t, "read the counts", rows.Err())
		repo, _, err := hubotC.Repositories.Get(ctx, "octo", "hello")
		apptest.Must(t, "GET the repository", err)
		if got := [3]int{repo.GetStargazersCount(), repo.GetSubscribersCount(), repo.GetForksCount()}; got != [3]int{stars, watchers, forks} {
			t.Errorf("%s: octo/hello answers (stars, subscribers, forks) %v, want %v", step, got, [3]int{stars, watchers, forks})
		}
	}
	base := env.Repo(octo, "base") // forked below, then deleted under its fork
	check("at the start", 0, 0, 0)

	for _, c := range []*github.Client{hubotC, monaC} {
		_, err := c.Activity.Star(ctx, "octo", "hello")
		apptest.Must(t, "star", err)
	}
	_, err := hubotC.Activity.Star(ctx, "octo", "hello") // again: no second star
	apptest.Must(t, "star again", err)
	check("two stars", 2, 0, 0)
	_, err = monaC.Activity.Unstar(ctx, "octo", "hello")
	apptest.Must(t, "unstar", err)
	check("one unstarred", 1, 0, 0)

	for _, c := range []*github.Client{hubotC, monaC} {
		_, _, err = c.Activity.SetRepositorySubscription(ctx, "octo", "hello", &github.Subscription{Subscribed: github.Ptr(true)})
		apptest.Must(t, "watch", err)
	}
	check("two watching", 1, 2, 0)
	_, _, err = monaC.Activity.SetRepositorySubscription(ctx, "octo", "hello", &github.Subscription{Ignored: github.Ptr(true)})
	apptest.Must(t, "ignore", err)
	check("one ignoring", 1, 1, 0)
	_, _, err = monaC.Activity.SetRepositorySubscription(ctx, "octo", "hello", &github.Subscription{Subscribed: github.Ptr(true)})
	apptest.Must(t, "watch again", err)
	check("watching again", 1, 2, 0)
	_, err = hubotC.Activity.DeleteRepositorySubscription(ctx, "octo", "hello")
	apptest.Must(t, "unwatch", err)
	check("one unwatched", 1, 1, 0)

	for _, c := range []*github.Client{hubotC, monaC} {
		if _, _, err := c.Repositories.CreateFork(ctx, "octo", "hello", nil); err != nil {
			if _, accepted := err.(*github.AcceptedError); !accepted {
				t.Fatalf("fork: %v", err)
			}
		}
	}
	check("two forks", 1, 1, 2)
	_, err = hubotC.Repositories.Delete(ctx, "hubot", "hello")
	apptest.Must(t, "delete a fork", err)
	check("one fork deleted", 1, 1, 1)

	// mona's star, subscription and fork go with her account.
	_, err = monaC.Activity.Star(ctx, "octo", "hello")
	apptest.Must(t, "star", err)
	check("mona starred", 2, 1, 1)
	_, err = env.App.DB.ExecContext(ctx, `DELETE FROM repositories WHERE owner_id = $1`, mona.ID)
	apptest.Must(t, "delete mona's repositories", err)
	apptest.Must(t, "delete mona", env.App.DB.Tx(ctx, func(tx store.Q) error { return accounts.Delete(ctx, tx, mona.ID) }))
	check("mona deleted", 1, 0, 0)

	// A fork whose source is deleted is a fork of nothing.
	_, err = env.App.DB.ExecContext(ctx, `UPDATE repositories SET fork_of_id = $1 WHERE id = (
		SELECT id FROM repositories WHERE name = 'hello' AND owner_id = $2)`, base.ID, octo.ID)
	apptest.Must(t, "make octo/hello a fork of octo/base", err)
	check("octo/hello made a fork", 1, 0, 0)
	_, err = env.App.DB.ExecContext(ctx, `DELETE FROM repositories WHERE id = $1`, base.ID)
	apptest.Must(t, "delete octo/base", err)
	check("octo/base deleted", 1, 0, 0)
}
