package e2e_test

import (
	"context"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"testing"

	"forgeapi/internal/accounts"
	"forgeapi/internal/app"
	"forgeapi/internal/apptest"
	"forgeapi/internal/events"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// TestReceivedFeedMatchesAScan checks every page of a received feed of
// many sources against a reading of the whole table, for the user with
// private events and for anyone, as a union of per-source scans and (with
// a bound of 2 sources) as one OR-ed condition. On PostgreSQL both read
// the sources as arrays (see lateralIDs).
func TestReceivedFeedMatchesAScan(t *testing.T) {
	t.Parallel()
	for _, maxSources := range []int{0, 2} {
		t.Run("max sources "+strconv.Itoa(maxSources), func(t *testing.T) {
			t.Parallel()
			env := apptest.Start(t, func(c *app.Config) { c.Feeds.MaxUnionSources = maxSources })
			alice, bob := env.User("alice"), env.User("bob")
			others := []string{"carol", "dave", "erin", "frank", "grace", "heidi"}
			acme := env.Org("acme", bob, alice)
			var all []*repos.Repository
			for i, o := range others {
				u := env.User(o)
				all = append(all, env.Repo(u, "pub"), env.Repo(u, "priv", apptest.RepoOpts{Private: i%2 == 0}))
			}
			all = append(all, env.Repo(alice, "own", apptest.RepoOpts{Private: true}), env.Repo(acme, "org", apptest.RepoOpts{Private: true}),
				env.Repo(acme, "unstarred", apptest.RepoOpts{Private: true}), env.Repo(bob, "hidden", apptest.RepoOpts{Private: true}))
			token := env.Token(alice, "repo", "user")
			// alice stars the public repositories of the first four others
			// and her own and acme's private ones, follows bob and three
			// others.
			for _, o := range others[:4] {
				do(t, env, "PUT", "/user/starred/"+o+"/pub", token, ``)
			}
			do(t, env, "PUT", "/user/starred/alice/own", token, ``)
			do(t, env, "PUT", "/user/starred/acme/org", token, ``)
			for _, o := range []string{"bob", "carol", "erin", "heidi"} {
				do(t, env, "PUT", "/user/following/"+o, token, ``)
			}

			ctx := context.Background()
			rng := rand.New(rand.NewPCG(7, uint64(maxSources)))
			actors := []string{"alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi"}
			accountsByLogin := map[string]*accounts.Account{}
			for _, login := range actors {
				accountsByLogin[login] = mustAccount(t, env, login)
			}
			err := env.App.DB.Tx(ctx, func(tx *store.Tx) error {
				for range 900 {
					actor := accountsByLogin[actors[rng.IntN(len(actors))]]
					repo := all[rng.IntN(len(all))]
					if err := env.App.Events.Emit(ctx, tx, &events.Event{FeedType: "WatchEvent", FeedPayload: map[string]string{"action": "started"},
						Actor: actor, Repo: repo, Public: !repo.Private}); err != nil {
						return err
					}
				}
				return nil
			})
			apptest.Must(t, "seed events", err)

			// What alice receives: events of her starred repositories, and
			// of the accounts she follows that she may see (her own
			// repositories and acme's, starred or not, are the private
			// ones she reads).
			starred, followed := map[string]bool{}, map[string]bool{"bob": true, "carol": true, "erin": true, "heidi": true}
			for _, o := range others[:4] {
				starred[o+"/pub"] = true
			}
			starred["alice/own"], starred["acme/org"] = true, true
			readable := map[string]bool{"alice/own": true, "acme/org": true, "acme/unstarred": true}
			rows, err := env.Q().QueryContext(ctx, `SELECT id, actor_login, repo_name, public FROM events ORDER BY id DESC`)
			apptest.Must(t, "read events", err)
			var withPrivate, public []string
			for rows.Next() {
				var id int64
				var actor, repo string
				var pub bool
				apptest.Must(t, "scan", rows.Scan(&id, &actor, &repo, &pub))
				if !starred[repo] && !followed[actor] {
					continue
				}
				if pub || readable[repo] {
					withPrivate = append(withPrivate, strconv.FormatInt(id, 10))
				}
				if pub {
					public = append(public, strconv.FormatInt(id, 10))
				}
			}
			rows.Close()
			for _, c := range []struct {
				path, token string
				want        []string
			}{{"/users/alice/received_events", token, withPrivate}, {"/users/alice/received_events/public", "", public}} {
				want := c.want[:min(len(c.want), 300)]
				if len(want) < 300 {
					t.Fatalf("%s: only %d events to expect; seed more", c.path, len(want))
				}
				var got []string
				for page := 1; page <= 10; page++ {
					_, events := getFeed(t, env, c.path+"?page="+strconv.Itoa(page), c.token, http.StatusOK)
					for _, e := range events {
						got = append(got, e.ID)
					}
				}
				if !slices.Equal(got, want) {
					t.Errorf("%s:\n got  %v\n want %v", c.path, got, want)
				}
			}
		})
	}
}
