package gitread_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"forgeapi/internal/git/gitread"
)

func open(t testing.TB, dir string) *gitread.Repository {
	t.Helper()
	r, err := gitread.Open(dir)
	if err != nil {
		t.Fatalf("Open(%s): %v", dir, err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

func TestOpenMissingRepository(t *testing.T) {
	t.Parallel()
	empty := t.TempDir()
	notDir := filepath.Join(empty, "file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{filepath.Join(empty, "missing"), empty, notDir} {
		if _, err := gitread.Open(dir); !errors.Is(err, gitread.ErrRepositoryNotFound) {
			t.Errorf("Open(%s) = %v, want ErrRepositoryNotFound", dir, err)
		}
	}
}

func TestEmptyRepository(t *testing.T) {
	t.Parallel()
	w := newWorkRepo(t)
	r := open(t, w.gitDir())
	ctx := context.Background()
	for _, rev := range []string{"HEAD", "main", "abcd"} {
		if _, err := r.Resolve(rev); !errors.Is(err, gitread.ErrRevisionNotFound) {
			t.Errorf("Resolve(%q) = %v, want ErrRevisionNotFound", rev, err)
		}
	}
	if _, err := r.CommitsBetween(ctx, "", "HEAD", 20); !errors.Is(err, gitread.ErrRevisionNotFound) {
		t.Errorf("CommitsBetween = %v, want ErrRevisionNotFound", err)
	}
	if _, err := r.ListDir("HEAD", ""); !errors.Is(err, gitread.ErrRevisionNotFound) {
		t.Errorf("ListDir = %v, want ErrRevisionNotFound", err)
	}
}

func TestResolve(t *testing.T) {
	t.Parallel()
	w := newWorkRepo(t)
	first := w.commit("first", map[string]*string{"README.md": str("hello\n")})
	second := w.commit("second", map[string]*string{"README.md": str("hello again\n")})
	w.git("branch", "feature/deep/name", first)
	w.git("tag", "v1", first)
	w.git("tag", "-a", "-m", "annotated", "v2", second)
	tree := w.git("rev-parse", "HEAD^{tree}")
	r := open(t, w.gitDir())

	cases := map[string]string{
		"HEAD":                         second,
		"main":                         second,
		"refs/heads/main":              second,
		"feature/deep/name":            first,
		"refs/heads/feature/deep/name": first,
		"v1":                           first,
		"v2":                           second,
		"refs/tags/v2":                 second,
		second:                         second,
		strings.ToUpper(second):        second,
		first[:7]:                      first,
		first[:4]:                      first,
		first[:9]:                      first,
	}
	for rev, want := range cases {
		got, err := r.Resolve(rev)
		if err != nil || got != want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", rev, got, err, want)
		}
	}
	bad := []string{"", "nope", "main~1", "main^", "main..HEAD", "main...HEAD", "@{-1}", "@", "a b",
		"x\x00y", "\n", "abc", "/main", "main/", "refs//heads", strings.Repeat("0", 40),
		strings.Repeat("f", 4000), tree, tree[:8], ":README.md", "HEAD:README.md", "v1.lock"}
	for _, rev := range bad {
		if got, err := r.Resolve(rev); !errors.Is(err, gitread.ErrRevisionNotFound) {
			t.Errorf("Resolve(%q) = %q, %v; want ErrRevisionNotFound", rev, got, err)
		}
	}
}

func FuzzResolve(f *testing.F) {
	w := newWorkRepo(f)
	sha := w.commit("first", map[string]*string{"a": str("a")})
	w.git("tag", "v1")
	dir := w.gitDir()
	for _, s := range []string{"HEAD", "main", "v1", sha, sha[:5], "a..b", "@{u}", "refs/heads/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rev string) {
		r, err := gitread.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		got, err := r.Resolve(rev)
		if err == nil && got != sha {
			t.Fatalf("Resolve(%q) = %q", rev, got)
		}
		if err != nil && !errors.Is(err, gitread.ErrRevisionNotFound) {
			t.Fatalf("Resolve(%q): untyped error %v", rev, err)
		}
	})
}

func TestMergeBase(t *testing.T) {
	t.Parallel()
	w := newWorkRepo(t)
	base := w.commit("base", map[string]*string{"a": str("1")})
	w.git("checkout", "-q", "-b", "topic")
	topic := w.commit("topic", map[string]*string{"b": str("1")})
	w.git("checkout", "-q", "main")
	mainTip := w.commit("main", map[string]*string{"c": str("1")})
	w.git("checkout", "-q", "--orphan", "lonely")
	w.commit("lonely", map[string]*string{"d": str("1")})
	r := open(t, w.gitDir())
	ctx := context.Background()

	for _, tc := range []struct{ a, b, want string }{
		{"main", "topic", base},
		{topic, mainTip, base},
		{base, "topic", base},
		{"main", "main", mainTip},
	} {
		got, err := r.MergeBase(ctx, tc.a, tc.b)
		if err != nil || got != tc.want {
			t.Errorf("MergeBase(%s, %s) = %s, %v; want %s", tc.a, tc.b, got, err, tc.want)
		}
	}
	if _, err := r.MergeBase(ctx, "main", "lonely"); !errors.Is(err, gitread.ErrNoMergeBase) {
		t.Errorf("MergeBase of unrelated histories = %v, want ErrNoMergeBase", err)
	}
	if _, err := r.MergeBase(ctx, "main", "nope"); !errors.Is(err, gitread.ErrRevisionNotFound) {
		t.Errorf("MergeBase with bad revision = %v, want ErrRevisionNotFound", err)
	}
	if ok, err := r.IsAncestor(ctx, base, "topic"); err != nil || !ok {
		t.Errorf("IsAncestor(base, topic) = %v, %v; want true", ok, err)
	}
	if ok, err := r.IsAncestor(ctx, "topic", "main"); err != nil || ok {
		t.Errorf("IsAncestor(topic, main) = %v, %v; want false", ok, err)
	}
	if ok, err := r.IsAncestor(ctx, "lonely", "main"); err != nil || ok {
		t.Errorf("IsAncestor(lonely, main) = %v, %v; want false", ok, err)
	}
}

func TestMergeBaseMatchesGit(t *testing.T) {
	t.Parallel()
	w := newWorkRepo(t)
	w.commit("root", map[string]*string{"a": str("1")})
	w.git("checkout", "-q", "-b", "side")
	w.commit("side 1", map[string]*string{"b": str("1")})
	w.git("checkout", "-q", "main")
	w.commit("main 1", map[string]*string{"c": str("1")})
	w.tick++
	w.git("merge", "-q", "--no-edit", "side")
	w.git("checkout", "-q", "side")
	w.commit("side 2", map[string]*string{"b": str("2")})
	w.git("checkout", "-q", "main")
	w.commit("main 2", map[string]*string{"c": str("2")})
	want := w.git("merge-base", "main", "side")
	r := open(t, w.gitDir())
	got, err := r.MergeBase(context.Background(), "main", "side")
	if err != nil || got != want {
		t.Errorf("MergeBase = %s, %v; git says %s", got, err, want)
	}
}

func TestReadFileAndListDir(t *testing.T) {
	t.Parallel()
	w := newWorkRepo(t)
	w.commit("files", map[string]*string{
		"README.md":         str("hello\n"),
		"agents/x.md":       str("# agent x\n"),
		"agents/deep/y.md":  str("yy"),
		"docs/guide/a.txt":  str("a"),
		"weird name ü.txt":  str("ü"),
		"agents/empty.json": str(""),
	})
	w.git("-c", "core.symlinks=true", "update-index", "--add", "--cacheinfo", "120000,"+w.gitInput("README.md", "hash-object", "-w", "--stdin")+",link")
	w.tick++
	w.git("commit", "-q", "-m", "symlink")
	sha := w.git("rev-parse", "HEAD")
	r := open(t, w.gitDir())

	for path, want := range map[string]string{
		"README.md": "hello\n", "/agents/x.md": "# agent x\n", "agents//deep/y.md": "yy",
		"weird name ü.txt": "ü", "agents/empty.json": "", "link": "README.md",
	} {
		got, err := r.ReadFile(sha, path)
		if err != nil || string(got) != want {
			t.Errorf("ReadFile(%q) = %q, %v; want %q", path, got, err, want)
		}
	}
	for path, want := range map[string]error{
		"missing": gitread.ErrPathNotFound, "agents/missing.md": gitread.ErrPathNotFound,
		"README.md/x": gitread.ErrPathNotFound, "": gitread.ErrPathNotFound,
		"../README.md": gitread.ErrPathNotFound, "agents": gitread.ErrNotAFile, "agents/deep": gitread.ErrNotAFile,
	} {
		if _, err := r.ReadFile("main", path); !errors.Is(err, want) {
			t.Errorf("ReadFile(%q) = %v, want %v", path, err, want)
		}
	}
	if _, err := r.ReadFile("nope", "README.md"); !errors.Is(err, gitread.ErrRevisionNotFound) {
		t.Errorf("ReadFile at bad revision = %v", err)
	}

	root, err := r.ListDir("main", "")
	if err != nil {
		t.Fatal(err)
	}
	gotRoot := map[string]gitread.Entry{}
	for _, e := range root {
		gotRoot[e.Name] = e
	}
	for name, typ := range map[string]gitread.EntryType{"README.md": gitread.EntryFile, "agents": gitread.EntryDir,
		"docs": gitread.EntryDir, "link": gitread.EntrySymlink, "weird name ü.txt": gitread.EntryFile} {
		if gotRoot[name].Type != typ {
			t.Errorf("root entry %q = %+v, want type %s", name, gotRoot[name], typ)
		}
	}
	if e := gotRoot["README.md"]; e.Size != 6 || e.Path != "README.md" || len(e.SHA) != 40 {
		t.Errorf("README.md entry = %+v", e)
	}
	agents, err := r.ListDir("main", "/agents/")
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, e := range agents {
		paths = append(paths, e.Path+":"+string(e.Type))
	}
	if want := []string{"agents/deep:dir", "agents/empty.json:file", "agents/x.md:file"}; !slices.Equal(paths, want) {
		t.Errorf("ListDir(agents) = %v, want %v", paths, want)
	}
	for path, want := range map[string]error{"README.md": gitread.ErrNotADirectory, "nope": gitread.ErrPathNotFound,
		"agents/x.md/z": gitread.ErrPathNotFound, "../..": gitread.ErrPathNotFound} {
		if _, err := r.ListDir("main", path); !errors.Is(err, want) {
			t.Errorf("ListDir(%q) = %v, want %v", path, err, want)
		}
	}

	// ListTree of the SHA Stat gives lists what ListDir lists.
	for _, dir := range []string{"", "agents", "/agents/", "docs/guide"} {
		e, _, err := r.Stat("main", dir)
		if err != nil {
			t.Fatal(err)
		}
		want, err := r.ListDir("main", dir)
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.ListTree(e.SHA, dir)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("ListTree(%s, %q) = %+v, %v; want %+v", e.SHA, dir, got, err, want)
		}
	}
	readme := gotRoot["README.md"].SHA
	for _, c := range []struct{ sha, dir string }{{readme, ""}, {"nope", ""}, {strings.Repeat("0", 40), ""},
		{agents[0].SHA, "../x"}} {
		if _, err := r.ListTree(c.sha, c.dir); !errors.Is(err, gitread.ErrPathNotFound) {
			t.Errorf("ListTree(%q, %q) = %v, want ErrPathNotFound", c.sha, c.dir, err)
		}
	}
}

func TestChangedPaths(t *testing.T) {
	t.Parallel()
	w := newWorkRepo(t)
	base := w.commit("base", map[string]*string{
		"keep.txt": str("same"), "edit.txt": str("v1"), "gone.txt": str("bye"),
		"old/name.txt": str("moving content that is long enough to be a rename\n"),
	})
	head := w.commit("head", map[string]*string{
		"edit.txt": str("v2"), "gone.txt": nil, "agents/x.md": str("x"),
		"old/name.txt": nil, "new/name.txt": str("moving content that is long enough to be a rename\n"),
	})
	r := open(t, w.gitDir())
	ctx := context.Background()

	got, err := r.ChangedPaths(ctx, base, head)
	if err != nil {
		t.Fatal(err)
	}
	blob := func(rev, path string) string { return w.git("rev-parse", rev+":"+path) }
	want := []gitread.Change{
		{Path: "agents/x.md", Status: gitread.StatusAdded, NewSHA: blob(head, "agents/x.md")},
		{Path: "edit.txt", Status: gitread.StatusModified, OldSHA: blob(base, "edit.txt"), NewSHA: blob(head, "edit.txt")},
		{Path: "gone.txt", Status: gitread.StatusDeleted, OldSHA: blob(base, "gone.txt")},
		{Path: "new/name.txt", Status: gitread.StatusAdded, NewSHA: blob(head, "new/name.txt")},
		{Path: "old/name.txt", Status: gitread.StatusDeleted, OldSHA: blob(base, "old/name.txt")},
	}
	if !slices.Equal(got, want) {
		t.Errorf("ChangedPaths = %v\nwant %v", got, want)
	}
	filtered, err := r.ChangedPaths(ctx, base, head, "agents/", "edit.txt", "ed")
	if err != nil {
		t.Fatal(err)
	}
	if want := want[:2]; !slices.Equal(filtered, want) {
		t.Errorf("filtered ChangedPaths = %v, want %v", filtered, want)
	}
	all, err := r.ChangedPaths(ctx, "", base)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 4 || all[0].Status != gitread.StatusAdded {
		t.Errorf("ChangedPaths from empty tree = %v", all)
	}
	same, err := r.ChangedPaths(ctx, head, head)
	if err != nil || len(same) != 0 {
		t.Errorf("ChangedPaths(head, head) = %v, %v", same, err)
	}
	if _, err := r.ChangedPaths(ctx, "nope", head); !errors.Is(err, gitread.ErrRevisionNotFound) {
		t.Errorf("ChangedPaths with bad base = %v", err)
	}
}

func TestReadBlob(t *testing.T) {
	t.Parallel()
	w := newWorkRepo(t)
	head := w.commit("one", map[string]*string{"a/b.txt": str("blob content\n")})
	r := open(t, w.gitDir())
	got, err := r.ReadBlob(w.git("rev-parse", head+":a/b.txt"))
	if err != nil || string(got) != "blob content\n" {
		t.Fatalf("ReadBlob = %q, %v", got, err)
	}
	for _, bad := range []string{"", "zz", strings.Repeat("0", 40), w.git("rev-parse", head+":a")[:39], w.git("rev-parse", head+":a")} {
		if _, err := r.ReadBlob(bad); !errors.Is(err, gitread.ErrPathNotFound) {
			t.Errorf("ReadBlob(%q) = %v, want ErrPathNotFound", bad, err)
		}
	}
}

func TestCommitsBetween(t *testing.T) {
	t.Parallel()
	w := newWorkRepo(t)
	base := w.commit("base", map[string]*string{"a.txt": str("1"), "b.txt": str("1")})
	c1 := w.commit("add c\n\nwith a body", map[string]*string{"c.txt": str("1")})
	c2 := w.commit("edit a, drop b", map[string]*string{"a.txt": str("2"), "b.txt": nil})
	r := open(t, w.gitDir())
	ctx := context.Background()

	list, err := r.CommitsBetween(ctx, base, "main", 20)
	if err != nil {
		t.Fatal(err)
	}
	if list.Total != 2 || len(list.Commits) != 2 {
		t.Fatalf("CommitsBetween = %+v", list)
	}
	newest, older := list.Commits[0], list.Commits[1]
	if newest.SHA != c2 || older.SHA != c1 {
		t.Errorf("order = %s, %s; want %s, %s", newest.SHA, older.SHA, c2, c1)
	}
	if newest.AuthorName != "Ada Author" || newest.AuthorEmail != "ada@example.com" ||
		newest.CommitterEmail != "carl@example.com" || newest.CommitterDate.IsZero() {
		t.Errorf("identity = %+v", newest)
	}
	if older.Message != "add c\n\nwith a body\n" || !slices.Equal(older.ParentSHAs, []string{base}) {
		t.Errorf("older = %+v", older)
	}
	if !slices.Equal(older.Added, []string{"c.txt"}) || older.Removed != nil || older.Modified != nil {
		t.Errorf("older changes = %v %v %v", older.Added, older.Removed, older.Modified)
	}
	if newest.Added != nil || !slices.Equal(newest.Removed, []string{"b.txt"}) || !slices.Equal(newest.Modified, []string{"a.txt"}) {
		t.Errorf("newest changes = %v %v %v", newest.Added, newest.Removed, newest.Modified)
	}

	whole, err := r.CommitsBetween(ctx, "", "main", 1)
	if err != nil || whole.Total != 3 || len(whole.Commits) != 1 || whole.Commits[0].SHA != c2 {
		t.Errorf("whole history = %+v, %v", whole, err)
	}
	root, err := r.CommitsBetween(ctx, "", base, -1)
	if err != nil || len(root.Commits) != 1 || !slices.Equal(root.Commits[0].Added, []string{"a.txt", "b.txt"}) {
		t.Errorf("root commit = %+v, %v", root, err)
	}
	none, err := r.CommitsBetween(ctx, "main", base, 20)
	if err != nil || none.Total != 0 || len(none.Commits) != 0 {
		t.Errorf("head behind base = %+v, %v", none, err)
	}
	if n, err := r.CountCommits(ctx, base, c2); err != nil || n != 2 {
		t.Errorf("CountCommits = %d, %v", n, err)
	}
	if _, err := r.CommitsBetween(ctx, "nope", "main", 1); !errors.Is(err, gitread.ErrRevisionNotFound) {
		t.Errorf("bad base = %v", err)
	}
}

func TestCommitsMatchGitRevList(t *testing.T) {
	t.Parallel()
	w := newWorkRepo(t)
	w.commit("root", map[string]*string{"a": str("1")})
	w.git("checkout", "-q", "-b", "side")
	w.commit("side 1", map[string]*string{"b": str("1")})
	w.commit("side 2", map[string]*string{"b": str("2")})
	w.git("checkout", "-q", "main")
	base := w.commit("main 1", map[string]*string{"c": str("1")})
	w.tick++
	w.git("merge", "-q", "--no-edit", "side")
	w.commit("main 2", map[string]*string{"c": str("2")})
	r := open(t, w.gitDir())
	ctx := context.Background()

	for _, q := range []gitread.CommitQuery{
		{Head: "main", Exclude: []string{base}, Limit: -1},
		{Head: "main", Exclude: []string{"side"}, Limit: -1},
		{Head: "main", Limit: -1},
		{Head: "side", Exclude: []string{"main"}, Limit: -1},
		{Head: "main", Exclude: []string{"side", base}, Limit: -1},
	} {
		args := []string{"rev-list", q.Head}
		for _, e := range q.Exclude {
			args = append(args, "^"+e)
		}
		want := strings.Fields(w.git(args...))
		list, err := r.Commits(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range list.Commits {
			got = append(got, c.SHA)
		}
		if !slices.Equal(got, want) || list.Total != len(want) {
			t.Errorf("Commits(%+v) = %v (total %d), git rev-list says %v", q, got, list.Total, want)
		}
	}
}

func TestThousandCommitPush(t *testing.T) {
	t.Parallel()
	w := newWorkRepo(t)
	base := w.fastImport("main", 0, 3000)
	head := w.fastImport("main", 3000, 1000)
	r := open(t, w.gitDir())
	ctx := context.Background()

	list, err := r.CommitsBetween(ctx, base, head, 20)
	if err != nil {
		t.Fatal(err)
	}
	if list.Total != 1000 || len(list.Commits) != 20 || list.Commits[0].SHA != head {
		t.Fatalf("total %d, %d commits, first %s", list.Total, len(list.Commits), list.Commits[0].SHA)
	}
	if got := list.Commits[0].Added; !slices.Equal(got, []string{"d39/f3999.txt"}) {
		t.Errorf("newest commit added %v", got)
	}
	changes, err := r.ChangedPaths(ctx, base, head, "d39/f3999.txt", "d30")
	if err != nil || len(changes) != 101 {
		t.Errorf("ChangedPaths = %v, %v", changes, err)
	}
}

func BenchmarkCommitsBetween(b *testing.B) {
	w := newWorkRepo(b)
	base := w.fastImport("main", 0, 5000)
	head := w.fastImport("main", 5000, 1000)
	w.git("gc", "-q")
	r := open(b, w.gitDir())
	ctx := context.Background()
	for b.Loop() {
		list, err := r.CommitsBetween(ctx, base, head, 20)
		if err != nil || list.Total != 1000 {
			b.Fatal(list.Total, err)
		}
	}
}

func TestChangedPathsMatchGit(t *testing.T) {
	t.Parallel()
	w := newWorkRepo(t)
	base := w.commit("base", map[string]*string{
		"thing": str("a file"), "dir/a": str("1"), "dir/sub/b": str("1"), "dir/sub/c": str("1"), "z": str("z"),
	})
	w.git("rm", "-q", "thing", "dir/sub/b", "dir/sub/c")
	head := w.commit("head", map[string]*string{
		"thing/inside": str("now a dir"), "dir/sub": str("now a file"), "dir/a": str("2"), "new/deep/x": str("x"),
	})
	if err := os.Chmod(filepath.Join(w.dir, "z"), 0o755); err != nil {
		t.Fatal(err)
	}
	head2 := w.commit("mode", nil)
	r := open(t, w.gitDir())
	for _, pair := range [][2]string{{base, head}, {head, base}, {base, head2}, {head, head2}} {
		var want []string
		for _, line := range strings.Split(w.git("diff", "--name-status", "--no-renames", pair[0], pair[1]), "\n") {
			status, path, _ := strings.Cut(line, "\t")
			want = append(want, path+":"+map[string]string{"A": "added", "D": "deleted", "M": "modified"}[status])
		}
		slices.Sort(want)
		changes, err := r.ChangedPaths(context.Background(), pair[0], pair[1])
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range changes {
			got = append(got, c.Path+":"+string(c.Status))
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("ChangedPaths(%.7s, %.7s) = %v\ngit says %v", pair[0], pair[1], got, want)
		}
	}
}

// TestMergeBaseWithEqualCommitDates checks merge bases and ancestry where
// every commit has the same date (commits made within one second), so the
// walk's date order cannot tell the sides apart: a tip that is an ancestor
// of the other tip must still be found (a fast-forward push is not forced).
func TestMergeBaseWithEqualCommitDates(t *testing.T) {
	t.Parallel()
	w := newWorkRepo(t)
	same := func(msg string, files map[string]*string) string {
		sha := w.commit(msg, files)
		w.tick-- // the next commit gets the same date
		return sha
	}
	root := same("root", map[string]*string{"a": str("1")})
	one := same("one", map[string]*string{"a": str("2")})
	w.git("checkout", "-q", "-b", "side")
	side := same("side", map[string]*string{"b": str("1")})
	w.git("checkout", "-q", "main")
	two := same("two", map[string]*string{"a": str("3")})
	r := open(t, w.gitDir())
	ctx := context.Background()
	shas := []string{root, one, side, two}
	for _, a := range shas {
		for _, b := range shas {
			want := w.git("merge-base", a, b)
			got, err := r.MergeBase(ctx, a, b)
			if err != nil || got != want {
				t.Errorf("MergeBase(%.7s, %.7s) = %.7s, %v; git says %.7s", a, b, got, err, want)
			}
			isAnc, err := r.IsAncestor(ctx, a, b)
			if wantAnc := want == a; err != nil || isAnc != wantAnc {
				t.Errorf("IsAncestor(%.7s, %.7s) = %v, %v; want %v", a, b, isAnc, err, wantAnc)
			}
		}
	}
}

func TestChangedEntriesModesAndSizes(t *testing.T) {
	t.Parallel()
	w := newWorkRepo(t)
	base := w.commit("base", map[string]*string{"run.sh": str("echo 1\n"), "a.txt": str("a"), "gone.txt": str("x")})
	if err := os.Chmod(filepath.Join(w.dir, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a.txt", filepath.Join(w.dir, "link")); err != nil {
		t.Fatal(err)
	}
	head := w.commit("head", map[string]*string{"a.txt": str("abc"), "gone.txt": nil})
	r := open(t, w.gitDir())
	ctx := context.Background()

	got, err := r.ChangedEntries(ctx, base, head)
	if err != nil {
		t.Fatal(err)
	}
	blob := func(rev, path string) string { return w.git("rev-parse", rev+":"+path) }
	change := func(p string, s gitread.ChangeStatus, old, new string) gitread.Change {
		return gitread.Change{Path: p, Status: s, OldSHA: old, NewSHA: new}
	}
	want := []gitread.EntryChange{
		{change("a.txt", gitread.StatusModified, blob(base, "a.txt"), blob(head, "a.txt")), "100644", "100644"},
		{change("gone.txt", gitread.StatusDeleted, blob(base, "gone.txt"), ""), "100644", ""},
		{change("link", gitread.StatusAdded, "", blob(head, "link")), "", "120000"},
		{change("run.sh", gitread.StatusModified, blob(base, "run.sh"), blob(head, "run.sh")), "100644", "100755"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("ChangedEntries = %v\nwant %v", got, want)
	}
	all, err := r.ChangedEntries(ctx, "", head)
	if err != nil || len(all) != 3 || all[0].Status != gitread.StatusAdded || all[0].OldMode != "" {
		t.Errorf("ChangedEntries from the empty tree = %v, %v", all, err)
	}
	if _, err := r.ChangedEntries(ctx, strings.Repeat("1", 40), head); !errors.Is(err, gitread.ErrRevisionNotFound) {
		t.Errorf("ChangedEntries from a missing commit = %v, want ErrRevisionNotFound", err)
	}
	if size, err := r.BlobSize(blob(head, "a.txt")); size != 3 || err != nil {
		t.Errorf("BlobSize = %d, %v; want 3", size, err)
	}
	if _, err := r.BlobSize("nope"); !errors.Is(err, gitread.ErrPathNotFound) {
		t.Errorf("BlobSize(nope) = %v, want ErrPathNotFound", err)
	}
	list, err := r.Commits(ctx, gitread.CommitQuery{Head: head, Exclude: []string{base}, Limit: -1, NoPaths: true})
	if err != nil || list.Total != 1 || len(list.Commits) != 1 {
		t.Fatalf("Commits(NoPaths) = %+v, %v", list, err)
	}
	if c := list.Commits[0]; c.SHA != head || c.Message != "head\n" || c.Added != nil || c.Modified != nil || c.Removed != nil {
		t.Errorf("Commits(NoPaths)[0] = %+v, want the head without paths", c)
	}
}
