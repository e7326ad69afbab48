package archive_test

import (
	"context"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"forgeapi/internal/orgmigration/archive"
)

// TestWriterStreamsRepositories checks that exporting a repository does
// not hold its git data in memory: writing an archive of a repository of
// 32 MiB of incompressible data allocates a small fraction of it. It is
// not parallel: it measures allocations of the whole process, which
// parallel tests would disturb.
func TestWriterStreamsRepositories(t *testing.T) {
	g := newGitRunner(t)
	root := t.TempDir()
	work, bare := filepath.Join(root, "work"), filepath.Join(root, "big.git")
	g.run(root, "init", "-q", "--bare", bare)
	const size = 32 << 20
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(filepath.Join(work, "big.bin"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.CopyN(out, rand.NewChaCha8([32]byte{7}), size)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	inBare := []string{"-c", "core.looseCompression=0", "--git-dir=" + bare, "--work-tree=" + work}
	g.run(root, append(inBare, "add", ".")...)
	g.run(root, append(inBare, "commit", "-q", "-m", "big")...)

	w := archive.NewWriter(io.Discard)
	w.TempDir = root
	w.GitEnv = g.env
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err = w.AddBareRepository(context.Background(), "octo-org", "big", bare)
	if err == nil {
		err = w.Close()
	}
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if allocated := after.TotalAlloc - before.TotalAlloc; allocated > size/8 {
		t.Fatalf("exporting %d bytes of git data allocated %d bytes; it should stream", size, allocated)
	}
}
