package e2e_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// TestListAllUsers pages GET /users by id with since, as go-github's
// Users.ListAll follows it, users and organizations alike; GET
// /user/{account_id} answers an account by id.
func TestListAllUsers(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octo := env.User("octo")
	env.User("mona")
	acme := env.Org("acme", octo)
	c := env.Client(env.Token(octo, "repo"))
	ctx := apptest.Ctx()

	var logins []string
	opts := &github.UserListOptions{PerPage: 2}
	for pages := 0; pages < 10; pages++ {
		list, resp, err := c.Users.ListAll(ctx, opts)
		apptest.Must(t, "list users", err)
		for _, u := range list {
			logins = append(logins, u.GetLogin())
		}
		if resp.Header.Get("Link") == "" {
			break
		}
		opts.Since = list[len(list)-1].GetID()
	}
	if got := strings.Join(logins, " "); !strings.Contains(got, "octo mona acme") {
		t.Errorf("GET /users in id order: %s", got)
	}
	resp, body := env.Do("GET", "/users?since="+strconv.FormatInt(acme.ID, 10), "", nil)
	if resp.StatusCode != http.StatusOK || strings.TrimSpace(string(body)) != "[]" || resp.Header.Get("Link") != "" {
		t.Errorf("after the last id: %d %s %q", resp.StatusCode, body, resp.Header.Get("Link"))
	}
	if resp, _ := env.Do("GET", "/users?since=x", "", nil); resp.StatusCode != http.StatusUnprocessableEntity {
		t.Errorf("since=x: %d", resp.StatusCode)
	}

	u, _, err := c.Users.GetByID(ctx, octo.ID)
	apptest.Must(t, "get by id", err)
	if u.GetLogin() != "octo" || u.GetType() != "User" {
		t.Errorf("GET /user/%d: %+v", octo.ID, u)
	}
	for _, path := range []string{"/user/999999", "/user/nope"} {
		if resp, body := env.Do("GET", path, "", nil); resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s: %d %s", path, resp.StatusCode, body)
		}
	}
}
