package repocontent_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	if pushes != 4 { // create, update, git push, delete
		t.Fatalf("%d PushEvents, want 4", pushes)
	}
}
