package app_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// TestRenamedRepositoryRedirects renames a repository through the API and
// follows its old name: 301 for reads and 307 for writes to the same path
// at the new name, go-github following them, git clone and push of the old
// URL, the network feed; a private repository's old name stays hidden from
// others; and a new repository that takes the old name ends the redirect.
func TestRenamedRepositoryRedirects(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octo := env.User("octo")
	token := env.Token(octo, "repo", "admin:repo_hook")
	client := env.Client(token)
	env.Repo(octo, "hello")
	work := apptest.WorkTree(t, map[string]string{"README.md": "hi\n"})
	apptest.Git(t, work, "push", "-q", env.GitURL("octo", "hello", "octo", token), "HEAD:refs/heads/main")

	renamed, _, err := client.Repositories.Edit(apptest.Ctx(), "octo", "hello", &github.Repository{Name: github.Ptr("world")})
	apptest.Must(t, "rename", err)

	noRedirects := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	call := func(method, path, body string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(method, env.URL+path, strings.NewReader(body))
		apptest.Must(t, "request", err)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := noRedirects.Do(req)
		apptest.Must(t, method+" "+path, err)
		defer resp.Body.Close()
		if loc := resp.Header.Get("Location"); loc != "" {
			var body struct{ Message, URL string }
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.URL != loc {
				t.Errorf("%s %s: body %+v (%v), want url %q", method, path, body, err, loc)
			}
		}
		return resp
	}
	for _, c := range []struct {
		method, path, body string
		status             int
		location           string
	}{
		{"GET", "/repos/octo/hello", "", 301, "/repos/octo/world"},
		{"GET", "/repos/OCTO/Hello/hooks?per_page=5", "", 301, "/repos/octo/world/hooks?per_page=5"},
		{"GET", "/networks/octo/hello/events", "", 301, "/networks/octo/world/events"},
		{"PATCH", "/repos/octo/hello", `{"description":"moved"}`, 307, "/repos/octo/world"},
		{"GET", "/repos/octo/nothing", "", 404, ""},
	} {
		resp := call(c.method, c.path, c.body)
		want := ""
		if c.location != "" {
			want = env.URL + c.location
		}
		if resp.StatusCode != c.status || resp.Header.Get("Location") != want {
			t.Errorf("%s %s: %d Location %q, want %d %q", c.method, c.path, resp.StatusCode, resp.Header.Get("Location"), c.status, want)
		}
	}
	// go-github follows the redirects, also the 307 of a PATCH with its body.
	got, _, err := client.Repositories.Get(apptest.Ctx(), "octo", "hello")
	apptest.Must(t, "get by the old name", err)
	if got.GetID() != renamed.GetID() || got.GetName() != "world" {
		t.Fatalf("old name reached %d %s", got.GetID(), got.GetFullName())
	}
	edited, _, err := client.Repositories.Edit(apptest.Ctx(), "octo", "hello", &github.Repository{Description: github.Ptr("moved")})
	apptest.Must(t, "edit by the old name", err)
	if edited.GetName() != "world" || edited.GetDescription() != "moved" {
		t.Fatalf("edit by the old name: %s %q", edited.GetFullName(), edited.GetDescription())
	}

	// git keeps working at the old URL.
	apptest.Commit(t, work, "second", map[string]string{"b.txt": "b\n"})
	apptest.Git(t, work, "push", "-q", env.GitURL("octo", "hello", "octo", token), "HEAD:refs/heads/main")
	clone := t.TempDir()
	apptest.Git(t, clone, "clone", "-q", env.GitURL("octo", "hello", "octo", token), ".")
	if n := strings.TrimSpace(apptest.Git(t, clone, "rev-list", "--count", "HEAD")); n != "2" {
		t.Fatalf("clone of the old URL has %s commits", n)
	}

	// A private repository's old name reveals nothing to others.
	secret := env.Repo(octo, "secret", apptest.RepoOpts{Private: true})
	_, _, err = client.Repositories.Edit(apptest.Ctx(), "octo", secret.Name, &github.Repository{Name: github.Ptr("hidden")})
	apptest.Must(t, "rename private", err)
	strangerToken := env.Token(env.User("stranger"), "repo")
	for _, tok := range []string{"", strangerToken} {
		resp, body := env.Do("GET", "/repos/octo/secret", tok, nil)
		if resp.StatusCode != 404 || resp.Header.Get("Location") != "" {
			t.Errorf("private old name, token %q: %d %s", tok, resp.StatusCode, body)
		}
	}

	// A new repository that takes the old name ends the redirect.
	fresh := env.Repo(octo, "hello")
	if resp := call("GET", "/repos/octo/hello", ""); resp.StatusCode != 200 {
		t.Fatalf("the new hello: %d", resp.StatusCode)
	}
	got, _, err = client.Repositories.Get(apptest.Ctx(), "octo", "hello")
	apptest.Must(t, "get the new hello", err)
	if got.GetID() != fresh.ID {
		t.Fatalf("hello is %d, want the new repository %d", got.GetID(), fresh.ID)
	}
}
