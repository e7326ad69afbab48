package repository_test

import (
	"encoding/base64"
	"encoding/json"
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

// TestRefNamesGitRefuses: reference and branch names that git refuses,
// or that collide with an existing reference's directory, are the
// client's mistake on every route that takes one: the platform's 422 or
// 404 with its message, never a 500, and nothing changes.
func TestRefNamesGitRefuses(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octo := env.User("octo")
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo")
	work := apptest.WorkTree(t, map[string]string{"a": "1\n"})
	head := strings.TrimSpace(apptest.Git(t, work, "rev-parse", "HEAD"))
	apptest.Git(t, work, "push", "-q", env.GitURL("octo", "hello", "octo", token), "HEAD:refs/heads/main", "HEAD:refs/heads/feat/x")
	refs := func() string { return apptest.Git(t, work, "ls-remote", env.GitURL("octo", "hello", "octo", token)) }
	before := refs()

	check := func(method, path, body string, status int, message string) {
		t.Helper()
		resp, b := env.DoJSON(method, path, token, body)
		if resp.StatusCode != status || !strings.Contains(string(b), message) {
			t.Errorf("%s %s %s: %d %s, want %d %q", method, path, body, resp.StatusCode, b, status, message)
		}
	}
	for ref, message := range map[string]string{
		"refs/heads/-x":                            `"refs/heads/-x is not a valid ref name."`,
		"refs/heads/.hidden":                       `"refs/heads/.hidden is not a valid ref name."`,
		"refs/heads/@":                             `"refs/heads/@ is not a valid ref name."`,
		"refs/heads/a\x00b":                        `"refs/heads/a\u0000b is not a valid ref name."`,
		"refs/heads/a\nb":                          `"refs/heads/a\nb is not a valid ref name."`,
		"refs/heads/" + strings.Repeat("a", 10000): `is not a valid ref name."`,
		"@":                 `"Reference name must contain at least three slash-separated components."`,
		"refs/main":         `"Reference name must contain at least three slash-separated components."`,
		"refs/heads/main/b": `"Reference update failed"`, // refs/heads/main is a file
		"refs/heads/feat":   `"Reference update failed"`, // refs/heads/feat is a directory
	} {
		body, _ := json.Marshal(map[string]string{"ref": ref, "sha": head})
		check("POST", "/repos/octo/hello/git/refs", string(body), http.StatusUnprocessableEntity, message)
	}
	for _, seg := range []string{"a%00b", "a%0Ab", "a%0D%0Ab", "a%09b", "a%5Cb", "a..b", "x.lock"} {
		check("PATCH", "/repos/octo/hello/git/refs/heads/"+seg, `{"sha":"`+head+`"}`, http.StatusUnprocessableEntity, "Reference does not exist")
		check("DELETE", "/repos/octo/hello/git/refs/heads/"+seg, "", http.StatusUnprocessableEntity, "Reference does not exist")
		check("GET", "/repos/octo/hello/git/ref/heads/"+seg, "", http.StatusNotFound, "Not Found")
		check("GET", "/repos/octo/hello/branches/"+seg, "", http.StatusNotFound, "Branch not found")
	}
	for _, branch := range []string{"../config", "a\x00b", "a\nb", "a\tb", "feature/", "refs/heads/", "-x"} {
		body, _ := json.Marshal(map[string]string{"message": "m", "content": "aGk=", "branch": branch})
		check("PUT", "/repos/octo/hello/contents/b.txt", string(body), http.StatusNotFound, "not found")
		body, _ = json.Marshal(map[string]string{"message": "m", "sha": head, "branch": branch})
		check("DELETE", "/repos/octo/hello/contents/a", string(body), http.StatusNotFound, "not found")
	}
	for _, v := range []string{"a\x00b", "main\x00", "feat/x\n"} {
		body, _ := json.Marshal(map[string]string{"title": "t", "head": v, "base": "main"})
		check("POST", "/repos/octo/hello/pulls", string(body), http.StatusUnprocessableEntity, `"field":"head","code":"invalid"`)
		body, _ = json.Marshal(map[string]string{"title": "t", "head": "feat/x", "base": v})
		check("POST", "/repos/octo/hello/pulls", string(body), http.StatusUnprocessableEntity, `"field":"base","code":"invalid"`)
	}
	if after := refs(); after != before {
		t.Fatalf("references changed:\n%s\nto\n%s", before, after)
	}
}
