package repository_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// TestContentsWrites creates, updates and deletes files with go-github as
// a bot does: each write is one commit on the branch, visible to git
// clone, recorded as a push (PushEvent), with the sha guard (409) and
// the platform's validation (422).
func TestContentsWrites(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo", apptest.UserOpts{Email: "octo@example.com"})
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo")
	c := env.Client(token)

	// The first write into an empty repository makes its first commit.
	created, resp, err := c.Repositories.CreateFile(ctx, "octo", "hello", "docs/hello.md", &github.RepositoryContentFileOptions{
		Message: github.Ptr("Add hello"), Content: []byte("hello\n")})
	apptest.Must(t, "create", err)
	if resp.StatusCode != http.StatusCreated || created.GetContent().GetPath() != "docs/hello.md" ||
		created.Commit.GetMessage() != "Add hello" || created.Commit.GetAuthor().GetEmail() != "octo@example.com" {
		t.Fatalf("create: %d %+v", resp.StatusCode, created)
	}
	blob := created.GetContent().GetSHA()

	// Update needs the file's sha: none is a 422, a wrong one a 409.
	if _, resp, _ := c.Repositories.UpdateFile(ctx, "octo", "hello", "docs/hello.md", &github.RepositoryContentFileOptions{
		Message: github.Ptr("no sha"), Content: []byte("x\n")}); apptest.ResponseStatus(resp) != http.StatusUnprocessableEntity {
		t.Fatalf("update without sha: %d", apptest.ResponseStatus(resp))
	}
	if _, resp, _ := c.Repositories.UpdateFile(ctx, "octo", "hello", "docs/hello.md", &github.RepositoryContentFileOptions{
		Message: github.Ptr("wrong sha"), Content: []byte("x\n"), SHA: github.Ptr(strings.Repeat("a", 40))}); apptest.ResponseStatus(resp) != http.StatusConflict {
		t.Fatalf("update with a wrong sha: %d", apptest.ResponseStatus(resp))
	}
	updated, resp, err := c.Repositories.UpdateFile(ctx, "octo", "hello", "docs/hello.md", &github.RepositoryContentFileOptions{
		Message: github.Ptr("Update hello"), Content: []byte("hello again\n"), SHA: github.Ptr(blob),
		Author: &github.CommitAuthor{Name: github.Ptr("Bot"), Email: github.Ptr("bot@example.com")}})
	apptest.Must(t, "update", err)
	if resp.StatusCode != http.StatusOK || updated.Commit.GetAuthor().GetName() != "Bot" || len(updated.Commit.Parents) != 1 {
		t.Fatalf("update: %d %+v", resp.StatusCode, updated.Commit)
	}
	file, _, _, err := c.Repositories.GetContents(ctx, "octo", "hello", "docs/hello.md", nil)
	apptest.Must(t, "read back", err)
	if got, _ := file.GetContent(); got != "hello again\n" {
		t.Fatalf("read back %q", got)
	}

	// git sees the API's commits; the API sees git's.
	clone := filepath.Join(t.TempDir(), "c")
	apptest.Git(t, filepath.Dir(clone), "clone", "-q", env.GitURL("octo", "hello", "octo", token), clone)
	if data, err := os.ReadFile(filepath.Join(clone, "docs/hello.md")); err != nil || string(data) != "hello again\n" {
		t.Fatalf("clone: %q %v", data, err)
	}
	apptest.Commit(t, clone, "from git", map[string]string{"from-git.txt": "g\n"})
	apptest.Git(t, clone, "push", "-q", "origin", "HEAD:refs/heads/main")
	if _, _, _, err := c.Repositories.GetContents(ctx, "octo", "hello", "from-git.txt", nil); err != nil {
		t.Fatalf("the API does not see git's push: %v", err)
	}

	// A write based on a stale head still applies on the current one (the
	// sha guards the file, not the branch).
	_, _, err = c.Repositories.DeleteFile(ctx, "octo", "hello", "docs/hello.md", &github.RepositoryContentFileOptions{
		Message: github.Ptr("Remove hello"), SHA: github.Ptr(updated.GetContent().GetSHA())})
	apptest.Must(t, "delete", err)
	if _, _, resp, _ := c.Repositories.GetContents(ctx, "octo", "hello", "docs/hello.md", nil); apptest.ResponseStatus(resp) != http.StatusNotFound {
		t.Fatalf("deleted file: %d", apptest.ResponseStatus(resp))
	}
	if _, resp, _ := c.Repositories.DeleteFile(ctx, "octo", "hello", "docs/hello.md", &github.RepositoryContentFileOptions{
		Message: github.Ptr("again"), SHA: github.Ptr(blob)}); apptest.ResponseStatus(resp) != http.StatusNotFound {
		t.Fatalf("delete of a missing file: %d", apptest.ResponseStatus(resp))
	}
	for _, body := range []string{`{"content":"aGk="}`, `{"message":"m","content":"not base64!"}`, `{"message":"m"}`} {
		if resp, b := env.DoJSON("PUT", "/repos/octo/hello/contents/x.txt", token, body); resp.StatusCode != http.StatusUnprocessableEntity {
			t.Errorf("PUT %s: %d %s", body, resp.StatusCode, b)
		}
	}
	// Paths git refuses, and a path that would be both a file and a
	// directory, are the client's error, and move nothing.
	if resp, b := env.DoJSON("PUT", "/repos/octo/hello/contents/tree/leaf.txt", token, `{"message":"m","content":"aGk="}`); resp.StatusCode != http.StatusCreated {
		t.Fatalf("create tree/leaf.txt: %d %s", resp.StatusCode, b)
	}
	head := apptest.Git(t, clone, "ls-remote", "origin", "refs/heads/main")
	for _, path := range []string{".git/config", "a/.GIT/b", "tree", "tree/leaf.txt/below"} {
		if resp, b := env.DoJSON("PUT", "/repos/octo/hello/contents/"+path, token, `{"message":"m","content":"aGk="}`); resp.StatusCode != http.StatusUnprocessableEntity {
			t.Errorf("PUT %s: %d %s, want 422", path, resp.StatusCode, b)
		}
	}
	if after := apptest.Git(t, clone, "ls-remote", "origin", "refs/heads/main"); after != head {
		t.Fatalf("a refused write moved the branch: %s -> %s", head, after)
	}
	if resp, _ := env.DoJSON("PUT", "/repos/octo/hello/contents/x.txt", token, `{"message":"m","content":"aGk=","branch":"nope"}`); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown branch: %d", resp.StatusCode)
	}
	if resp, _ := env.DoJSON("PUT", "/repos/octo/hello/contents/x.txt", env.Token(env.User("reader"), "repo"), `{"message":"m","content":"aGk="}`); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a reader writes: %d", resp.StatusCode)
	}

	// Each write is a push in the feed, with the caller as actor.
	events, _, err := c.Activity.ListRepositoryEvents(ctx, "octo", "hello", &github.ListOptions{PerPage: 100})
	apptest.Must(t, "events", err)
	pushes := 0
	for _, e := range events {
		if e.GetType() == "PushEvent" && e.GetActor().GetLogin() == "octo" {
			pushes++
		}
	}
	if pushes != 5 { // create, update, git push, delete, tree/leaf.txt
		t.Fatalf("%d PushEvents, want 5", pushes)
	}
}

// TestContentsWriteObjectsAreGits: the blob, trees and commit a contents
// write makes are the ones git's own commands make of the same content,
// identities, dates and message (the same SHAs: git hash-object, git
// mktree and git commit-tree in a repository of their own; the commit
// without the web-flow signature the server adds), for a first commit, a
// commit on it and a deletion, and git fsck finds nothing wrong in the
// server's repository afterwards.
func TestContentsWriteObjectsAreGits(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo", apptest.UserOpts{Email: "octo@example.com"})
	repo := env.Repo(octo, "objects")
	c := env.Client(env.Token(octo, "repo"))

	// git's side: a repository that never sees the server's objects.
	scratch := t.TempDir()
	gitIn := func(stdin string, extraEnv []string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Env = append(apptest.GitEnv(scratch), append([]string{"GIT_DIR=" + scratch}, extraEnv...)...)
		cmd.Stdin = strings.NewReader(stdin)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %v: %v %s", args, err, stderr.String())
		}
		return strings.TrimSpace(string(out))
	}
	gitIn("", nil, "init", "-q", "--bare", scratch)
	author := &github.CommitAuthor{Name: github.Ptr(" Bot "), Email: github.Ptr("bot@example.com"),
		Date: &github.Timestamp{Time: time.Date(2024, 5, 6, 7, 8, 9, 0, time.FixedZone("", 2*3600))}}
	committer := &github.CommitAuthor{Name: github.Ptr("Zoë Committer"), Email: github.Ptr("zoe@example.com"),
		Date: &github.Timestamp{Time: time.Date(2024, 5, 6, 9, 30, 0, 0, time.FixedZone("", -(5*3600+30*60)))}}
	identities := []string{
		"GIT_AUTHOR_NAME= Bot ", "GIT_AUTHOR_EMAIL=bot@example.com", "GIT_AUTHOR_DATE=2024-05-06T07:08:09+02:00",
		"GIT_COMMITTER_NAME=Zoë Committer", "GIT_COMMITTER_EMAIL=zoe@example.com", "GIT_COMMITTER_DATE=2024-05-06T09:30:00-05:30",
	}
	dir := env.App.Repos.GitDir(repo.ID)
	// unsigned is the SHA of the server's commit without its web-flow
	// signature (the gpgsig header, which it must have).
	unsigned := func(sha string) string {
		t.Helper()
		raw := apptest.Git(t, scratch, "--git-dir="+dir, "cat-file", "commit", sha)
		head, body, _ := strings.Cut(raw, "\n\n")
		var kept []string
		signed := false
		for _, line := range strings.Split(head, "\n") {
			switch {
			case strings.HasPrefix(line, "gpgsig "):
				signed = true
			case signed && strings.HasPrefix(line, " "):
			default:
				kept = append(kept, line)
			}
		}
		if !signed {
			t.Errorf("commit %s is not signed", sha)
		}
		return gitIn(strings.Join(kept, "\n")+"\n\n"+body, nil, "hash-object", "-t", "commit", "--stdin")
	}
	check := func(what string, res *github.RepositoryContentResponse, blob, tree, commit string) {
		t.Helper()
		if blob != "" && res.GetContent().GetSHA() != blob {
			t.Errorf("%s: blob %s, git's %s", what, res.GetContent().GetSHA(), blob)
		}
		if res.Commit.GetTree().GetSHA() != tree {
			t.Errorf("%s: tree %s, git's %s", what, res.Commit.GetTree().GetSHA(), tree)
		}
		if got := unsigned(res.Commit.GetSHA()); got != commit {
			t.Errorf("%s: commit %s (%s unsigned), git's %s", what, res.Commit.GetSHA(), got, commit)
		}
	}

	// A first commit: the file two directories down.
	message := "Add the guide\n\nWith a body.\n"
	first, _, err := c.Repositories.CreateFile(ctx, "octo", "objects", "docs/guide/hello.md", &github.RepositoryContentFileOptions{
		Message: github.Ptr(message), Content: []byte("hello, guide\n"), Author: author, Committer: committer})
	apptest.Must(t, "create", err)
	hello := gitIn("hello, guide\n", nil, "hash-object", "-w", "--stdin")
	guide := gitIn("100644 blob "+hello+"\thello.md\n", nil, "mktree")
	docs := gitIn("040000 tree "+guide+"\tguide\n", nil, "mktree")
	root := gitIn("040000 tree "+docs+"\tdocs\n", nil, "mktree")
	commit := gitIn(message, identities, "commit-tree", root, "-F", "-")
	check("first commit", first, hello, root, commit)

	// A commit on it: a file beside the directory, sorted after it.
	second, _, err := c.Repositories.CreateFile(ctx, "octo", "objects", "docs/guide.txt", &github.RepositoryContentFileOptions{
		Message: github.Ptr("Add a note"), Content: []byte{0, 1, 2, 0xff}, Author: author, Committer: committer})
	apptest.Must(t, "create beside", err)
	note := gitIn("\x00\x01\x02\xff", nil, "hash-object", "-w", "--stdin")
	docs2 := gitIn("040000 tree "+guide+"\tguide\n100644 blob "+note+"\tguide.txt\n", nil, "mktree")
	root2 := gitIn("040000 tree "+docs2+"\tdocs\n", nil, "mktree")
	// git's commits on the server's (signed) ones read them from its repository.
	withServer := append(slices.Clone(identities), "GIT_ALTERNATE_OBJECT_DIRECTORIES="+filepath.Join(dir, "objects"))
	commit2 := gitIn("Add a note", withServer, "commit-tree", root2, "-p", first.Commit.GetSHA(), "-F", "-")
	check("second commit", second, note, root2, commit2)

	// A deletion: back to the first tree.
	third, _, err := c.Repositories.DeleteFile(ctx, "octo", "objects", "docs/guide.txt", &github.RepositoryContentFileOptions{
		Message: github.Ptr("Remove the note\n"), SHA: github.Ptr(note), Author: author, Committer: committer})
	apptest.Must(t, "delete", err)
	commit3 := gitIn("Remove the note\n", withServer, "commit-tree", root, "-p", second.Commit.GetSHA(), "-F", "-")
	check("deletion", third, "", root, commit3)

	if out, err := exec.Command("git", "--git-dir="+dir, "fsck", "--strict", "--no-dangling", "--no-progress").CombinedOutput(); err != nil || len(out) > 0 {
		t.Fatalf("git fsck of the server's repository: %v\n%s", err, out)
	}
	if head := strings.TrimSpace(apptest.Git(t, scratch, "--git-dir="+dir, "rev-parse", "refs/heads/main")); head != third.Commit.GetSHA() {
		t.Fatalf("main is at %s, want %s", head, third.Commit.GetSHA())
	}
}

// TestContentsRefusesPathsGitRefuses: the contents API stores no path
// that git's fsck, Windows or macOS would read as something else
// (backslashes, control characters, "." and ".." in any spelling, ".git"
// in any spelling) and no .gitmodules git's fsck refuses: 422 with the
// reason, and the branch does not move.
func TestContentsRefusesPathsGitRefuses(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octo := env.User("octo")
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo")
	put := func(path, content string) (*http.Response, []byte) {
		t.Helper()
		body := fmt.Sprintf(`{"message":"m","content":%q}`, base64.StdEncoding.EncodeToString([]byte(content)))
		return env.DoJSON("PUT", "/repos/octo/hello/contents/"+path, token, body)
	}
	if resp, b := put("README.md", "hello\n"); resp.StatusCode != http.StatusCreated {
		t.Fatalf("first file: %d %s", resp.StatusCode, b)
	}
	head := func() string {
		resp, b := env.Do("GET", "/repos/octo/hello/branches/main", token, nil)
		var branch struct {
			Commit struct{ SHA string } `json:"commit"`
		}
		if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &branch) != nil {
			t.Fatalf("branch: %d %s", resp.StatusCode, b)
		}
		return branch.Commit.SHA
	}
	before := head()
	for _, p := range []string{`..\..\pwn3`, `C:\x`, "a\tb", "a\r\nb", "x\x00y", ".GIT/config", "docs/git~1/x", ".git.",
		".g\u200cit/hooks/x", "...", ". ./x", "a/\u200c../b"} {
		resp, b := put(url.PathEscape(p), "pwned\n")
		var got struct {
			Message string
			Errors  []struct{ Resource, Field, Code string }
		}
		if resp.StatusCode != http.StatusUnprocessableEntity || json.Unmarshal(b, &got) != nil || !strings.HasPrefix(got.Message, "path ") ||
			len(got.Errors) != 1 || got.Errors[0].Field != "path" || got.Errors[0].Code != "invalid" {
			t.Errorf("PUT %q: %d %s, want 422 with the path's reason", p, resp.StatusCode, b)
		}
	}
	for _, content := range []string{"[submodule \"lib\"\n\tpath = lib\n", "[submodule \"lib\"]\n\tpath = lib\n\turl = --upload-pack=x\n",
		"[submodule \"../../hooks\"]\n\tpath = lib\n"} {
		if resp, b := put(".gitmodules", content); resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(string(b), `"field":"content"`) {
			t.Errorf("PUT .gitmodules %q: %d %s, want 422", content, resp.StatusCode, b)
		}
	}
	if after := head(); after != before {
		t.Fatalf("a refused write moved the branch: %s -> %s", before, after)
	}
	if resp, b := put(".gitmodules", "[submodule \"lib\"]\n\tpath = lib\n\turl = https://git.example/lib.git\n"); resp.StatusCode != http.StatusCreated {
		t.Errorf("PUT a valid .gitmodules: %d %s", resp.StatusCode, b)
	}
}
