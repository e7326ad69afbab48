package e2e_test

import (
	"slices"
	"testing"

	"forgeapi/internal/apptest"
	"forgeapi/internal/events"
	"forgeapi/internal/repos"
)

// The recipients of an event follow every change of the installations
// at once, though the server keeps each account's installations cached:
// an app installed, narrowed to other repositories, suspended, resumed,
// a second app installed, uninstalled. Each step is asked about after
// the cache was filled by the step before.
func TestRecipientsFollowInstallationChanges(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octo := env.User("octo")
	one := env.Repo(octo, "one", apptest.RepoOpts{})
	two := env.Repo(octo, "two", apptest.RepoOpts{})
	a := env.RegisterApp(octo, "Watcher", "metadata:read", apptest.AppOpts{Events: []string{"repository"}})
	b := env.RegisterApp(octo, "Other", "metadata:read", apptest.AppOpts{Events: []string{"repository"}})
	deaf := env.RegisterApp(octo, "Deaf", "metadata:read", apptest.AppOpts{Events: []string{"star"}})
	recipients := func(repo *repos.Repository) []int64 {
		t.Helper()
		got, err := env.Apps().Recipients(env.Context(), env.App.DB, &events.Event{HookEvent: "repository", Repo: repo})
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, r := range got {
			ids = append(ids, r.InstallationID)
		}
		return ids
	}
	expect := func(step string, repo *repos.Repository, want ...int64) {
		t.Helper()
		if got := recipients(repo); !slices.Equal(got, want) {
			t.Errorf("%s: recipients of %s's event %v, want %v", step, repo.Name, got, want)
		}
	}

	expect("nothing installed", one)
	env.Install(deaf, octo, nil)
	expect("an app not subscribed installed", one)
	inst := env.Install(a, octo, nil)
	expect("installed on all", one, inst.ID)
	expect("installed on all", two, inst.ID)
	env.Install(a, octo, two)
	expect("narrowed to two", one)
	expect("narrowed to two", two, inst.ID)
	if err := env.Apps().Suspend(env.Context(), &a.App, inst, true, octo); err != nil {
		t.Fatal(err)
	}
	expect("suspended", two)
	if err := env.Apps().Suspend(env.Context(), &a.App, inst, false, octo); err != nil {
		t.Fatal(err)
	}
	expect("resumed", two, inst.ID)
	other := env.Install(b, octo, nil)
	expect("a second app installed", two, inst.ID, other.ID)
	if err := env.Apps().Uninstall(env.Context(), &a.App, inst, octo); err != nil {
		t.Fatal(err)
	}
	expect("the first uninstalled", two, other.ID)
}
