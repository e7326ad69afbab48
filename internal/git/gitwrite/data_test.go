package gitwrite_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"forgeapi/internal/git/gitwrite"
)

// The git data writes are held to git's plumbing: the same input gives
// the same object (SHA) as hash-object, update-index + write-tree,
// mktree, commit-tree (signed too) and mktag.

func TestWriteBlobAsHashObject(t *testing.T) {
	dir := initRepo(t)
	for _, content := range []string{"", "hello\n", "\x00\xff binary", strings.Repeat("x", 100000)} {
		got, err := gitwrite.WriteBlob(dir, []byte(content))
		if err != nil {
			t.Fatal(err)
		}
		if want := git(t, dir, []byte(content), "hash-object", "--stdin"); got != want {
			t.Errorf("blob %.20q: %s, git %s", content, got, want)
		}
		if typ := git(t, dir, nil, "cat-file", "-t", got); typ != "blob" {
			t.Errorf("blob %s not stored: %s", got, typ)
		}
	}
}

// treeWithGit is the tree git's index makes of base with the edits:
// read-tree, update-index --cacheinfo or --force-remove, read-tree
// (a directory's files one by one), write-tree.
func treeWithGit(t *testing.T, dir, base string, edits []gitwrite.TreeEdit) string {
	t.Helper()
	index := filepath.Join(t.TempDir(), "index")
	run := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Env = append(os.Environ(), "GIT_DIR="+dir, "GIT_INDEX_FILE="+index, "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v %s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if base != "" {
		run("read-tree", base)
	} else {
		run("read-tree", "--empty")
	}
	for _, e := range edits {
		switch {
		case e.Delete:
			run("rm", "--cached", "-r", "-q", "--ignore-unmatch", "--", e.Path)
		case e.Mode == gitwrite.ModeDir:
			run("rm", "--cached", "-r", "-q", "--ignore-unmatch", "--", e.Path)
			for _, line := range strings.Split(run("ls-tree", "-r", e.SHA), "\n") {
				info, name, _ := strings.Cut(line, "\t")
				f := strings.Fields(info)
				run("update-index", "--add", "--cacheinfo", f[0]+","+f[2]+","+e.Path+"/"+name)
			}
		default:
			run("update-index", "--add", "--replace", "--cacheinfo", formatOctal(e.Mode)+","+e.SHA+","+e.Path)
		}
	}
	return run("write-tree")
}

func formatOctal(m uint32) string {
	var b []byte
	for m > 0 {
		b = append([]byte{byte('0' + m&7)}, b...)
		m >>= 3
	}
	return string(b)
}

func TestWriteTreeAsGit(t *testing.T) {
	ctx := context.Background()
	dir := initRepo(t)
	a, b, c := blob(t, dir, "a\n"), blob(t, dir, "b\n"), blob(t, dir, "c\n")
	lib := rawTree(t, dir, rawEntry{"100644", "x.go", a}, rawEntry{"100755", "y.sh", b})
	base := rawTree(t, dir,
		rawEntry{"100644", "README.md", a},
		rawEntry{"40000", "docs", rawTree(t, dir, rawEntry{"40000", "deep", rawTree(t, dir, rawEntry{"100644", "f.txt", c})}, rawEntry{"100644", "guide.md", b})},
		rawEntry{"40000", "lib", lib},
		rawEntry{"120000", "link", blob(t, dir, "README.md")},
		rawEntry{"100755", "run.sh", b},
	)
	sub := strings.Repeat("ab", 20)
	cases := map[string]struct {
		base  string
		edits []gitwrite.TreeEdit
	}{
		"new file at the root": {base, []gitwrite.TreeEdit{{Path: "NEW", Mode: gitwrite.ModeFile, SHA: c}}},
		"replace a file":       {base, []gitwrite.TreeEdit{{Path: "README.md", Mode: gitwrite.ModeFile, SHA: b}}},
		"executable":           {base, []gitwrite.TreeEdit{{Path: "README.md", Mode: gitwrite.ModeExec, SHA: b}}},
		"nested new path":      {base, []gitwrite.TreeEdit{{Path: "a/b/c/d.txt", Mode: gitwrite.ModeFile, SHA: c}}},
		"nested existing path": {base, []gitwrite.TreeEdit{{Path: "docs/deep/g.txt", Mode: gitwrite.ModeFile, SHA: a}}},
		"delete":               {base, []gitwrite.TreeEdit{{Path: "run.sh", Delete: true}, {Path: "docs/guide.md", Delete: true}}},
		"delete the last file": {base, []gitwrite.TreeEdit{{Path: "docs/deep/f.txt", Delete: true}}},
		"delete what is not":   {base, []gitwrite.TreeEdit{{Path: "nope/x", Delete: true}, {Path: "none", Delete: true}}},
		"a tree by sha":        {base, []gitwrite.TreeEdit{{Path: "vendor/lib", Mode: gitwrite.ModeDir, SHA: lib}}},
		"a submodule":          {base, []gitwrite.TreeEdit{{Path: "ext/sub", Mode: gitwrite.ModeGitlink, SHA: sub}}},
		"a symlink":            {base, []gitwrite.TreeEdit{{Path: "docs/l", Mode: gitwrite.ModeSymlink, SHA: a}}},
		"order of names":       {base, []gitwrite.TreeEdit{{Path: "lib.go", Mode: gitwrite.ModeFile, SHA: a}, {Path: "lib-x", Mode: gitwrite.ModeFile, SHA: a}, {Path: "lib0", Mode: gitwrite.ModeFile, SHA: a}}},
		"set then delete":      {base, []gitwrite.TreeEdit{{Path: "x/y", Mode: gitwrite.ModeFile, SHA: a}, {Path: "x/y", Delete: true}}},
		"no base":              {"", []gitwrite.TreeEdit{{Path: "a/b.txt", Mode: gitwrite.ModeFile, SHA: a}, {Path: "c", Mode: gitwrite.ModeExec, SHA: b}, {Path: "a/lib", Mode: gitwrite.ModeDir, SHA: lib}}},
		"empty":                {"", nil},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := gitwrite.WriteTree(ctx, dir, tc.base, tc.edits)
			if err != nil {
				t.Fatal(err)
			}
			if want := treeWithGit(t, dir, tc.base, tc.edits); got != want {
				t.Errorf("tree %s, git %s\n%s", got, want, git(t, dir, nil, "ls-tree", "-r", "-t", got))
			}
			git(t, dir, nil, "ls-tree", "-r", got) // every tree written is there
		})
	}
}

func TestWriteTreeAsMktree(t *testing.T) {
	dir := initRepo(t)
	a := blob(t, dir, "a\n")
	lib := rawTree(t, dir, rawEntry{"100644", "x.go", a})
	edits := []gitwrite.TreeEdit{
		{Path: "z", Mode: gitwrite.ModeFile, SHA: a}, {Path: "run", Mode: gitwrite.ModeExec, SHA: a},
		{Path: "lib", Mode: gitwrite.ModeDir, SHA: lib}, {Path: "lib.c", Mode: gitwrite.ModeFile, SHA: a},
		{Path: "link", Mode: gitwrite.ModeSymlink, SHA: a}, {Path: "sub", Mode: gitwrite.ModeGitlink, SHA: strings.Repeat("cd", 20)},
	}
	got, err := gitwrite.WriteTree(context.Background(), dir, "", edits)
	if err != nil {
		t.Fatal(err)
	}
	var in strings.Builder
	for _, e := range edits {
		typ := map[uint32]string{gitwrite.ModeDir: "tree", gitwrite.ModeGitlink: "commit"}[e.Mode]
		if typ == "" {
			typ = "blob"
		}
		in.WriteString(formatOctal(e.Mode) + " " + typ + " " + e.SHA + "\t" + e.Path + "\n")
	}
	if want := git(t, dir, []byte(in.String()), "mktree", "--missing"); got != want {
		t.Errorf("tree %s, git mktree %s", got, want)
	}
}

func TestWriteTreeRefuses(t *testing.T) {
	dir := initRepo(t)
	a := blob(t, dir, "a\n")
	for name, e := range map[string]gitwrite.TreeEdit{
		".git":            {Path: "x/.git/config", Mode: gitwrite.ModeFile, SHA: a},
		"leading /":       {Path: "/x", Mode: gitwrite.ModeFile, SHA: a},
		"double /":        {Path: "a//b", Mode: gitwrite.ModeFile, SHA: a},
		"dot dot":         {Path: "a/../b", Mode: gitwrite.ModeFile, SHA: a},
		"bad mode":        {Path: "a", Mode: 0o100664, SHA: a},
		"bad sha":         {Path: "a", Mode: gitwrite.ModeFile, SHA: "xyz"},
		"gitmodules link": {Path: ".gitmodules", Mode: gitwrite.ModeSymlink, SHA: a},
	} {
		_, err := gitwrite.WriteTree(context.Background(), dir, "", []gitwrite.TreeEdit{e})
		if _, ok := errors.AsType[*gitwrite.Refusal](err); !ok {
			t.Errorf("%s: %v, want a refusal", name, err)
		}
	}
	if _, err := gitwrite.WriteTree(context.Background(), dir, a, nil); err == nil {
		t.Error("a blob as base tree: no error")
	}
}

func TestWriteCommitAsCommitTree(t *testing.T) {
	ctx := context.Background()
	dir := initRepo(t)
	tree := rawTree(t, dir, rawEntry{"100644", "a", blob(t, dir, "a\n")})
	p1, p2 := commitOf(t, dir, tree), git(t, dir, []byte("other\n"), "commit-tree", tree, "-m", "two")
	zone := time.FixedZone("", 9*3600+30*60)
	author := gitwrite.Identity{Name: "Ada Lovelace", Email: "ada@example.com", When: time.Date(2024, 5, 6, 7, 8, 9, 0, zone)}
	committer := gitwrite.Identity{Name: "Bot", Email: "bot@example.com", When: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}
	for name, c := range map[string]gitwrite.NewCommit{
		"root":          {Tree: tree, Message: "root\n"},
		"one parent":    {Tree: tree, Parents: []string{p1}, Message: "no newline at the end"},
		"merge":         {Tree: tree, Parents: []string{p1, p2}, Message: "merge\n\nbody\n"},
		"unicode":       {Tree: tree, Parents: []string{p2}, Message: "héllo ✓\n"},
		"empty message": {Tree: tree, Parents: []string{p1}},
	} {
		t.Run(name, func(t *testing.T) {
			c.Author, c.Committer = author, committer
			got, err := gitwrite.WriteCommit(ctx, dir, c)
			if err != nil {
				t.Fatal(err)
			}
			args := []string{"commit-tree", c.Tree}
			for _, p := range c.Parents {
				args = append(args, "-p", p)
			}
			cmd := exec.Command("git", args...)
			cmd.Env = append(os.Environ(), "GIT_DIR="+dir, "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir,
				"GIT_AUTHOR_NAME="+author.Name, "GIT_AUTHOR_EMAIL="+author.Email, "GIT_AUTHOR_DATE="+rawDate(author.When),
				"GIT_COMMITTER_NAME="+committer.Name, "GIT_COMMITTER_EMAIL="+committer.Email, "GIT_COMMITTER_DATE="+rawDate(committer.When))
			cmd.Stdin = strings.NewReader(c.Message)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("git commit-tree: %v %s", err, out)
			}
			if want := strings.TrimSpace(string(out)); got != want {
				t.Errorf("commit %s, git %s", got, want)
			}
		})
	}
}

// TestWriteCommitSignedAsGit: a commit git signs (an SSH signature, which
// git writes in the same gpgsig header as a PGP one), written again from
// its parts and its signature, is the same commit.
func TestWriteCommitSignedAsGit(t *testing.T) {
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Skip("no ssh-keygen")
	}
	dir := initRepo(t)
	key := filepath.Join(t.TempDir(), "key")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v %s", err, out)
	}
	tree := rawTree(t, dir, rawEntry{"100644", "a", blob(t, dir, "a\n")})
	parent := commitOf(t, dir, tree)
	signed := git(t, dir, []byte("signed\n"), "-c", "gpg.format=ssh", "-c", "user.signingkey="+key, "commit-tree", "-S", tree, "-p", parent)
	raw := git(t, dir, nil, "cat-file", "commit", signed)
	_, after, ok := strings.Cut(raw, "gpgsig ")
	if !ok {
		t.Fatalf("git wrote no signature:\n%s", raw)
	}
	sig, _, _ := strings.Cut(after, "\n\n")
	sig = strings.ReplaceAll(sig, "\n ", "\n")
	setup := gitwrite.Identity{Name: "Setup", Email: "setup@example.com", When: time.Unix(1700000000, 0).UTC()}
	got, err := gitwrite.WriteCommit(context.Background(), dir, gitwrite.NewCommit{Tree: tree, Parents: []string{parent},
		Author: setup, Committer: setup, Message: "signed\n", Signature: sig})
	if err != nil {
		t.Fatal(err)
	}
	if got != signed {
		t.Errorf("commit %s, git signed %s\n%s", got, signed, raw)
	}
}

func TestWriteTagAsMktag(t *testing.T) {
	dir := initRepo(t)
	tree := rawTree(t, dir, rawEntry{"100644", "a", blob(t, dir, "a\n")})
	commit := commitOf(t, dir, tree)
	tagger := gitwrite.Identity{Name: "Tagger", Email: "t@example.com", When: time.Date(2024, 1, 2, 3, 4, 5, 0, time.FixedZone("", -5*3600))}
	for name, tag := range map[string]gitwrite.NewTag{
		"commit": {Object: commit, Type: "commit", Name: "v1.0.0", Message: "release 1.0.0\n"},
		"tree":   {Object: tree, Type: "tree", Name: "trees/t", Message: "a tree\n\nwith a body\n"},
	} {
		t.Run(name, func(t *testing.T) {
			tag.Tagger = tagger
			got, err := gitwrite.WriteTag(dir, tag)
			if err != nil {
				t.Fatal(err)
			}
			in := "object " + tag.Object + "\ntype " + tag.Type + "\ntag " + tag.Name + "\ntagger Tagger <t@example.com> " + rawDate(tagger.When) + "\n\n" + tag.Message
			if want := git(t, dir, []byte(in), "mktag"); got != want {
				t.Errorf("tag %s, git mktag %s", got, want)
			}
		})
	}
	if _, err := gitwrite.WriteTag(dir, gitwrite.NewTag{Object: commit, Type: "nope", Name: "x", Tagger: tagger}); err == nil {
		t.Error("a bad type: no error")
	}
}
