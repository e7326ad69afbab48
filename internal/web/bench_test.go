package web_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// BenchmarkPages measures the server's own time (in process, no network)
// for a repository's page whose root holds 1,000 files and for the files
// page of a pull request whose diff has 2,000 changed lines (the target:
// under 50 ms each), asked anonymously as a browser, and the files page
// signed in (each line then links to its comment form).
func BenchmarkPages(b *testing.B) {
	env := apptest.Start(b)
	octo := env.User("octo", apptest.UserOpts{Password: password})
	env.Repo(octo, "big")
	token := env.Token(octo, "repo")
	files := map[string]string{}
	for i := range 1000 {
		files[fmt.Sprintf("file-%04d.go", i)] = "package big\n"
	}
	var old, changed strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&old, "line %d\n", i)
		fmt.Fprintf(&changed, "changed line %d\n", i)
	}
	files["README.md"] = "# Big\n\nA **big** repository.\n"
	files["long.txt"] = old.String()
	work := apptest.WorkTree(b, files)
	remote := env.GitURL("octo", "big", "octo", token)
	apptest.Git(b, work, "push", "-q", remote, "HEAD:refs/heads/main")
	apptest.Git(b, work, "checkout", "-q", "-b", "change")
	apptest.Commit(b, work, "Change every line", map[string]string{"long.txt": changed.String()})
	apptest.Git(b, work, "push", "-q", remote, "HEAD:refs/heads/change")
	pr, _, err := env.Client(token).PullRequests.Create(context.Background(), "octo", "big",
		github.CreatePullRequest{Title: github.Ptr("Change"), Head: "change", Base: "main"})
	apptest.Must(b, "open the pull request", err)

	c := browser(b, env, false)
	_, _, page := get(b, c, env.URL+"/login")
	if _, err := c.PostForm(env.URL+"/session", url.Values{"authenticity_token": {apptest.CSRFToken(b, page)}, "login": {"octo"}, "password": {password}}); err != nil {
		b.Fatal(err)
	}
	u, _ := url.Parse(env.URL)
	session := c.Jar.Cookies(u)

	h := env.Main.Handler()
	var body bytes.Buffer
	filesPage := fmt.Sprintf("/octo/big/pull/%d/files", pr.GetNumber())
	for _, c := range []struct {
		name, path, want string
		signedIn         bool
	}{
		{"repository-1000-files", "/octo/big", "file-0999.go", false},
		{"pull-files-2000-lines", filesPage, "changed line 999", false},
		{"pull-files-2000-lines-signed-in", filesPage, "files?line=diff-1R1000#diff-1R1000", true},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				req := httptest.NewRequest("GET", c.path, nil)
				req.Header.Set("Accept", "text/html")
				if c.signedIn {
					for _, k := range session {
						req.AddCookie(k)
					}
				}
				body.Reset()
				rec := httptest.NewRecorder()
				rec.Body = &body
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK || !strings.Contains(body.String(), c.want) {
					b.Fatalf("%s: %d\n%.500s", c.path, rec.Code, body.String())
				}
			}
		})
	}
}
