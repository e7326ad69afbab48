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
	apptest.Must(t, "delete mona", env.App.DB.Tx(ctx, func(tx *store.Tx) error { return accounts.Delete(ctx, tx, mona.ID) }))
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

// TestAccountCountsFollowEveryChange follows, unfollows, creates public
// and private repositories, makes one private, transfers one and deletes
// one through the API, and deletes a user (whose cascades take their
// follows and repositories), checking after every step that the kept
// counts (account_counts, migration 00045) are what counting the rows
// gives, and what GET /users/{username} answers.
func TestAccountCountsFollowEveryChange(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo, hubot, mona := env.User("octo"), env.User("hubot"), env.User("mona")
	env.Org("acme", octo)
	octoC := env.Client(env.Token(octo, "repo", "delete_repo", "user"))
	hubotC, monaC := env.Client(env.Token(hubot, "repo", "user")), env.Client(env.Token(mona, "repo", "user"))

	check := func(step string, followers, following, publicRepos int) {
		t.Helper()
		rows, err := env.App.DB.QueryContext(ctx, `SELECT a.login,
			(SELECT count(*) FROM follows f WHERE f.followee_id = a.id),
			(SELECT count(*) FROM follows f WHERE f.follower_id = a.id),
			(SELECT count(*) FROM repositories r WHERE r.owner_id = a.id AND NOT r.private),
			(SELECT count(*) FROM repositories r WHERE r.owner_id = a.id AND r.private),
			COALESCE(c.followers, 0), COALESCE(c.following, 0), COALESCE(c.public_repos, 0), COALESCE(c.private_repos, 0)
			FROM accounts a LEFT JOIN account_counts c ON c.account_id = a.id`)
		apptest.Must(t, "read the counts", err)
		defer rows.Close()
		for rows.Next() {
			var login string
			var counted, kept [4]int
			apptest.Must(t, "scan", rows.Scan(&login, &counted[0], &counted[1], &counted[2], &counted[3], &kept[0], &kept[1], &kept[2], &kept[3]))
			if counted != kept {
				t.Errorf("%s: %s: kept (followers, following, public, private) %v, counted %v", step, login, kept, counted)
			}
		}
		apptest.Must(t, "read the counts", rows.Err())
		u, _, err := hubotC.Users.Get(ctx, "octo")
		apptest.Must(t, "GET /users/octo", err)
		if got := [3]int{u.GetFollowers(), u.GetFollowing(), u.GetPublicRepos()}; got != [3]int{followers, following, publicRepos} {
			t.Errorf("%s: octo answers (followers, following, public_repos) %v, want %v", step, got, [3]int{followers, following, publicRepos})
		}
	}
	check("at the start", 0, 0, 0)

	for _, c := range []*github.Client{hubotC, monaC} {
		_, err := c.Users.Follow(ctx, "octo")
		apptest.Must(t, "follow", err)
	}
	_, err := octoC.Users.Follow(ctx, "mona")
	apptest.Must(t, "follow back", err)
	check("two followers", 2, 1, 0)
	_, err = hubotC.Users.Unfollow(ctx, "octo")
	apptest.Must(t, "unfollow", err)
	check("one unfollowed", 1, 1, 0)

	for _, name := range []string{"one", "two", "three"} {
		_, _, err := octoC.Repositories.Create(ctx, "", &github.Repository{Name: github.Ptr(name)})
		apptest.Must(t, "create a repository", err)
	}
	_, _, err = octoC.Repositories.Create(ctx, "", &github.Repository{Name: github.Ptr("secret"), Private: github.Ptr(true)})
	apptest.Must(t, "create a private repository", err)
	check("four repositories", 1, 1, 3)
	_, _, err = octoC.Repositories.Edit(ctx, "octo", "one", &github.Repository{Private: github.Ptr(true)})
	apptest.Must(t, "make one private", err)
	check("one made private", 1, 1, 2)
	_, _, err = octoC.Repositories.Transfer(ctx, "octo", "two", github.TransferRequest{NewOwner: "acme"})
	if _, accepted := err.(*github.AcceptedError); err != nil && !accepted {
		t.Fatalf("transfer: %v", err)
	}
	check("one transferred", 1, 1, 1)
	_, err = octoC.Repositories.Delete(ctx, "octo", "three")
	apptest.Must(t, "delete a repository", err)
	check("one deleted", 1, 1, 0)

	// mona's follow goes with her account, and octo's follow of her.
	_, err = env.App.DB.ExecContext(ctx, `DELETE FROM repositories WHERE owner_id = $1`, mona.ID)
	apptest.Must(t, "delete mona's repositories", err)
	apptest.Must(t, "delete mona", env.App.DB.Tx(ctx, func(tx *store.Tx) error { return accounts.Delete(ctx, tx, mona.ID) }))
	check("mona deleted", 0, 0, 0)
}
