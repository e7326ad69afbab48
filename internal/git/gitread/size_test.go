package gitread_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"forgeapi/internal/git/gitread"
)

// TestSizeKBIsWhatGitCounts: SizeKB is git count-objects' size plus
// size-pack with loose objects only, after a repack (packs and loose
// objects) and with a push's quarantine directory and stray files beside
// the objects, which neither counts.
func TestSizeKBIsWhatGitCounts(t *testing.T) {
	t.Parallel()
	w := newWorkRepo(t)
	check := func(step string) {
		t.Helper()
		got, err := gitread.SizeKB(w.gitDir())
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		var want int64
		for _, line := range strings.Split(w.git("count-objects", "-v"), "\n") {
			key, value, _ := strings.Cut(line, ": ")
			if key == "size" || key == "size-pack" {
				n, err := strconv.ParseInt(value, 10, 64)
				if err != nil {
					t.Fatal(err)
				}
				want += n
			}
		}
		if got != want || want == 0 {
			t.Errorf("%s: SizeKB %d, git counts %d", step, got, want)
		}
	}
	for i := range 20 {
		w.commit("commit "+strconv.Itoa(i), map[string]*string{"f" + strconv.Itoa(i) + ".txt": str(strings.Repeat("line "+strconv.Itoa(i)+"\n", 300))})
	}
	check("loose")
	w.git("repack", "-q", "-d")
	w.commit("after the pack", map[string]*string{"later.txt": str(strings.Repeat("later\n", 2000))})
	check("packed and loose")

	objects := filepath.Join(w.gitDir(), "objects")
	quarantine := filepath.Join(objects, "tmp_objdir-incoming-x", "ab")
	if err := os.MkdirAll(quarantine, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{filepath.Join(quarantine, strings.Repeat("c", 38)), filepath.Join(objects, "ab", "not-an-object"),
		filepath.Join(objects, "pack", "tmp_pack_x")} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(strings.Repeat("x", 10000)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	check("with a quarantine and stray files")

	if _, err := gitread.SizeKB(filepath.Join(t.TempDir(), "missing.git")); err == nil {
		t.Error("SizeKB of a missing repository: no error")
	}
}
