package githttp_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"forgeapi/internal/git/githttp"
)

// BenchmarkPush compares a push of 100 commits to a fresh repository through
// Server with both callbacks installed (PreReceive lists the changed paths
// with the Inspector) against the same push to a plain `git http-backend`
// CGI on a repository without hooks. The hook overhead is the difference.
func BenchmarkPush(b *testing.B) {
	src := newClient(b, "src")
	src.git("init", "-q", src.dir)
	src.fastImport("main", 0, 100)

	b.Run("plain-http-backend", func(b *testing.B) {
		gitPath, err := exec.LookPath("git")
		if err != nil {
			b.Fatal(err)
		}
		root := b.TempDir()
		var repoDir string
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h := &cgi.Handler{
				Path: gitPath, Args: []string{"http-backend"}, Root: "/repo.git",
				Env:        []string{"GIT_PROJECT_ROOT=" + repoDir, "GIT_HTTP_EXPORT_ALL=1", "GIT_PROTOCOL=" + r.Header.Get("Git-Protocol")},
				InheritEnv: []string{"PATH"},
			}
			h.ServeHTTP(w, r)
		}))
		defer srv.Close()
		benchPushes(b, src, srv.URL+"/repo.git", func(i int) {
			repoDir = filepath.Join(root, fmt.Sprintf("r%d.git", i))
			out, err := exec.Command("git", "init", "-q", "--bare", repoDir).CombinedOutput()
			if err == nil {
				out, err = exec.Command("git", "--git-dir", repoDir, "config", "http.receivepack", "true").CombinedOutput()
			}
			if err != nil {
				b.Fatalf("%v: %s", err, out)
			}
		})
	})

	b.Run("forgeapi-hooks", func(b *testing.B) {
		server, err := githttp.NewServer(githttp.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			b.Fatal(err)
		}
		root := b.TempDir()
		var repoDir string
		pre := func(ctx context.Context, updates []githttp.RefUpdate, inspect githttp.Inspector) error {
			_, err := inspect.ChangedPaths(ctx, updates[0])
			return err
		}
		post := func(context.Context, []githttp.RefUpdate) error { return nil }
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			server.ServeGit(w, r, githttp.Request{
				RepoDir: repoDir, SubPath: strings.TrimPrefix(r.URL.Path, "/repo.git"),
				RemoteUser: "octo", PreReceive: pre, PostReceive: post,
			})
		}))
		defer srv.Close()
		benchPushes(b, src, srv.URL+"/repo.git", func(i int) {
			repoDir = filepath.Join(root, fmt.Sprintf("r%d.git", i))
			if err := githttp.Init(repoDir, "main"); err != nil {
				b.Fatal(err)
			}
		})
	})
}

// benchPushes times b.N pushes of src's main to url, calling fresh (untimed)
// before each push to make a new empty target repository.
func benchPushes(b *testing.B, src *client, url string, fresh func(i int)) {
	b.Helper()
	b.StopTimer()
	for i := range b.N {
		fresh(i)
		b.StartTimer()
		if _, stderr, err := src.run("push", "-q", url, "main"); err != nil {
			b.Fatalf("push: %v\n%s", err, stderr)
		}
		b.StopTimer()
	}
}
