package e2e_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// TestSearchUsers searches users and organizations through go-github:
// words in the login and the name, type:, in:, followers: and repos:
// ranges, sort by followers; bots are left out; an unreadable value or
// sort is a 422.
func TestSearchUsers(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octocat")
	env.User("octavia")
	env.User("bob")
	env.Org("octo-org", octo)
	env.Repo(octo, "hello")
	token := env.Token(octo, "user")
	c := env.Client(token)
	_, err := env.Client(env.Token(env.User("fan"), "user")).Users.Follow(ctx, "octocat")
	apptest.Must(t, "follow", err)

	logins := func(t *testing.T, q string, opts *github.SearchOptions) []string {
		t.Helper()
		res, _, err := c.Search.Users(ctx, q, opts)
		apptest.Must(t, "search "+q, err)
		var out []string
		for _, u := range res.Users {
			out = append(out, u.GetLogin())
		}
		if res.GetTotal() != len(out) {
			t.Fatalf("%s: total %d for %d", q, res.GetTotal(), len(out))
		}
		return out
	}
	for _, tc := range []struct{ q, want string }{
		{"oct", "octavia|octo-org|octocat"},
		{"oct type:user", "octavia|octocat"},
		{"octo type:org", "octo-org"},
		{"oct -type:org", "octavia|octocat"},
		{"followers:>=1", "octocat"},
		{"repos:1 octo", "octocat"},
		{"cat in:login", "octocat"},
		{"nobody", ""},
	} {
		if got := strings.Join(logins(t, tc.q, nil), "|"); got != tc.want {
			t.Errorf("%q: %s, want %s", tc.q, got, tc.want)
		}
	}
	if got := logins(t, "octo type:user", &github.SearchOptions{Sort: "followers"}); got[0] != "octocat" {
		t.Errorf("by followers: %v", got)
	}
	for _, q := range []string{"", "type:robot", "followers:>many", "octo&sort=stars"} {
		resp, body := env.Do("GET", "/search/users?q="+q, token, nil)
		if resp.StatusCode != http.StatusUnprocessableEntity {
			t.Errorf("q=%s: %d %s", q, resp.StatusCode, body)
		}
	}
}
