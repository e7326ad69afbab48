package repocontent_test

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// TestGitDatabaseReads reads refs, tags, commits, trees and blobs of a
// pushed repository with go-github's Git service.
func TestGitDatabaseReads(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo")
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo")
	work := apptest.WorkTree(t, map[string]string{"README.md": "hi\n", "src/main.go": "package main\n"})
	head := strings.TrimSpace(apptest.Git(t, work, "rev-parse", "HEAD"))
	apptest.Git(t, work, "tag", "v1.0.0")
	apptest.Git(t, work, "tag", "-a", "-m", "annotated", "v2.0.0")
	apptest.Git(t, work, "push", "-q", env.GitURL("octo", "hello", "octo", token), "HEAD:refs/heads/main", "--tags")
	c := env.Client("")

	ref, _, err := c.Git.GetRef(ctx, "octo", "hello", "heads/main")
	apptest.Must(t, "ref", err)
	if ref.GetRef() != "refs/heads/main" || ref.GetObject().GetSHA() != head || ref.GetObject().GetType() != "commit" {
		t.Fatalf("ref %+v", ref)
	}
	if _, resp, _ := c.Git.GetRef(ctx, "octo", "hello", "heads/nope"); apptest.ResponseStatus(resp) != http.StatusNotFound {
		t.Fatalf("unknown ref: %d", apptest.ResponseStatus(resp))
	}
	tagRefs, _, err := c.Git.ListMatchingRefs(ctx, "octo", "hello", "tags/")
	apptest.Must(t, "matching refs", err)
	if len(tagRefs) != 2 || tagRefs[0].GetObject().GetType() != "commit" || tagRefs[1].GetObject().GetType() != "tag" {
		t.Fatalf("tag refs %+v", tagRefs)
	}
	tags, _, err := c.Repositories.ListTags(ctx, "octo", "hello", nil)
	apptest.Must(t, "tags", err)
	if len(tags) != 2 || tags[0].GetName() != "v2.0.0" || tags[0].GetCommit().GetSHA() != head {
		t.Fatalf("tags %+v", tags)
	}

	commit, _, err := c.Git.GetCommit(ctx, "octo", "hello", head)
	apptest.Must(t, "git commit", err)
	if commit.GetMessage() != "initial commit\n" || len(commit.Parents) != 0 {
		t.Fatalf("git commit %+v", commit)
	}
	tree, _, err := c.Git.GetTree(ctx, "octo", "hello", head, true)
	apptest.Must(t, "tree", err)
	var paths []string
	var blobSHA string
	for _, e := range tree.Entries {
		paths = append(paths, e.GetPath()+":"+e.GetType())
		if e.GetPath() == "src/main.go" {
			blobSHA = e.GetSHA()
		}
	}
	if strings.Join(paths, " ") != "README.md:blob src:tree src/main.go:blob" || tree.GetTruncated() {
		t.Fatalf("tree %v", paths)
	}
	flat, _, err := c.Git.GetTree(ctx, "octo", "hello", commit.GetTree().GetSHA(), false)
	apptest.Must(t, "flat tree", err)
	if len(flat.Entries) != 2 {
		t.Fatalf("flat tree: %d entries", len(flat.Entries))
	}
	blob, _, err := c.Git.GetBlob(ctx, "octo", "hello", blobSHA)
	apptest.Must(t, "blob", err)
	if content, _ := base64.StdEncoding.DecodeString(blob.GetContent()); string(content) != "package main\n" || blob.GetSize() != 13 {
		t.Fatalf("blob %+v", blob)
	}
	raw, _, err := c.Git.GetBlobRaw(ctx, "octo", "hello", blobSHA)
	apptest.Must(t, "raw blob", err)
	if string(raw) != "package main\n" {
		t.Fatalf("raw blob %q", raw)
	}
	for _, p := range []string{"/repos/octo/hello/git/commits/" + blobSHA, "/repos/octo/hello/git/blobs/nothex", "/repos/octo/hello/git/trees/" + strings.Repeat("a", 40)} {
		if resp, body := env.Do("GET", p, "", nil); resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d %s", p, resp.StatusCode, body)
		}
	}
}

// TestRefWrites creates, moves and deletes references with go-github's
// Git service; each is a push (CreateEvent, PushEvent, DeleteEvent).
func TestRefWrites(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo")
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo")
	work := apptest.WorkTree(t, map[string]string{"a": "1\n"})
	first := strings.TrimSpace(apptest.Git(t, work, "rev-parse", "HEAD"))
	second := apptest.Commit(t, work, "two", map[string]string{"a": "2\n"})
	apptest.Git(t, work, "push", "-q", env.GitURL("octo", "hello", "octo", token), "HEAD:refs/heads/main")
	c := env.Client(token)

	ref, resp, err := c.Git.CreateRef(ctx, "octo", "hello", github.CreateRef{Ref: "refs/heads/feature", SHA: first})
	apptest.Must(t, "create ref", err)
	if resp.StatusCode != http.StatusCreated || ref.GetObject().GetSHA() != first {
		t.Fatalf("create ref: %d %+v", resp.StatusCode, ref)
	}
	if _, resp, _ := c.Git.CreateRef(ctx, "octo", "hello", github.CreateRef{Ref: "refs/heads/feature", SHA: first}); apptest.ResponseStatus(resp) != http.StatusUnprocessableEntity {
		t.Fatalf("create an existing ref: %d", apptest.ResponseStatus(resp))
	}
	ref, _, err = c.Git.UpdateRef(ctx, "octo", "hello", "heads/feature", github.UpdateRef{SHA: second})
	apptest.Must(t, "fast-forward", err)
	if ref.GetObject().GetSHA() != second {
		t.Fatalf("fast-forward: %+v", ref)
	}
	if _, resp, _ := c.Git.UpdateRef(ctx, "octo", "hello", "heads/feature", github.UpdateRef{SHA: first}); apptest.ResponseStatus(resp) != http.StatusUnprocessableEntity {
		t.Fatalf("a non-fast-forward without force: %d", apptest.ResponseStatus(resp))
	}
	_, _, err = c.Git.UpdateRef(ctx, "octo", "hello", "heads/feature", github.UpdateRef{SHA: first, Force: github.Ptr(true)})
	apptest.Must(t, "forced update", err)
	_, err = c.Git.DeleteRef(ctx, "octo", "hello", "heads/feature")
	apptest.Must(t, "delete ref", err)
	if _, resp, _ := c.Git.GetRef(ctx, "octo", "hello", "heads/feature"); apptest.ResponseStatus(resp) != http.StatusNotFound {
		t.Fatalf("deleted ref: %d", apptest.ResponseStatus(resp))
	}
	if resp, _ := c.Git.DeleteRef(ctx, "octo", "hello", "heads/feature"); apptest.ResponseStatus(resp) != http.StatusUnprocessableEntity {
		t.Fatalf("delete a missing ref: %d", apptest.ResponseStatus(resp))
	}
	for _, body := range []string{`{"ref":"heads/x","sha":"` + first + `"}`, `{"ref":"refs/heads/a..b","sha":"` + first + `"}`,
		`{"ref":"refs/heads/x","sha":"` + strings.Repeat("b", 40) + `"}`, `{"ref":"refs/heads/x"}`} {
		if resp, b := env.DoJSON("POST", "/repos/octo/hello/git/refs", token, body); resp.StatusCode != http.StatusUnprocessableEntity {
			t.Errorf("POST git/refs %s: %d %s", body, resp.StatusCode, b)
		}
	}
	events, _, err := c.Activity.ListRepositoryEvents(ctx, "octo", "hello", &github.ListOptions{PerPage: 100})
	apptest.Must(t, "events", err)
	var types []string
	for _, e := range events {
		types = append(types, e.GetType())
	}
	// As for git pushes: a new branch is CreateEvent and PushEvent.
	if got := strings.Join(types, " "); got != "DeleteEvent PushEvent PushEvent PushEvent CreateEvent PushEvent CreateEvent CreateEvent" {
		t.Fatalf("events, newest first: %s", got)
	}
}
