package gitwrite_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"forgeapi/internal/git/gitwrite"
)

// commitWithGit is the writer as it was before it ran in process: the
// same change made with git's own commands. The tests hold the package to
// it: the same objects (SHAs) and the same refusals.
func commitWithGit(ctx context.Context, dir string, c gitwrite.Change) (commitSHA, blobSHA string, err error) {
	index, err := os.CreateTemp("", "forgeapi-index-*")
	if err != nil {
		return "", "", err
	}
	index.Close()
	os.Remove(index.Name())
	defer os.Remove(index.Name())
	worktree, err := os.MkdirTemp("", "forgeapi-worktree-*")
	if err != nil {
		return "", "", err
	}
	defer os.RemoveAll(worktree)
	env := []string{"GIT_DIR=" + dir, "GIT_WORK_TREE=" + worktree, "GIT_INDEX_FILE=" + index.Name(), "GIT_CONFIG_NOSYSTEM=1",
		"HOME=" + dir, "PATH=" + os.Getenv("PATH")}
	run := func(stdin []byte, extra []string, args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Env = append(env, extra...)
		cmd.Dir = dir
		if stdin != nil {
			cmd.Stdin = bytes.NewReader(stdin)
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("git %s: %w: %s", args[0], err, strings.TrimSpace(stderr.String()))
		}
		return strings.TrimSpace(string(out)), nil
	}
	if c.Parent != "" {
		if _, err := run(nil, nil, "read-tree", c.Parent); err != nil {
			return "", "", err
		}
	}
	if c.Delete {
		if _, err := run(nil, nil, "update-index", "--force-remove", "--", c.Path); err != nil {
			return "", "", err
		}
	} else {
		if blobSHA, err = run(c.Content, nil, "hash-object", "-w", "--stdin"); err != nil {
			return "", "", err
		}
		mode := "100644" // an executable file keeps its mode (gitwrite.Commit's contract)
		if c.Parent != "" {
			if listed, _ := run(nil, nil, "ls-tree", c.Parent, "--", c.Path); strings.HasPrefix(listed, "100755 blob ") {
				mode = "100755"
			}
		}
		if _, err := run(nil, nil, "update-index", "--add", "--cacheinfo", mode+","+blobSHA+","+c.Path); err != nil {
			return "", "", err
		}
	}
	tree, err := run(nil, nil, "write-tree")
	if err != nil {
		return "", "", err
	}
	args := []string{"commit-tree", tree, "-F", "-"}
	if c.Parent != "" {
		args = append(args, "-p", c.Parent)
	}
	ids := []string{"GIT_AUTHOR_NAME=" + c.Author.Name, "GIT_AUTHOR_EMAIL=" + c.Author.Email, "GIT_AUTHOR_DATE=" + rawDate(c.Author.When),
		"GIT_COMMITTER_NAME=" + c.Committer.Name, "GIT_COMMITTER_EMAIL=" + c.Committer.Email, "GIT_COMMITTER_DATE=" + rawDate(c.Committer.When)}
	commitSHA, err = run([]byte(c.Message), ids, args...)
	return commitSHA, blobSHA, err
}

func rawDate(t time.Time) string { return fmt.Sprintf("%d %s", t.Unix(), t.Format("-0700")) }

// git runs git in dir (a bare repository) with stdin and returns its
// output.
func git(t testing.TB, dir string, stdin []byte, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_DIR="+dir, "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir,
		"GIT_AUTHOR_NAME=Setup", "GIT_AUTHOR_EMAIL=setup@example.com", "GIT_AUTHOR_DATE=1700000000 +0000",
		"GIT_COMMITTER_NAME=Setup", "GIT_COMMITTER_EMAIL=setup@example.com", "GIT_COMMITTER_DATE=1700000000 +0000")
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

// rawEntry is a tree entry written byte for byte, in the order given:
// modes and orders git itself would not write are allowed.
type rawEntry struct{ mode, name, sha string }

// rawTree stores a tree of these entries as they are.
func rawTree(t testing.TB, dir string, entries ...rawEntry) string {
	t.Helper()
	var b bytes.Buffer
	for _, e := range entries {
		id, err := hex.DecodeString(e.sha)
		if err != nil || len(id) != 20 {
			t.Fatalf("entry %q: bad sha %q", e.name, e.sha)
		}
		b.WriteString(e.mode + " " + e.name + "\x00")
		b.Write(id)
	}
	return git(t, dir, b.Bytes(), "hash-object", "-t", "tree", "--literally", "-w", "--stdin")
}

func blob(t testing.TB, dir, content string) string {
	return git(t, dir, []byte(content), "hash-object", "-w", "--stdin")
}

func commitOf(t testing.TB, dir, tree string) string {
	return git(t, dir, []byte("setup\n"), "commit-tree", tree)
}

// copyRepo copies the repository src to a new directory.
func copyRepo(t testing.TB, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "repo.git")
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
}

// parents are the commits the cases change: the well-formed one in
// dir, the others in oddDir (fsck would report them).
type parents struct {
	dir, oddDir                        string
	plain, odd, dotGit, linkModules    string
	linkAlias, linkBelow, backslashGit string
	leadingBackslash, spacedDotGit     string
	fileModules                        string
}

func initRepo(t testing.TB) string {
	dir := filepath.Join(t.TempDir(), "setup.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	return dir
}

func setUp(t testing.TB) parents {
	p := parents{dir: initRepo(t), oddDir: initRepo(t)}
	dir := p.dir
	readme, script, x, f := blob(t, dir, "# readme\n"), blob(t, dir, "#!/bin/sh\n"), blob(t, dir, "x\n"), blob(t, dir, "f\n")
	target := blob(t, dir, "README.md")
	empty := rawTree(t, dir)
	subCommit := strings.Repeat("ab", 20) // a submodule's commit need not be here
	deep := rawTree(t, dir, rawEntry{"100644", "f.txt", f})
	docs := rawTree(t, dir, rawEntry{"40000", "deep", deep}, rawEntry{"100644", "guide.md", x})
	plain := rawTree(t, dir,
		rawEntry{"100644", ".gitmodules", x},
		rawEntry{"100644", "README.md", readme},
		rawEntry{"100644", "a-b", x},
		rawEntry{"100644", "a.b", x},
		rawEntry{"40000", "a", rawTree(t, dir, rawEntry{"100644", "x.txt", x})},
		rawEntry{"100644", "a0", x},
		rawEntry{"40000", "docs", docs},
		rawEntry{"40000", "empty", empty},
		rawEntry{"40000", "keep", rawTree(t, dir, rawEntry{"40000", "e", empty}, rawEntry{"100644", "f.txt", f})},
		rawEntry{"120000", "link", target},
		rawEntry{"40000", "nest", rawTree(t, dir, rawEntry{"40000", "e", empty})},
		rawEntry{"40000", "only", rawTree(t, dir, rawEntry{"100644", "one.txt", x})},
		rawEntry{"100755", "run.sh", script},
		rawEntry{"160000", "sub", subCommit},
	)
	p.plain = commitOf(t, dir, plain)

	dir = p.oddDir
	readme, script, x, f = blob(t, dir, "# readme\n"), blob(t, dir, "#!/bin/sh\n"), blob(t, dir, "x\n"), blob(t, dir, "f\n")
	target = blob(t, dir, "README.md")
	deep = rawTree(t, dir, rawEntry{"100644", "f.txt", f})
	// Trees git would not write: old modes, odd modes, unsorted entries.
	lib := rawTree(t, dir, rawEntry{"100664", "x", x}, rawEntry{"100644", "y", f})
	p.odd = commitOf(t, dir, rawTree(t, dir,
		rawEntry{"100664", "old.txt", x},
		rawEntry{"0", "weird", x},
		rawEntry{"040000", "dir", deep},
		rawEntry{"40000", "lib", lib},
		rawEntry{"100775", "group.sh", script},
		rawEntry{"100600", "private", x},
		rawEntry{"100644", "README.md", readme},
	))
	// Trees holding a path git refuses somewhere.
	p.dotGit = commitOf(t, dir, rawTree(t, dir, rawEntry{"100644", "ok", x},
		rawEntry{"40000", "deep", rawTree(t, dir, rawEntry{"40000", ".GIT", deep})}))
	p.linkModules = commitOf(t, dir, rawTree(t, dir, rawEntry{"120000", ".gitmodules", target}))
	p.linkAlias = commitOf(t, dir, rawTree(t, dir, rawEntry{"120000", "GITMOD~1", target}))
	p.linkBelow = commitOf(t, dir, rawTree(t, dir, rawEntry{"40000", ".gitmodules", rawTree(t, dir, rawEntry{"120000", "l", target})}))
	p.backslashGit = commitOf(t, dir, rawTree(t, dir, rawEntry{"100644", `a\.git`, x}))
	p.leadingBackslash = commitOf(t, dir, rawTree(t, dir, rawEntry{"100644", `\.git`, x}))
	p.spacedDotGit = commitOf(t, dir, rawTree(t, dir, rawEntry{"40000", "x", rawTree(t, dir, rawEntry{"40000", ".git. ", deep})}))
	p.fileModules = commitOf(t, dir, rawTree(t, dir, rawEntry{"100644", "gitmod~1", x}, rawEntry{"100644", ".gitmodules", x}))
	return p
}

// commitCase is a change TestCommitMatchesGit makes both ways.
type commitCase struct {
	name  string
	c     gitwrite.Change
	fsck  bool // the parent is well formed: fsck the result
	fails bool // both must fail
}

// caseGroup is a group of commit cases, a subtest of its own.
type caseGroup struct {
	name  string
	cases []commitCase
}

// commitCases are TestCommitMatchesGit's changes, in groups, on the
// parents p.
func commitCases(t *testing.T, p parents) []caseGroup {
	when := time.Date(2024, 5, 6, 7, 8, 9, 0, time.FixedZone("", 2*3600))
	who := gitwrite.Identity{Name: "Octo Cat", Email: "octo@example.com", When: when}
	add := func(parent, path string) gitwrite.Change {
		return gitwrite.Change{Parent: parent, Path: path, Content: []byte("new content\n"), Message: "add " + path + "\n", Author: who, Committer: who}
	}
	del := func(parent, path string) gitwrite.Change {
		return gitwrite.Change{Parent: parent, Path: path, Delete: true, Message: "remove " + path, Author: who, Committer: who}
	}
	with := func(c gitwrite.Change, fn func(*gitwrite.Change)) gitwrite.Change { fn(&c); return c }
	gitmodules := func(c *gitwrite.Change) {
		c.Content = []byte("[submodule \"sub\"]\n\tpath = sub\n\turl = https://example.com/sub.git\n")
	}
	at := func(s string) time.Time {
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	return []caseGroup{
		{name: "root commits", cases: []commitCase{
			{name: "root nested", c: add("", "a/b/c.txt"), fsck: true},
			{name: "root file", c: add("", "x"), fsck: true},
			{name: "root delete", c: del("", "x"), fsck: true},
			{name: "root empty content", c: with(add("", "empty.txt"), func(c *gitwrite.Change) { c.Content = []byte{} }), fsck: true},
			{name: "root binary", c: with(add("", "bin"), func(c *gitwrite.Change) { c.Content = []byte{0, 1, 2, 255, '\n', 0} }), fsck: true},
		}},
		{name: "writes into a tree with every kind of entry", cases: []commitCase{
			{name: "new at root", c: add(p.plain, "new.txt"), fsck: true},
			{name: "sorts before a directory", c: add(p.plain, "a.txt"), fsck: true},
			{name: "into a directory", c: add(p.plain, "a/y.txt"), fsck: true},
			{name: "new directories", c: add(p.plain, "docs/deep/new/x.txt"), fsck: true},
			{name: "update nested", c: add(p.plain, "docs/guide.md"), fsck: true},
			{name: "update at root", c: add(p.plain, "README.md"), fsck: true},
			{name: "same content", c: with(add(p.plain, "README.md"), func(c *gitwrite.Change) { c.Content = []byte("# readme\n") }), fsck: true},
			{name: "executable stays 100755", c: add(p.plain, "run.sh"), fsck: true},
			{name: "link becomes a file", c: add(p.plain, "link"), fsck: true},
			{name: "submodule becomes a file", c: add(p.plain, "sub"), fsck: true},
			{name: "beside an empty directory", c: add(p.plain, "keep/f.txt"), fsck: true},
			{name: "onto an empty directory", c: add(p.plain, "empty"), fsck: true},
			{name: "into an empty directory", c: add(p.plain, "empty/x"), fsck: true},
			{name: "into a directory of empty ones", c: add(p.plain, "nest/x"), fsck: true},
			{name: "gitmodules file", c: with(add(p.plain, ".gitmodules"), gitmodules), fsck: true},
			{name: "dotfile", c: add(p.plain, ".github/workflows/ci.yml"), fsck: true},
			{name: "colon and spaces", c: add(p.plain, "a:b/c d.txt"), fsck: true},
			{name: "non-ASCII", c: add(p.plain, "docs/ünï/日本.md"), fsck: true},
			{name: "below a file", c: add(p.plain, "README.md/x"), fails: true},
			{name: "below a link", c: add(p.plain, "link/x"), fails: true},
			{name: "below a submodule", c: add(p.plain, "sub/x"), fails: true},
			{name: "onto a directory", c: add(p.plain, "docs"), fails: true},
		}},
		{name: "paths git refuses", cases: []commitCase{
			{name: "dot git", c: add(p.plain, ".git/config"), fails: true},
			{name: "dot git any case", c: add(p.plain, "docs/.GiT"), fails: true},
			{name: "short name", c: add(p.plain, "git~1/x"), fails: true},
			{name: "dot git with dots and spaces", c: add(p.plain, "x/.git. /y"), fails: true},
			{name: "dot git stream", c: add(p.plain, ".git:stream"), fails: true},
			{name: "backslash dot git", c: add(p.plain, `a\.git`), fails: true},
			{name: "dot", c: add(p.plain, "a/./b"), fails: true},
			{name: "dot dot", c: add(p.plain, "a/../b"), fails: true},
			{name: "empty component", c: add(p.plain, "a//b"), fails: true},
			{name: "trailing slash", c: add(p.plain, "a/"), fails: true},
			{name: "empty path", c: add(p.plain, ""), fails: true},
			{name: "leading backslash", c: add(p.plain, `\.git`), fsck: false},
			{name: "gitmodules alias as a file", c: with(add(p.plain, "gi7eba~9"), gitmodules), fsck: true},
		}},
		{name: "deletions", cases: []commitCase{
			{name: "delete at root", c: del(p.plain, "README.md"), fsck: true},
			{name: "delete the last file of a directory", c: del(p.plain, "only/one.txt"), fsck: true},
			{name: "delete deep", c: del(p.plain, "docs/deep/f.txt"), fsck: true},
			{name: "delete a link", c: del(p.plain, "link"), fsck: true},
			{name: "delete a submodule", c: del(p.plain, "sub"), fsck: true},
			{name: "delete what is not there", c: del(p.plain, "missing.txt"), fsck: true},
			{name: "delete below what is not there", c: del(p.plain, "docs/missing/x"), fsck: true},
			{name: "delete below a file", c: del(p.plain, "README.md/x"), fsck: true},
			{name: "delete an empty directory", c: del(p.plain, "empty"), fsck: true},
			{name: "delete a path git refuses", c: del(p.plain, ".git/x"), fsck: true},
			{name: "delete a refused path at the root", c: del("", ".git"), fsck: true},
		}},
		{name: "parents git would not write", cases: []commitCase{
			{name: "odd modes rewritten", c: add(p.odd, "new.txt")},
			{name: "odd subtree rewritten", c: add(p.odd, "lib/z")},
			{name: "odd delete", c: del(p.odd, "old.txt")},
			{name: "odd untouched subtree", c: add(p.odd, "dir/g.txt")},
			{name: "a refused path deep in the parent", c: add(p.dotGit, "ok"), fails: true},
			{name: "a refused path, deleting", c: del(p.dotGit, "ok"), fails: true},
			{name: "link named .gitmodules", c: add(p.linkModules, "x"), fails: true},
			{name: "link named as .gitmodules on NTFS", c: add(p.linkAlias, "x"), fails: true},
			{name: "link below .gitmodules", c: add(p.linkBelow, "x"), fails: true},
			{name: "backslash dot git in the parent", c: add(p.backslashGit, "x"), fails: true},
			{name: "leading backslash in the parent", c: add(p.leadingBackslash, "x")},
			{name: "dot git with a dot and a space in the parent", c: add(p.spacedDotGit, "y"), fails: true},
			{name: "files named as .gitmodules", c: add(p.fileModules, "y"), fsck: false},
		}},
		{name: "identities, dates and messages", cases: []commitCase{
			{name: "crud around names", c: with(add(p.plain, "id"), func(c *gitwrite.Change) {
				c.Author = gitwrite.Identity{Name: " .Bot., ", Email: " <bot@example.com>; ", When: when}
				c.Committer = gitwrite.Identity{Name: "\"Q\" 'Tes'", Email: "<a<b>c>", When: when}
			}), fsck: false},
			{name: "newline in a name", c: with(add(p.plain, "id"), func(c *gitwrite.Change) { c.Author.Name = "A\nB" }), fsck: true},
			{name: "non-ASCII name", c: with(add(p.plain, "id"), func(c *gitwrite.Change) { c.Author.Name = "Zoë 山田" }), fsck: true},
			{name: "empty email", c: with(add(p.plain, "id"), func(c *gitwrite.Change) { c.Author.Email = "" })},
			{name: "empty name", c: with(add(p.plain, "id"), func(c *gitwrite.Change) { c.Committer.Name = "" }), fails: true},
			{name: "crud-only name", c: with(add(p.plain, "id"), func(c *gitwrite.Change) { c.Author.Name = " ..; " }), fails: true},
			{name: "NUL in a name", c: with(add(p.plain, "id"), func(c *gitwrite.Change) { c.Author.Name = "a\x00b" }), fails: true},
			{name: "NUL in the message", c: with(add(p.plain, "id"), func(c *gitwrite.Change) { c.Message = "a\x00b" }), fails: true},
			{name: "message without newline", c: with(add(p.plain, "id"), func(c *gitwrite.Change) { c.Message = "subject only" }), fsck: true},
			{name: "message with blank lines", c: with(add(p.plain, "id"), func(c *gitwrite.Change) { c.Message = "\n\nsubject\n\n\nbody\n\n" }), fsck: true},
			{name: "noncharacters", c: with(add(p.plain, "id"), func(c *gitwrite.Change) {
				c.Message = "x\uFFFE\uFFFF\uFDD0\U0001FFFF y\n"
				c.Author.Name = "N\uFDEF"
			}), fsck: true},
			{name: "bytes that are not UTF-8", c: with(add(p.plain, "id"), func(c *gitwrite.Change) {
				c.Message = "a\xff\xfeb\xc0\x80c\xed\xa0\x80d\xf4\x90\x80\x80e\xe2\x82\n"
				c.Committer.Email = "\xe9t\xe9@example.com"
			}), fsck: true},
			{name: "author and committer", c: with(add(p.plain, "id"), func(c *gitwrite.Change) {
				c.Author = gitwrite.Identity{Name: "Author", Email: "author@example.com", When: at("2020-02-29T12:00:00-08:00")}
			}), fsck: true},
			{name: "zone with minutes", c: with(add(p.plain, "id"), func(c *gitwrite.Change) { c.Author.When = at("2021-06-01T10:00:00+05:45") }), fsck: true},
			{name: "zone of 24 hours", c: with(add(p.plain, "id"), func(c *gitwrite.Change) { c.Author.When = at("2021-06-01T10:00:00+24:00") }), fsck: true},
			{name: "negative zero zone", c: with(add(p.plain, "id"), func(c *gitwrite.Change) { c.Author.When = at("2021-06-01T10:00:00-00:00") }), fsck: true},
			{name: "first date git reads", c: with(add(p.plain, "id"), func(c *gitwrite.Change) { c.Author.When = time.Unix(100000000, 0) }), fsck: true},
			{name: "date git does not read", c: with(add(p.plain, "id"), func(c *gitwrite.Change) { c.Author.When = time.Unix(99999999, 0) }), fails: true},
			{name: "last date git reads", c: with(add(p.plain, "id"), func(c *gitwrite.Change) { c.Committer.When = at("2099-12-31T23:59:59Z") }), fsck: true},
			{name: "2100", c: with(add(p.plain, "id"), func(c *gitwrite.Change) { c.Committer.When = at("2100-01-01T00:00:00Z") }), fails: true},
			{name: "before 1970", c: with(add(p.plain, "id"), func(c *gitwrite.Change) { c.Committer.When = at("1960-01-01T00:00:00Z") }), fails: true},
		}},
	}
}

// TestCommitMatchesGit makes each change in process and with git's
// commands, each in its own copy of one repository, and wants the same
// commit and blob SHAs, or both to fail; `git fsck --strict` must find
// nothing wrong with what the writer wrote on well-formed parents. The
// changes run in groups (root commits, deletions, ...), each change a
// subtest of its group.
func TestCommitMatchesGit(t *testing.T) {
	t.Parallel()
	p := setUp(t)
	for _, group := range commitCases(t, p) {
		t.Run(group.name, func(t *testing.T) {
			t.Parallel()
			for _, tc := range group.cases {
				t.Run(tc.name, func(t *testing.T) {
					t.Parallel()
					matchGit(t, p, tc)
				})
			}
		})
	}
}

// matchGit makes tc's change in process and with git, each in its own
// copy of the parent's repository, and compares what they wrote.
func matchGit(t *testing.T, p parents, tc commitCase) {
	ctx := context.Background()
	src := p.dir
	if tc.c.Parent != "" && tc.c.Parent != p.plain {
		src = p.oddDir
	}
	mine, theirs := copyRepo(t, src), copyRepo(t, src)
	commit, blob, err := gitwrite.Commit(ctx, mine, tc.c)
	wantCommit, wantBlob, wantErr := commitWithGit(ctx, theirs, tc.c)
	switch {
	case tc.fails && (err == nil || wantErr == nil):
		t.Fatalf("want both to fail: in process %s %v; git %s %v", commit, err, wantCommit, wantErr)
	case tc.fails:
		return
	case err != nil || wantErr != nil:
		t.Fatalf("in process: %v; git: %v", err, wantErr)
	}
	if commit != wantCommit || blob != wantBlob {
		t.Errorf("commit %s blob %s; git wrote commit %s blob %s", commit, blob, wantCommit, wantBlob)
		t.Logf("in process:\n%s\n%s", git(t, mine, nil, "cat-file", "-p", commit), git(t, mine, nil, "ls-tree", "-r", "-t", commit))
		t.Logf("git:\n%s\n%s", git(t, theirs, nil, "cat-file", "-p", wantCommit), git(t, theirs, nil, "ls-tree", "-r", "-t", wantCommit))
	}
	if tc.fsck {
		// Point a branch at the commit so that fsck walks it.
		git(t, mine, nil, "update-ref", "HEAD", commit)
		if out, err := exec.Command("git", "--git-dir="+mine, "fsck", "--strict", "--no-dangling", "--no-progress").CombinedOutput(); err != nil || len(out) > 0 {
			t.Errorf("git fsck: %v\n%s", err, out)
		}
	}
}

// TestCommitChainMatchesGit makes a history of changes, each on the
// commit before, in process and with git, and wants the same commit at
// every step (the writer remembers what it learnt of earlier trees).
func TestCommitChainMatchesGit(t *testing.T) {
	t.Parallel()
	mine, theirs := initRepo(t), initRepo(t)
	ctx := context.Background()
	steps := []struct {
		path string
		del  bool
	}{
		{path: "README.md"}, {path: "src/main.go"}, {path: "src/util/strings.go"}, {path: "docs/a.md"},
		{path: "src/main.go"}, {path: "src/util/strings.go", del: true}, {path: "src/util/ints.go"},
		{path: "docs/a.md", del: true}, {path: "docs/b/c/d.md"}, {path: "src-x"}, {path: "src.x"},
		{path: "src/util/ints.go", del: true}, {path: "docs/b/c/d.md", del: true}, {path: "README.md", del: true},
		{path: "src/main.go", del: true}, {path: "src-x", del: true}, {path: "src.x", del: true}, {path: "again"},
	}
	var mineHead, theirHead string
	for i, s := range steps {
		who := gitwrite.Identity{Name: "Step", Email: "step@example.com", When: time.Unix(1700000000+int64(i)*3600, 0).In(time.FixedZone("", -7*3600))}
		c := gitwrite.Change{Path: s.path, Delete: s.del, Message: fmt.Sprintf("step %d\n", i), Author: who, Committer: who}
		if !s.del {
			c.Content = fmt.Appendf(nil, "%s at step %d\n", s.path, i)
		}
		c.Parent = mineHead
		got, _, err := gitwrite.Commit(ctx, mine, c)
		if err != nil {
			t.Fatalf("step %d in process: %v", i, err)
		}
		c.Parent = theirHead
		want, _, err := commitWithGit(ctx, theirs, c)
		if err != nil {
			t.Fatalf("step %d with git: %v", i, err)
		}
		if got != want {
			t.Fatalf("step %d (%s): commit %s, git wrote %s", i, s.path, got, want)
		}
		mineHead, theirHead = got, want
	}
	git(t, mine, nil, "update-ref", "HEAD", mineHead)
	if out, err := exec.Command("git", "--git-dir="+mine, "fsck", "--strict", "--no-dangling", "--no-progress").CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("git fsck: %v\n%s", err, out)
	}
}
