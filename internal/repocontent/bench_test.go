package repocontent_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"

	"forgeapi/internal/apptest"
)

// fastImportHistory writes a repository of commits commits into work with
// git fast-import: each commit changes hot.txt, and the first adds a
// directory of dirEntries files.
func fastImportHistory(b *testing.B, work string, commits, dirEntries int) {
	b.Helper()
	var stream strings.Builder
	for i := 1; i <= commits; i++ {
		fmt.Fprintf(&stream, "commit refs/heads/main\ncommitter Bench <bench@example.com> %d +0000\ndata 9\ncommit %02d\n", 1700000000+i, i%100)
		content := fmt.Sprintf("version %d\n", i)
		fmt.Fprintf(&stream, "M 100644 inline hot.txt\ndata %d\n%s\n", len(content), content)
		if i == 1 {
			for j := range dirEntries {
				fmt.Fprintf(&stream, "M 100644 inline big-dir/file-%04d.txt\ndata 2\n%02d\n", j, j%100)
			}
		}
	}
	cmd := exec.Command("git", "fast-import", "--quiet")
	cmd.Dir = work
	cmd.Stdin = strings.NewReader(stream.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("git fast-import: %v\n%s", err, out)
	}
}

// BenchmarkContents measures the server's own time (in process, no
// network) for GET .../contents of a file and of a 1,000-entry directory
// on a repository of 10,000 commits, on SQLite (the target: under
// 2 ms each).
func BenchmarkContents(b *testing.B) {
	env := apptest.Start(b)
	octo := env.User("octo")
	env.Repo(octo, "big")
	token := env.Token(octo, "repo")
	work := b.TempDir()
	apptest.Git(b, work, "init", "-q")
	fastImportHistory(b, work, 10000, 1000)
	apptest.Git(b, work, "push", "-q", env.GitURL("octo", "big", "octo", token), "refs/heads/main:refs/heads/main")
	h := env.Main.Handler()
	for _, c := range []struct{ name, path string }{
		{"file", "/repos/octo/big/contents/hot.txt"},
		{"dir-1000", "/repos/octo/big/contents/big-dir"},
	} {
		b.Run(c.name, func(b *testing.B) {
			req := httptest.NewRequest("GET", c.path, nil)
			req.Header.Set("Authorization", "Bearer "+token)
			for b.Loop() {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("%s: %d %s", c.path, rec.Code, rec.Body)
				}
			}
		})
	}
}

// BenchmarkPutContents measures the server's own time of one
// PUT .../contents creating a file (a commit written with git and pushed
// as a git push is, with its events), on SQLite (the target:
// under 20 ms).
func BenchmarkPutContents(b *testing.B) {
	env := apptest.Start(b)
	octo := env.User("octo")
	env.Repo(octo, "big")
	token := env.Token(octo, "repo")
	work := b.TempDir()
	apptest.Git(b, work, "init", "-q")
	fastImportHistory(b, work, 1000, 100)
	apptest.Git(b, work, "push", "-q", env.GitURL("octo", "big", "octo", token), "refs/heads/main:refs/heads/main")
	h := env.Main.Handler()
	i := 0
	for b.Loop() {
		i++
		req := httptest.NewRequest("PUT", fmt.Sprintf("/repos/octo/big/contents/new/file-%d.txt", i),
			strings.NewReader(`{"message":"add a file","content":"aGVsbG8K"}`))
		req.Header.Set("Authorization", "Bearer "+token)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusCreated {
			b.Fatalf("PUT: %d %s", rec.Code, rec.Body)
		}
	}
}
