package repository_test

import (
	"bytes"
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
// on a repository of 10,000 commits, on SQLite (the target: under 2 ms
// each). "file" and "dir-1000" repeat one request, as a client
// polling the path sees it (the directory's listing is then served as
// rendered the first time); "dir-1000-cold" reads the directory at
// another commit each time (?ref=<sha>), so every listing is rendered and
// hashed anew (the repository stays open, its object caches warm). The
// recorder's body buffer is kept between requests, as a connection's
// buffer is: growing a new one to 740 KB each time is the benchmark's
// cost, not the server's.
func BenchmarkContents(b *testing.B) {
	env := apptest.Start(b)
	octo := env.User("octo")
	env.Repo(octo, "big")
	token := env.Token(octo, "repo")
	work := b.TempDir()
	apptest.Git(b, work, "init", "-q")
	fastImportHistory(b, work, 10000, 1000)
	apptest.Git(b, work, "push", "-q", env.GitURL("octo", "big", "octo", token), "refs/heads/main:refs/heads/main")
	revs := strings.Fields(apptest.Git(b, work, "rev-list", "refs/heads/main"))
	h := env.Main.Handler()
	var body bytes.Buffer
	get := func(b *testing.B, path string) {
		req := httptest.NewRequest("GET", path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		body.Reset()
		rec := httptest.NewRecorder()
		rec.Body = &body
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("%s: %d %s", path, rec.Code, rec.Body)
		}
	}
	for _, c := range []struct{ name, path string }{
		{"file", "/repos/octo/big/contents/hot.txt"},
		{"dir-1000", "/repos/octo/big/contents/big-dir"},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				get(b, c.path)
			}
		})
	}
	b.Run("dir-1000-cold", func(b *testing.B) {
		i := 0
		for b.Loop() {
			get(b, "/repos/octo/big/contents/big-dir?ref="+revs[i%len(revs)])
			i++
		}
	})
}

// BenchmarkDirAfterPush measures GET .../contents of the
// 1,000-entry directory of BenchmarkContents as the first read after a
// push that changed one of its files: a client polling the directory
// sees this once per push. The push (not timed) leaves a new tree, and
// the repository is opened again for the read.
func BenchmarkDirAfterPush(b *testing.B) {
	env := apptest.Start(b)
	octo := env.User("octo")
	env.Repo(octo, "big")
	token := env.Token(octo, "repo")
	work := b.TempDir()
	apptest.Git(b, work, "init", "-q")
	fastImportHistory(b, work, 10000, 1000)
	remote := env.GitURL("octo", "big", "octo", token)
	apptest.Git(b, work, "push", "-q", remote, "refs/heads/main:refs/heads/main")
	h := env.Main.Handler()
	var body bytes.Buffer
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		content := fmt.Sprintf("push %d\n", i)
		cmd := exec.Command("git", "fast-import", "--quiet")
		cmd.Dir = work
		cmd.Stdin = strings.NewReader(fmt.Sprintf("commit refs/heads/main\ncommitter Bench <bench@example.com> %d +0000\ndata 4\npush\nfrom refs/heads/main^0\nM 100644 inline big-dir/file-%04d.txt\ndata %d\n%s\n",
			1800000000+i, i%1000, len(content), content))
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git fast-import: %v\n%s", err, out)
		}
		apptest.Git(b, work, "push", "-q", remote, "refs/heads/main:refs/heads/main")
		req := httptest.NewRequest("GET", "/repos/octo/big/contents/big-dir", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		body.Reset()
		rec := httptest.NewRecorder()
		rec.Body = &body
		b.StartTimer()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK || !bytes.Contains(body.Bytes(), fmt.Appendf(nil, `"size":%d,"name":"file-%04d.txt"`, len(content), i%1000)) {
			b.Fatalf("after push %d: %d %.300s", i, rec.Code, body.Bytes())
		}
	}
}

// BenchmarkPutContents measures the server's own time of one
// PUT .../contents creating a file (the objects written in process by
// gitwrite, the branch moved as a git push moves it, with its events), on
// SQLite (the target: under 20 ms).
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
