package repository_test

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"forgeapi/internal/apptest"
)

// BenchmarkExportThroughAPI exports, through the API, a repository holding
// about 100 MiB of git data (incompressible blobs over five commits), from
// POST to the state exported, and in the same iteration runs the
// reference: "git clone --mirror" of the repository followed by "tar czf"
// of the clone. It reports both times and their ratio; the target is
// ratio <= 1.5. The export time includes the API round trips and the
// state polling (every 20 ms).
func BenchmarkExportThroughAPI(b *testing.B) {
	env := apptest.Start(b)
	owner := env.User("bench-owner")
	org := env.Org("bench-org", owner)
	token := env.Token(owner, "repo", "admin:org")
	repo := env.Repo(org, "big")
	g := newGitRunner(b)
	fillLargeRepository(b, g, env.App.Repos.GitDir(repo.ID), 5, 4, 5<<20)

	var exportTime, referenceTime time.Duration
	iterations := 0
	for b.Loop() {
		start := time.Now()
		id := startAndWait(b, env, org.Login, token)
		exportTime += time.Since(start)

		dir := b.TempDir()
		start = time.Now()
		g.run(dir, "clone", "-q", "--mirror", env.App.Repos.GitDir(repo.ID), "reference.git")
		tar := exec.Command("tar", "czf", "reference.tar.gz", "reference.git")
		tar.Dir = dir
		if out, err := tar.CombinedOutput(); err != nil {
			b.Fatalf("tar: %v\n%s", err, out)
		}
		referenceTime += time.Since(start)
		iterations++
		var size int64
		if err := env.App.DB.QueryRow(`SELECT archive_size FROM org_migrations WHERE id = $1`, id).Scan(&size); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(size)/(1<<20), "archive-MiB")
		if resp, _ := env.Do("DELETE", fmt.Sprintf("/orgs/%s/migrations/%d/archive", org.Login, id), token, nil); resp.StatusCode != http.StatusNoContent {
			b.Fatalf("delete archive: %d", resp.StatusCode)
		}
	}
	perIteration := func(d time.Duration) float64 { return d.Seconds() / float64(iterations) }
	b.ReportMetric(perIteration(exportTime), "export-s/op")
	b.ReportMetric(perIteration(referenceTime), "clone+tar-s/op")
	b.ReportMetric(exportTime.Seconds()/referenceTime.Seconds(), "ratio")
}

// startAndWait starts a migration of "big" and polls until it is exported.
func startAndWait(b *testing.B, env *apptest.Env, org, token string) int64 {
	resp, data := env.DoJSON("POST", "/orgs/"+org+"/migrations", token, `{"repositories":["big"]}`)
	if resp.StatusCode != http.StatusCreated {
		b.Fatalf("start: %d %s", resp.StatusCode, data)
	}
	var m migrationJSON
	mustUnmarshal(b, data, &m)
	for {
		resp, data := env.Do("GET", fmt.Sprintf("/orgs/%s/migrations/%d?exclude=repositories", org, m.ID), token, nil)
		mustUnmarshal(b, data, &m)
		switch {
		case resp.StatusCode != http.StatusOK || m.State == "failed":
			b.Fatalf("migration: %d %s", resp.StatusCode, data)
		case m.State == "exported":
			return m.ID
		}
		time.Sleep(20 * time.Millisecond) // polling the export
	}
}

// fillLargeRepository commits commits times files files of size random
// bytes into the bare repository, packed into one pack, as a push of a
// large history would leave it.
func fillLargeRepository(b *testing.B, g gitRunner, bare string, commits, files, size int) {
	work := b.TempDir()
	inBare := []string{"-c", "core.compression=1", "--git-dir=" + bare, "--work-tree=" + work}
	rng := rand.NewChaCha8([32]byte{42})
	for c := range commits {
		for f := range files {
			writeRandom(b, rng, filepath.Join(work, fmt.Sprintf("blob-%d-%d.bin", c, f)), size)
		}
		g.run(work, append(inBare, "add", ".")...)
		g.run(work, append(inBare, "commit", "-q", "-m", fmt.Sprint("commit ", c))...)
	}
	g.run(work, "-c", "core.compression=1", "--git-dir="+bare, "repack", "-a", "-d", "-q", "--window=0")
}

func writeRandom(b *testing.B, rng io.Reader, name string, size int) {
	out, err := os.Create(name)
	if err != nil {
		b.Fatal(err)
	}
	defer out.Close()
	if _, err := io.CopyN(out, rng, int64(size)); err != nil {
		b.Fatal(err)
	}
}
