package gitread_test

import (
	"errors"
	"strings"
	"testing"

	"forgeapi/internal/git/gitread"
)

const zero = "0000000000000000000000000000000000000000"

// TestRefLog reads the entries git wrote for a branch, with the
// committer email of each update, and none for a deleted branch.
func TestRefLog(t *testing.T) {
	t.Parallel()
	w := newWorkRepo(t)
	w.git("config", "core.logAllRefUpdates", "always")
	a := w.commit("a", map[string]*string{"a.txt": str("a\n")})
	b := w.commit("b", map[string]*string{"b.txt": str("b\n")})
	w.env = append(w.env, "GIT_COMMITTER_EMAIL=push-1@forgeapi")
	w.git("update-ref", "refs/heads/topic", a)
	w.git("update-ref", "refs/heads/topic", b, a)
	w.git("update-ref", "refs/tags/gone", a)
	w.git("update-ref", "-d", "refs/tags/gone")
	r := open(t, w.gitDir())

	log, err := r.RefLog("refs/heads/topic")
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != 2 || log[0].Old != zero || log[0].New != a || log[1].Old != a || log[1].New != b {
		t.Fatalf("RefLog(topic) = %+v, want 0→%s, %s→%s", log, a, a, b)
	}
	for _, e := range log {
		if e.Email != "push-1@forgeapi" || !strings.HasPrefix(e.Line, e.Old+" "+e.New+" ") {
			t.Errorf("entry %+v", e)
		}
	}
	first, ok, err := r.RefLogFirst("refs/heads/topic")
	if err != nil || !ok || first != log[0] {
		t.Errorf("RefLogFirst(topic) = %+v, %v, %v; want %+v", first, ok, err, log[0])
	}
	for _, name := range []string{"refs/tags/gone", "refs/heads/never"} {
		if log, err := r.RefLog(name); err != nil || log != nil {
			t.Errorf("RefLog(%s) = %+v, %v; want none", name, log, err)
		}
		if _, ok, err := r.RefLogFirst(name); err != nil || ok {
			t.Errorf("RefLogFirst(%s) = %v, %v; want none", name, ok, err)
		}
	}
	for _, name := range []string{"refs/heads/../../config", "HEAD", "refs/heads/x.lock", "config"} {
		if _, err := r.RefLog(name); !errors.Is(err, gitread.ErrInvalidRefName) {
			t.Errorf("RefLog(%q) error %v, want ErrInvalidRefName", name, err)
		}
	}
}
