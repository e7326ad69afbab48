package e2e_test

import (
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"forgeapi/internal/apptest"
)

// BenchmarkTarball100MiB downloads the tarball of a repository of about
// 100 MiB (half random bytes, half text) through the server: the link,
// then the download, with the cache emptied first (cold: git archive and
// compression), and again from the cache (cached). It reports each as a
// ratio of a bare reference timed in the same iterations:
// cold-x-git-archive-gzip against `git archive | gzip` of the same
// commit to /dev/null, cached-x-file-download against a plain net/http
// file server sending the same archive file.
func BenchmarkTarball100MiB(b *testing.B) {
	env := apptest.Start(b)
	octo := env.User("octo")
	repo := env.Repo(octo, "big")
	gitDir := env.App.Repos.GitDir(repo.ID)
	sha := bigRepository(b, gitDir)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	cacheDir := filepath.Join(env.DataDir, "archives")
	var cold, cached, ref, fileRef time.Duration
	var size int64
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		cmd := exec.Command("sh", "-c", "git archive --format=tar --prefix=octo-big-"+sha[:7]+"/ "+sha+" | gzip -c >/dev/null")
		cmd.Dir, cmd.Env = gitDir, apptest.GitEnv(b.TempDir())
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git archive | gzip: %v %s", err, out)
		}
		ref += time.Since(start)

		if err := os.RemoveAll(cacheDir); err != nil {
			b.Fatal(err)
		}
		start = time.Now()
		size = fetch(b, client, env.URL+"/repos/octo/big/tarball/main")
		cold += time.Since(start)

		start = time.Now()
		fetch(b, client, env.URL+"/repos/octo/big/tarball/main")
		cached += time.Since(start)

		files, _ := filepath.Glob(filepath.Join(cacheDir, "*", "*.tar.gz"))
		if len(files) != 1 {
			b.Fatalf("cached archives %v", files)
		}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.ServeFile(w, r, files[0]) }))
		start = time.Now()
		fetchFile(b, client, srv.URL)
		fileRef += time.Since(start)
		srv.Close()
	}
	b.ReportMetric(float64(cold)/float64(ref), "cold-x-git-archive-gzip")
	b.ReportMetric(float64(cached)/float64(fileRef), "cached-x-file-download")
	b.ReportMetric(float64(size)/(1<<20), "MiB-tarball")
}

// fetch follows the archive link and reads the download; it returns the
// archive's size.
func fetch(b *testing.B, client *http.Client, link string) int64 {
	resp, err := client.Get(link)
	if err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		b.Fatalf("link: %d", resp.StatusCode)
	}
	return fetchFile(b, client, resp.Header.Get("Location"))
}

func fetchFile(b *testing.B, client *http.Client, u string) int64 {
	resp, err := client.Get(u)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("download: %d %v", resp.StatusCode, err)
	}
	return n
}

// bigRepository commits about 100 MiB to the bare repository gitDir's
// main: 50 files of 1 MiB of random bytes and 50 of 1 MiB of text. It
// returns the commit.
func bigRepository(b *testing.B, gitDir string) string {
	work := apptest.WorkTree(b, nil)
	random := make([]byte, 1<<20)
	for i := range 50 {
		if _, err := rand.Read(random); err != nil {
			b.Fatal(err)
		}
		writeBig(b, filepath.Join(work, "bin", fmt.Sprintf("blob%02d.bin", i)), random)
		var text strings.Builder
		for j := 0; text.Len() < 1<<20; j++ {
			fmt.Fprintf(&text, "file %d line %d: the quick brown fox jumps over the lazy dog %x\n", i, j, random[j%len(random)])
		}
		writeBig(b, filepath.Join(work, "text", fmt.Sprintf("doc%02d.txt", i)), []byte(text.String()))
	}
	apptest.Git(b, work, "add", ".")
	sha := apptest.Commit(b, work, "big", nil)
	apptest.Git(b, gitDir, "fetch", "-q", work, "HEAD:refs/heads/main")
	return sha
}

func writeBig(b *testing.B, p string, data []byte) {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		b.Fatal(err)
	}
}
