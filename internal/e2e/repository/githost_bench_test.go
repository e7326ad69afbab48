package repository_test

import (
	"fmt"
	"net/http/cgi"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"testing"

	"forgeapi/internal/apptest"
)

// BenchmarkPush pushes the same 50-commit history to a fresh repository
// per iteration, through forgeapi (authentication, hooks, events) and
// through a plain `git http-backend` CGI, so the two ns/op compare the
// server-side overhead of a push.
func BenchmarkPush(b *testing.B) {
	work := apptest.WorkTree(b, map[string]string{"README": "0"})
	for i := 1; i < 50; i++ {
		apptest.Commit(b, work, fmt.Sprintf("commit %d", i), map[string]string{fmt.Sprintf("dir%d/file.txt", i%7): fmt.Sprint(i)})
	}

	b.Run("plain-http-backend", func(b *testing.B) {
		root := b.TempDir()
		gitPath, err := exec.LookPath("git")
		if err != nil {
			b.Skip("git not found")
		}
		srv := httptest.NewServer(&cgi.Handler{Path: gitPath, Args: []string{"http-backend"},
			Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}})
		defer srv.Close()
		b.ResetTimer()
		for i := 0; b.Loop(); i++ {
			b.StopTimer()
			name := fmt.Sprintf("r%d.git", i)
			cmd := exec.Command("git", "init", "-q", "--bare", filepath.Join(root, name))
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("%v %s", err, out)
			}
			apptest.Git(b, filepath.Join(root, name), "config", "http.receivepack", "true")
			b.StartTimer()
			apptest.Git(b, work, "push", "-q", srv.URL+"/"+name, "main")
		}
	})

	b.Run("forgeapi", func(b *testing.B) {
		env := apptest.Start(b)
		owner := env.User("octocat")
		token := env.Token(owner, "repo")
		b.ResetTimer()
		for i := 0; b.Loop(); i++ {
			b.StopTimer()
			name := fmt.Sprintf("r%d", i)
			env.Repo(owner, name)
			b.StartTimer()
			apptest.Git(b, work, "push", "-q", env.GitURL("octocat", name, "octocat", token), "main")
		}
	})
}
