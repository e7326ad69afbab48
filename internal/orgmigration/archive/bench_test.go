package archive_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"forgeapi/internal/orgmigration/archive"
)

// BenchmarkExportVersusCloneAndTar exports a bare repository holding about
// 100 MiB of git data (incompressible blobs over five commits, in one pack)
// and, in the same iteration, runs the reference: "git clone --mirror" of
// it followed by "tar czf" of the clone. It reports both times and their
// ratio; the target is ratio <= 1.5. The repository is built inside the
// benchmark, so plain "go test" does not pay for it.
func BenchmarkExportVersusCloneAndTar(b *testing.B) {
	g := newGitRunner(b)
	root := b.TempDir()
	source := makeLargeRepository(b, g, root, 5, 4, 5<<20)

	var exportTime, referenceTime time.Duration
	iterations := 0
	for b.Loop() {
		iteration := filepath.Join(root, fmt.Sprint("run", iterations))
		exportTime += timed(func() { exportRepository(b, g, source, iteration) })
		referenceTime += timed(func() { cloneAndTar(b, g, source, iteration) })
		iterations++
		if err := os.RemoveAll(iteration); err != nil {
			b.Fatal(err)
		}
	}
	perIteration := func(d time.Duration) float64 { return d.Seconds() / float64(iterations) }
	b.ReportMetric(perIteration(exportTime), "export-s/op")
	b.ReportMetric(perIteration(referenceTime), "clone+tar-s/op")
	b.ReportMetric(exportTime.Seconds()/referenceTime.Seconds(), "ratio")
	b.ReportMetric(float64(dirSize(b, source))/(1<<20), "repo-MiB")
}

func timed(f func()) time.Duration {
	start := time.Now()
	f()
	return time.Since(start)
}

func exportRepository(b *testing.B, g gitRunner, source, dir string) {
	tmp := filepath.Join(dir, "export-tmp")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		b.Fatal(err)
	}
	writeArchive(b, filepath.Join(dir, "export.tar.gz"), func(w *archive.Writer) error {
		w.TempDir = tmp // same file system as the source, as the reference clone has
		w.GitEnv = g.env
		if err := w.WriteSchema(); err != nil {
			return err
		}
		return w.AddBareRepository(context.Background(), "octo-org", "big", source)
	})
}

func cloneAndTar(b *testing.B, g gitRunner, source, dir string) {
	g.run(dir, "clone", "-q", "--mirror", source, "reference.git")
	cmd := exec.Command("tar", "czf", "reference.tar.gz", "reference.git")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("tar: %v\n%s", err, out)
	}
}

// makeLargeRepository builds a bare repository of commits commits, each
// adding files files of size random bytes, packed into one pack. Random
// data does not compress, so git compresses at level 1 to save time; the
// pack holds zlib streams all the same.
func makeLargeRepository(b *testing.B, g gitRunner, root string, commits, files, size int) string {
	work := filepath.Join(root, "work")
	bare := filepath.Join(root, "big.git")
	g.run(root, "init", "-q", "--bare", bare)
	inBare := []string{"-c", "core.compression=1", "--git-dir=" + bare, "--work-tree=" + work}
	rng := rand.NewChaCha8([32]byte{42})
	for c := range commits {
		for f := range files {
			writeRandomFile(b, rng, filepath.Join(work, fmt.Sprintf("blob-%d-%d.bin", c, f)), size)
		}
		g.run(root, append(inBare, "add", ".")...)
		g.run(root, append(inBare, "commit", "-q", "-m", fmt.Sprint("commit ", c))...)
	}
	g.run(root, "-c", "core.compression=1", "--git-dir="+bare, "repack", "-a", "-d", "-q", "--window=0")
	if err := os.RemoveAll(work); err != nil {
		b.Fatal(err)
	}
	return bare
}

func writeRandomFile(b *testing.B, rng io.Reader, name string, size int) {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		b.Fatal(err)
	}
	out, err := os.Create(name)
	if err != nil {
		b.Fatal(err)
	}
	defer out.Close()
	if _, err := io.CopyN(out, rng, int64(size)); err != nil {
		b.Fatal(err)
	}
}

func dirSize(b *testing.B, dir string) int64 {
	var total int64
	err := filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() {
			total += info.Size()
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return total
}
