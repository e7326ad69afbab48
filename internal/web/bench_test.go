package web_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// BenchmarkPages measures the server's own time (in process, no network)
// for a repository's page whose root holds 1,000 files and for the files
// page of a pull request whose diff has 2,000 changed lines (the target:
// under 50 ms each), asked anonymously as a browser.
func BenchmarkPages(b *testing.B) {
	env := apptest.Start(b)
	octo := env.User("octo")
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

	h := env.Main.Handler()
	var body bytes.Buffer
	for _, c := range []struct{ name, path, want string }{
		{"repository-1000-files", "/octo/big", "file-0999.go"},
		{"pull-files-2000-lines", fmt.Sprintf("/octo/big/pull/%d/files", pr.GetNumber()), "changed line 999"},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				req := httptest.NewRequest("GET", c.path, nil)
				req.Header.Set("Accept", "text/html")
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
