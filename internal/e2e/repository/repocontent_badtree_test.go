package repository_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"testing"

	"forgeapi/internal/apptest"
)

// badNames are tree entry names that the contents API and pushes now
// refuse, but that a repository may hold from before (or from a push
// that bypassed the checks): written here with git's plumbing straight
// into the bare repository.
var badNames = []string{`..\..\pwn3`, `C:\x`, "a\tb", "a\nb", "c\rd", "e\x01f", ".GIT", "git~1", ".git.", ".g\u200cit", "..."}

// TestRepositoryHoldingRefusedPathsReadsNormally: compare, commits,
// contents, trees and a pull request's files answer normally (never a
// 500) for a branch whose tree holds names the server refuses today
// (written before those checks, or by plumbing).
func TestRepositoryHoldingRefusedPathsReadsNormally(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octo := env.User("octo")
	repo := env.Repo(octo, "hello")
	token := env.Token(octo, "repo")
	work := apptest.WorkTree(t, map[string]string{"README.md": "hello\n"})
	apptest.Git(t, work, "push", "-q", env.GitURL("octo", "hello", "octo", token), "HEAD:refs/heads/main")

	dir := env.App.Repos.GitDir(repo.ID)
	gitIn := func(stdin string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"--git-dir=" + dir}, args...)...)
		cmd.Env = apptest.GitEnv(t.TempDir())
		cmd.Stdin = strings.NewReader(stdin)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %v: %v %s", args, err, stderr.String())
		}
		return strings.TrimSpace(string(out))
	}
	blob := gitIn("pwned\n", "hash-object", "-w", "--stdin")
	main := gitIn("", "rev-parse", "main")
	// A tree git's own tools would refuse to write: built byte by byte.
	var tree bytes.Buffer
	entries := append([]string{"README.md"}, badNames...)
	for _, name := range sortedTreeNames(entries) {
		raw, _ := hexBytes(blob)
		fmt.Fprintf(&tree, "100644 %s\x00%s", name, raw)
	}
	treeSHA := gitIn(tree.String(), "hash-object", "-t", "tree", "-w", "--literally", "--stdin")
	bad := gitIn("add refused names\n", "commit-tree", treeSHA, "-p", main)
	gitIn("", "update-ref", "refs/heads/bad", bad)

	resp, body := env.DoJSON("POST", "/repos/octo/hello/pulls", token, `{"title":"t","head":"bad","base":"main"}`)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("open a pull request of the branch: %d %s", resp.StatusCode, body)
	}
	for _, path := range []string{
		"/repos/octo/hello/compare/main...bad",
		"/repos/octo/hello/compare/bad...main",
		"/repos/octo/hello/commits/bad",
		"/repos/octo/hello/commits?sha=bad",
		"/repos/octo/hello/commits?sha=bad&path=" + url.QueryEscape("a\tb"),
		"/repos/octo/hello/contents/?ref=bad",
		"/repos/octo/hello/contents/" + url.PathEscape(`C:\x`) + "?ref=bad",
		"/repos/octo/hello/contents/" + url.PathEscape("a\nb") + "?ref=bad",
		"/repos/octo/hello/git/trees/" + treeSHA + "?recursive=1",
		"/repos/octo/hello/git/commits/" + bad,
		"/repos/octo/hello/pulls/1",
		"/repos/octo/hello/pulls/1/files",
		"/repos/octo/hello/pulls/1/commits",
		"/repos/octo/hello/branches/bad",
	} {
		resp, body := env.Do("GET", path, token, nil)
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %d %.300s", path, resp.StatusCode, body)
		}
	}
	for _, path := range []string{"/repos/octo/hello/compare/main...bad", "/repos/octo/hello/commits/bad"} {
		resp, body := env.Do("GET", path, token, nil, "Accept", "application/vnd.github.diff")
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s as a diff: %d %.300s", path, resp.StatusCode, body)
		}
	}
}

// sortedTreeNames sorts names as git sorts the entries of a tree (all
// files here: byte order).
func sortedTreeNames(names []string) []string {
	out := append([]string(nil), names...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func hexBytes(s string) ([]byte, error) {
	b := make([]byte, len(s)/2)
	_, err := fmt.Sscanf(s, "%x", &b)
	return b, err
}
