package repocontent_test

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

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
