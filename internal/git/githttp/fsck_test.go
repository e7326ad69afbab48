package githttp_test

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"testing"
)

// rawTree writes a tree of the given entries (mode, name, object) into the
// client's repository byte by byte, as git's own tools would refuse to,
// and returns a commit of it on top of HEAD.
func (c *client) rawCommit(entries [][3]string) string {
	c.t.Helper()
	sort.Slice(entries, func(i, j int) bool { return entries[i][1] < entries[j][1] })
	var tree bytes.Buffer
	for _, e := range entries {
		raw, err := hex.DecodeString(e[2])
		if err != nil {
			c.t.Fatal(err)
		}
		fmt.Fprintf(&tree, "%s %s\x00%s", e[0], e[1], raw)
	}
	sha := c.stdin(tree.String(), "hash-object", "-t", "tree", "-w", "--literally", "--stdin")
	return c.git("commit-tree", sha, "-p", "HEAD", "-m", "raw tree")
}

// stdin runs git with input and returns its output; it fails the test on error.
func (c *client) stdin(input string, args ...string) string {
	c.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env, cmd.Stdin = c.dir, c.env, strings.NewReader(input)
	out, err := cmd.Output()
	if err != nil {
		c.t.Fatalf("git %v: %v", args, err)
	}
	return strings.TrimSpace(string(out))
}

// TestPushesAreCheckedByFsck: a push whose trees hold what git's fsck
// refuses (".git" in its case, NTFS and HFS+ spellings, "..", a
// .gitmodules that does not parse or names a dangerous url) is refused
// with git's message and moves nothing; legacy quirks the platform
// accepts (zero-padded and 100664 modes) and names fsck does not check
// (backslashes, control characters) still push.
func TestPushesAreCheckedByFsck(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := newClient(t, "a")
	a.git("init", "-q", a.dir)
	a.commit("base", map[string]string{"README.md": "hello\n"})
	a.git("push", "-q", h.url, "main")
	blob := a.stdin("x\n", "hash-object", "-w", "--stdin")
	modules := func(content string) string { return a.stdin(content, "hash-object", "-w", "--stdin") }

	for _, tc := range []struct {
		name    string
		entries [][3]string
		message string // "" when the push is accepted
	}{
		{".GIT", [][3]string{{"100644", ".GIT", blob}}, "hasDotgit"},
		{"git~1", [][3]string{{"100644", "GIT~1", blob}}, "hasDotgit"},
		{".git.", [][3]string{{"100644", ".git.", blob}}, "hasDotgit"},
		{"HFS+ .git", [][3]string{{"100644", ".g\u200cit", blob}}, "hasDotgit"},
		{"..", [][3]string{{"100644", "..", blob}}, "hasDotdot"},
		{"a/b", [][3]string{{"100644", "a/b", blob}}, "fullPathname"},
		{"unparsable .gitmodules", [][3]string{{"100644", ".gitmodules", modules("[submodule \"x\"\npath = x\n")}}, "gitmodulesParse"},
		{"option url", [][3]string{{"100644", ".gitmodules", modules("[submodule \"x\"]\n\tpath = x\n\turl = --upload-pack=touch\n")}}, "gitmodulesUrl"},
		{"zero-padded mode", [][3]string{{"0100644", "padded", blob}}, ""},
		{"mode 100664", [][3]string{{"100664", "group-writable", blob}}, ""},
		{"backslashes and a tab", [][3]string{{"100644", `..\..\x`, blob}, {"100644", "a\tb", blob}}, ""},
	} {
		commit := a.rawCommit(tc.entries)
		before, _, _ := a.run("ls-remote", h.url, "refs/heads/main")
		_, stderr, err := a.run("push", h.url, commit+":refs/heads/main")
		after, _, _ := a.run("ls-remote", h.url, "refs/heads/main")
		if tc.message == "" {
			if err != nil {
				t.Errorf("%s: push refused: %v\n%s", tc.name, err, stderr)
			}
			a.git("reset", "-q", "--soft", commit)
			continue
		}
		if err == nil || after != before {
			t.Errorf("%s: push accepted (%s -> %s)", tc.name, before, after)
			continue
		}
		if !strings.Contains(stderr, "remote: error: object ") || !strings.Contains(stderr, ": "+tc.message+": ") ||
			!strings.Contains(stderr, "(unpacker error)") {
			t.Errorf("%s: git's refusal lacks %q:\n%s", tc.name, tc.message, stderr)
		}
	}
}
