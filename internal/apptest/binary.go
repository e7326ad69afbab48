package apptest

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// ServerBinary builds the forgeapi command into dir and returns the
// binary's path, for the tests that run the real binary (to kill it, or
// as the README's reader would).
//
// Linking is the dear part of the build (several seconds of CPU), and the
// test binaries of one `go test ./...` would each link the same program.
// So the last binary built is kept in a directory shared by the run
// (serverBinaryCache) and copied to dir before `go build -o`, which leaves
// a target whose build ID is current as it is: only changed sources or
// build flags relink, and the new binary then replaces the kept one
// (written beside it and renamed, so that a test binary copying it
// meanwhile reads a whole file).
func ServerBinary(t testing.TB, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "forgeapi")
	kept := filepath.Join(serverBinaryCache(), "forgeapi")
	_ = copyExecutable(kept, bin) // none kept yet: go build links
	before, _ := os.Stat(bin)
	if out, err := exec.Command("go", "build", "-o", bin, "forgeapi/cmd/forgeapi").CombinedOutput(); err != nil {
		t.Fatalf("go build forgeapi: %v\n%s", err, out)
	}
	after, err := os.Stat(bin)
	if err != nil {
		t.Fatalf("go build forgeapi: %v", err)
	}
	if before == nil || !after.ModTime().Equal(before.ModTime()) || after.Size() != before.Size() {
		keepServerBinary(t, bin, kept)
	}
	return bin
}

// serverBinaryCache is the directory that keeps the last forgeapi binary a
// test built.
func serverBinaryCache() string {
	return filepath.Join(os.TempDir(), "forgeapi-test-bin")
}

// keepServerBinary replaces the kept binary with bin. Failing to keep it
// only costs the next test a link, so it is logged, not fatal.
func keepServerBinary(t testing.TB, bin, kept string) {
	if err := os.MkdirAll(filepath.Dir(kept), 0o755); err != nil {
		t.Logf("keep the forgeapi binary: %v", err)
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(kept), "forgeapi-*")
	if err != nil {
		t.Logf("keep the forgeapi binary: %v", err)
		return
	}
	_ = tmp.Close()
	if err := copyExecutable(bin, tmp.Name()); err != nil {
		_ = os.Remove(tmp.Name())
		t.Logf("keep the forgeapi binary: %v", err)
		return
	}
	if err := os.Rename(tmp.Name(), kept); err != nil {
		_ = os.Remove(tmp.Name())
		t.Logf("keep the forgeapi binary: %v", err)
	}
}

// copyExecutable copies the file src to dst (replaced if present) with
// mode 0755, keeping src's modification time: go build compares build
// IDs, not times, but an unchanged copy then tells it was not rebuilt.
func copyExecutable(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	info, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	if err := os.Chmod(dst, 0o755); err != nil {
		return err
	}
	return os.Chtimes(dst, info.ModTime(), info.ModTime())
}
