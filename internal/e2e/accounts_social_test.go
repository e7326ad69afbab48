package e2e_test

import (
	"net/http"
	"net/url"
	"testing"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apptest"
)

// TestSocialAccounts adds, lists and deletes a user's social accounts
// through go-github: providers told by address, others' profiles read
// anonymously, at most four, bad addresses and unknown ones refused.
func TestSocialAccounts(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo")
	c := env.Client(env.Token(octo, "user"))
	added, resp, err := c.Users.AddSocialAccounts(ctx, []string{"https://x.com/octo", "https://mastodon.social/@octo", "https://octo.example.com/"})
	apptest.Must(t, "add", err)
	if resp.StatusCode != http.StatusCreated || len(added) != 3 {
		t.Fatalf("added %+v (%d)", added, resp.StatusCode)
	}
	list, _, err := env.Client("").Users.ListUserSocialAccounts(ctx, "octo", nil)
	apptest.Must(t, "list anonymously", err)
	want := map[string]string{"https://x.com/octo": "twitter", "https://mastodon.social/@octo": "mastodon", "https://octo.example.com/": "generic"}
	if len(list) != 3 {
		t.Fatalf("list %+v", list)
	}
	for _, a := range list {
		if want[a.GetURL()] != a.GetProvider() {
			t.Errorf("%s: provider %s", a.GetURL(), a.GetProvider())
		}
	}
	if _, resp, err := c.Users.AddSocialAccounts(ctx, []string{"https://www.linkedin.com/in/octo", "https://youtube.com/@octo"}); apptest.ResponseStatus(resp) != http.StatusUnprocessableEntity {
		t.Fatalf("a fifth account: %v", err)
	}
	if _, resp, err := c.Users.AddSocialAccounts(ctx, []string{"javascript:alert(1)"}); apptest.ResponseStatus(resp) != http.StatusUnprocessableEntity {
		t.Fatalf("a bad address: %v", err)
	}
	if resp, err := c.Users.DeleteSocialAccounts(ctx, []string{"https://nowhere.example.com/"}); apptest.ResponseStatus(resp) != http.StatusUnprocessableEntity {
		t.Fatalf("deleting an unknown account: %v", err)
	}
	_, err = c.Users.DeleteSocialAccounts(ctx, []string{"https://x.com/octo"})
	apptest.Must(t, "delete", err)
	mine, _, err := c.Users.ListSocialAccounts(ctx, nil)
	apptest.Must(t, "list mine", err)
	if len(mine) != 2 {
		t.Fatalf("mine %+v", mine)
	}
}

// TestSocialProvider pins the providers told by address.
func TestSocialProvider(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]string{"https://www.linkedin.com/in/o": "linkedin", "https://twitter.com/o": "twitter",
		"https://hachyderm.io/@o": "mastodon", "https://www.npmjs.com/~o": "npm", "https://blog.example.org/": "generic",
		"https://old.reddit.com/u/o": "reddit"} {
		u, _ := url.Parse(raw)
		if got := accounts.SocialProvider(u); got != want {
			t.Errorf("%s: %s, want %s", raw, got, want)
		}
	}
}
