package repos_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// TestListPublicRepositories pages GET /repositories as go-github and a
// raw client do: the public repositories of users and organizations in
// the order of their ids (private ones never, not even to their owner),
// from the id after since, per_page of them with a Link to the next
// page; a visibility outside all and public is a 422.
func TestListPublicRepositories(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo")
	acme := env.Org("acme", octo)
	a := env.Repo(octo, "a")
	env.Repo(octo, "b", apptest.RepoOpts{Private: true})
	c := env.Repo(octo, "c")
	d := env.Repo(acme, "d")
	token := env.Token(octo, "repo")
	names := func(list []*github.Repository) string {
		var out []string
		for _, r := range list {
			out = append(out, r.GetFullName())
		}
		return strings.Join(out, " ")
	}

	for _, client := range []*github.Client{env.Client(""), env.Client(token)} {
		list, _, err := client.Repositories.ListAll(ctx, nil)
		apptest.Must(t, "list all", err)
		if got := names(list); got != "octo/a octo/c acme/d" {
			t.Fatalf("public repositories %q", got)
		}
	}
	list, _, err := env.Client(token).Repositories.ListAll(ctx, &github.RepositoryListAllOptions{Since: a.ID})
	apptest.Must(t, "since", err)
	if got := names(list); got != "octo/c acme/d" {
		t.Fatalf("since %d: %q", a.ID, got)
	}

	resp, b := env.Do("GET", "/repositories?per_page=1&since="+fmt.Sprint(a.ID), "", nil)
	var page []github.Repository
	apptest.Must(t, "decode", json.Unmarshal(b, &page))
	if resp.StatusCode != http.StatusOK || len(page) != 1 || page[0].GetID() != c.ID {
		t.Fatalf("page: %d %s", resp.StatusCode, b)
	}
	if link := resp.Header.Get("Link"); !strings.Contains(link, fmt.Sprintf("since=%d", c.ID)) || !strings.Contains(link, `rel="next"`) {
		t.Fatalf("Link %q, want the next page since %d", link, c.ID)
	}
	resp, b = env.Do("GET", "/repositories?since="+fmt.Sprint(d.ID), "", nil)
	if resp.StatusCode != http.StatusOK || strings.TrimSpace(string(b)) != "[]" || resp.Header.Get("Link") != "" {
		t.Fatalf("past the last: %d %s (Link %q)", resp.StatusCode, b, resp.Header.Get("Link"))
	}
	if resp, b := env.Do("GET", "/repositories?visibility=secret", "", nil); resp.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("bad visibility: %d %s", resp.StatusCode, b)
	}
	if resp, b := env.Do("GET", "/repositories?since=x", "", nil); resp.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("bad since: %d %s", resp.StatusCode, b)
	}
}
