package repository_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/repos"
)

// pushWorld pushes a repository with a file, a directory, a symlink to a
// file, a dangling symlink, a submodule, a 3 MB file, names with spaces
// and unicode, a tag and a second branch.
func pushWorld(t *testing.T, env *apptest.Env, token string) (work string) {
	t.Helper()
	work = apptest.WorkTree(t, map[string]string{
		"README.md":        "# hello\n",
		"docs/guide.md":    "guide v1\n",
		"docs/README.rst":  "docs readme\n",
		"with space/é.txt": "unicode\n",
		".gitmodules":      "[submodule \"lib\"]\n\tpath = lib\n\turl = https://git.example/lib.git\n",
		"big/blob.bin":     strings.Repeat("0123456789abcdef", 3<<16), // 3 MiB
	})
	if err := os.Symlink("docs/guide.md", filepath.Join(work, "guide-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../outside", filepath.Join(work, "dangling")); err != nil {
		t.Fatal(err)
	}
	apptest.Git(t, work, "add", "guide-link", "dangling")
	apptest.Git(t, work, "update-index", "--add", "--cacheinfo", "160000,1111111111111111111111111111111111111111,lib")
	apptest.Git(t, work, "commit", "-qm", "links and a submodule")
	apptest.Git(t, work, "tag", "v1")
	apptest.Commit(t, work, "guide v2", map[string]string{"docs/guide.md": "guide v2\n"})
	remote := env.GitURL("octo", "hello", "octo", token)
	apptest.Git(t, work, "push", "-q", remote, "HEAD:refs/heads/main", "HEAD:refs/heads/feature/x", "refs/tags/v1")
	return work
}

func TestContents(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo", apptest.UserOpts{Email: "author@example.com"})
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo")
	work := pushWorld(t, env, token)
	c := env.Client("")

	var old *github.RepositoryContent // docs/guide.md at v1
	apptest.Step(t, "a file reads at the default branch and at a tag, and its download_url serves it", func(t *testing.T) {
		file, _, _, err := c.Repositories.GetContents(ctx, "octo", "hello", "docs/guide.md", nil)
		apptest.Must(t, "file", err)
		if got, _ := file.GetContent(); got != "guide v2\n" || file.GetType() != "file" || file.GetEncoding() != "base64" ||
			file.GetURL() != env.URL+"/repos/octo/hello/contents/docs/guide.md?ref=main" || file.GetSize() != 9 {
			t.Fatalf("file: %+v", file)
		}
		old, _, _, err = c.Repositories.GetContents(ctx, "octo", "hello", "docs/guide.md", &github.RepositoryContentGetOptions{Ref: "v1"})
		apptest.Must(t, "file at a tag", err)
		if got, _ := old.GetContent(); got != "guide v1\n" {
			t.Fatalf("file at v1: %q", got)
		}
		// The download_url serves the bytes.
		resp, body := env.Do("GET", strings.TrimPrefix(file.GetDownloadURL(), env.URL), "", nil)
		if resp.StatusCode != http.StatusOK || string(body) != "guide v2\n" {
			t.Fatalf("download_url %s: %d %q", file.GetDownloadURL(), resp.StatusCode, body)
		}
	})

	apptest.Step(t, "the root lists its entries by name", func(t *testing.T) {
		_, dir, _, err := c.Repositories.GetContents(ctx, "octo", "hello", "", nil)
		apptest.Must(t, "root", err)
		var names []string
		for _, e := range dir {
			names = append(names, e.GetName()+":"+e.GetType())
		}
		if got := strings.Join(names, " "); got != ".gitmodules:file README.md:file big:dir dangling:symlink docs:dir guide-link:symlink lib:submodule with space:dir" {
			t.Fatalf("root: %s", got)
		}
	})

	apptest.Step(t, "a symlink to a file answers the file, another the link, a submodule its URL", func(t *testing.T) {
		linked, _, _, err := c.Repositories.GetContents(ctx, "octo", "hello", "guide-link", nil)
		apptest.Must(t, "symlink", err)
		if linked.GetPath() != "docs/guide.md" || linked.GetType() != "file" {
			t.Fatalf("symlink to a file: %+v", linked)
		}
		resp, body := env.Do("GET", "/repos/octo/hello/contents/dangling", "", nil)
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"type":"symlink"`) || !strings.Contains(string(body), `"target":"../outside"`) {
			t.Fatalf("dangling symlink: %d %s", resp.StatusCode, body)
		}
		resp, body = env.Do("GET", "/repos/octo/hello/contents/lib", "", nil)
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"submodule_git_url":"https://git.example/lib.git"`) {
			t.Fatalf("submodule: %d %s", resp.StatusCode, body)
		}
	})

	apptest.Step(t, "unicode paths, a branch with a slash, the raw media type and a 3 MB file", func(t *testing.T) {
		// Unicode and spaces; a branch with a slash; the raw media type; a
		// 3 MB file (no inline content; raw gives every byte).
		uni, _, _, err := c.Repositories.GetContents(ctx, "octo", "hello", "with space/é.txt", &github.RepositoryContentGetOptions{Ref: "feature/x"})
		apptest.Must(t, "unicode path", err)
		if got, _ := uni.GetContent(); got != "unicode\n" {
			t.Fatalf("unicode: %q", got)
		}
		resp, body := env.Do("GET", "/repos/octo/hello/contents/README.md", "", nil, "Accept", "application/vnd.service.raw")
		if resp.StatusCode != http.StatusOK || string(body) != "# hello\n" {
			t.Fatalf("raw: %d %q", resp.StatusCode, body)
		}
		big, _, _, err := c.Repositories.GetContents(ctx, "octo", "hello", "big/blob.bin", nil)
		apptest.Must(t, "big", err)
		if big.GetEncoding() != "none" || big.GetSize() != 3<<20 {
			t.Fatalf("big file: encoding %q size %d", big.GetEncoding(), big.GetSize())
		}
		rc, _, err := c.Repositories.DownloadContents(ctx, "octo", "hello", "big/blob.bin", nil)
		apptest.Must(t, "download", err)
		data, _ := io.ReadAll(rc)
		rc.Close()
		if !bytes.Equal(data, []byte(strings.Repeat("0123456789abcdef", 3<<16))) {
			t.Fatalf("downloaded %d bytes", len(data))
		}
	})

	apptest.Step(t, "the README of the root and of a directory", func(t *testing.T) {
		readme, _, err := c.Repositories.GetReadme(ctx, "octo", "hello", nil)
		apptest.Must(t, "readme", err)
		if got, _ := readme.GetContent(); got != "# hello\n" {
			t.Fatalf("readme %q", got)
		}
		resp, body := env.Do("GET", "/repos/octo/hello/readme/docs", "", nil)
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"path":"docs/README.rst"`) {
			t.Fatalf("readme of docs: %d %s", resp.StatusCode, body)
		}
	})

	// docs reads the docs directory as caller.
	docs := func(caller string, headers ...string) (*http.Response, string) {
		resp, body := env.Do("GET", "/repos/octo/hello/contents/docs", caller, nil, headers...)
		return resp, string(body)
	}
	var etag string // of the docs listing before the push
	apptest.Step(t, "a directory listing is rendered once and kept, per caller and ref", func(t *testing.T) {
		// Kept by tree SHA, path, ref and URLs: read again, it is the same
		// body and ETag, and If-None-Match gives a 304; another caller has
		// its own ETag; another ref, its own URLs.
		resp, listing := docs("")
		etag = resp.Header.Get("ETag")
		if resp.StatusCode != http.StatusOK || etag == "" || !strings.Contains(listing, `"path":"docs/guide.md"`) ||
			!strings.Contains(listing, `"url":"`+env.URL+`/repos/octo/hello/contents/docs/guide.md?ref=main"`) {
			t.Fatalf("docs: %d %q %s", resp.StatusCode, etag, listing)
		}
		if resp, again := docs(""); again != listing || resp.Header.Get("ETag") != etag {
			t.Fatalf("docs read again: %q %s", resp.Header.Get("ETag"), again)
		}
		if resp, body := docs("", "If-None-Match", etag); resp.StatusCode != http.StatusNotModified || body != "" {
			t.Fatalf("docs with If-None-Match: %d %s", resp.StatusCode, body)
		}
		if resp, body := docs(token); body != listing || resp.Header.Get("ETag") == etag {
			t.Fatalf("docs as octo: ETag %q (anonymous %q), %s", resp.Header.Get("ETag"), etag, body)
		}
		if _, body := env.Do("GET", "/repos/octo/hello/contents/docs?ref=feature/x", "", nil); !strings.Contains(string(body), "/contents/docs/guide.md?ref=feature%2Fx") ||
			!strings.Contains(string(body), "/octo/hello/blob/feature/x/docs/guide.md") || strings.Contains(string(body), "ref=main") {
			t.Fatalf("docs at feature/x (the same tree as main): %s", body)
		}
		if _, body := env.Do("GET", "/repos/octo/hello/contents/docs?ref=v1", "", nil); !strings.Contains(string(body), "/contents/docs/guide.md?ref=v1") ||
			!strings.Contains(string(body), `"sha":"`+old.GetSHA()+`"`) {
			t.Fatalf("docs at v1: %s", body)
		}
	})

	apptest.Step(t, "a push is seen at once by file and directory reads", func(t *testing.T) {
		// The open repository is keyed by the push.
		apptest.Commit(t, work, "guide v3", map[string]string{"docs/guide.md": "guide v3\n", "docs/new.md": "new\n"})
		apptest.Git(t, work, "push", "-q", env.GitURL("octo", "hello", "octo", token), "HEAD:refs/heads/main")
		file, _, _, err := c.Repositories.GetContents(ctx, "octo", "hello", "docs/guide.md", nil)
		apptest.Must(t, "file after a push", err)
		if got, _ := file.GetContent(); got != "guide v3\n" {
			t.Fatalf("after a push: %q", got)
		}
		resp, after := docs("", "If-None-Match", etag)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("ETag") == etag || !strings.Contains(after, `"path":"docs/new.md"`) ||
			!strings.Contains(after, `"sha":"`+file.GetSHA()+`"`) {
			t.Fatalf("docs after a push: %d %q %s", resp.StatusCode, resp.Header.Get("ETag"), after)
		}
		_, dirAfter, _, err := c.Repositories.GetContents(ctx, "octo", "hello", "docs", nil)
		apptest.Must(t, "docs after a push", err)
		if len(dirAfter) != 3 || dirAfter[1].GetName() != "guide.md" || dirAfter[1].GetSHA() != file.GetSHA() ||
			dirAfter[2].GetName() != "new.md" || dirAfter[2].GetSize() != 4 || dirAfter[0].GetSize() != 12 {
			t.Fatalf("docs after a push: %+v", dirAfter)
		}
	})

	apptest.Step(t, "missing paths, refs and repositories are JSON 404s", func(t *testing.T) {
		for _, p := range []string{"/repos/octo/hello/contents/nope", "/repos/octo/hello/contents/README.md?ref=nope",
			"/repos/octo/nope/contents/README.md", "/repos/octo/hello/contents/docs/../../x", "/repos/octo/hello/readme/big"} {
			if resp, body := env.Do("GET", p, "", nil); resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), `"message"`) {
				t.Errorf("GET %s: %d %s, want a JSON 404", p, resp.StatusCode, body)
			}
		}
	})

	apptest.Step(t, "after a rename the same tree lists with the new URLs", func(t *testing.T) {
		if resp, body := env.DoJSON("PATCH", "/repos/octo/hello", token, `{"name":"renamed"}`); resp.StatusCode != http.StatusOK {
			t.Fatalf("rename: %d %s", resp.StatusCode, body)
		}
		if _, body := env.Do("GET", "/repos/octo/renamed/contents/docs", "", nil); !strings.Contains(string(body), env.URL+"/repos/octo/renamed/contents/docs/new.md?ref=main") ||
			strings.Contains(string(body), "/octo/hello/") {
			t.Fatalf("docs after a rename: %s", body)
		}
	})
}

func TestEmptyRepositoryAndPrivateAccess(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octo := env.User("octo")
	env.Repo(octo, "empty")
	secret := env.Repo(octo, "secret", apptest.RepoOpts{Private: true})
	other := env.Repo(octo, "other", apptest.RepoOpts{Private: true})
	token := env.Token(octo, "repo")
	if resp, body := env.Do("GET", "/repos/octo/empty/contents/", "", nil); resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), "This repository is empty.") {
		t.Fatalf("empty repository: %d %s", resp.StatusCode, body)
	}
	work := apptest.WorkTree(t, map[string]string{"a.txt": "secret\n"})
	apptest.Git(t, work, "push", "-q", env.GitURL("octo", "secret", "octo", token), "HEAD:refs/heads/main")
	for _, c := range []struct {
		name, token string
		want        int
	}{
		{"anonymous", "", http.StatusNotFound},
		{"classic with repo", token, http.StatusOK},
		{"fine-grained with contents:read", env.FineGrainedToken(octo, octo, []*repos.Repository{secret}, "contents:read"), http.StatusOK},
		{"fine-grained without contents", env.FineGrainedToken(octo, octo, []*repos.Repository{secret}, "issues:read"), http.StatusForbidden},
		{"fine-grained not selecting it", env.FineGrainedToken(octo, octo, []*repos.Repository{other}, "contents:read"), http.StatusNotFound},
	} {
		if resp, body := env.Do("GET", "/repos/octo/secret/contents/a.txt", c.token, nil); resp.StatusCode != c.want {
			t.Errorf("%s: %d %s, want %d", c.name, resp.StatusCode, body, c.want)
		}
	}
}

func TestBranches(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo", apptest.UserOpts{Email: "author@example.com"})
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo")
	work := apptest.WorkTree(t, map[string]string{"a": "1\n"})
	args := []string{"push", "-q", env.GitURL("octo", "hello", "octo", token), "HEAD:refs/heads/main", "HEAD:refs/heads/feature/x"}
	for i := range 148 {
		args = append(args, fmt.Sprintf("HEAD:refs/heads/b%03d", i))
	}
	apptest.Git(t, work, args...)
	c := env.Client("")
	var all []*github.Branch
	opts := &github.BranchListOptions{ListOptions: github.ListOptions{PerPage: 100}}
	for {
		page, resp, err := c.Repositories.ListBranches(ctx, "octo", "hello", opts)
		apptest.Must(t, "branches", err)
		all = append(all, page...)
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	if len(all) != 150 || all[0].GetName() != "b000" || all[148].GetName() != "feature/x" || all[149].GetName() != "main" {
		t.Fatalf("%d branches, first %s", len(all), all[0].GetName())
	}
	b, _, err := c.Repositories.GetBranch(ctx, "octo", "hello", "feature/x", 0)
	apptest.Must(t, "branch with a slash", err)
	if b.GetName() != "feature/x" || b.GetCommit().GetSHA() != all[0].GetCommit().GetSHA() ||
		b.GetCommit().GetAuthor().GetLogin() != "octo" || b.GetCommit().GetCommit().GetMessage() != "initial commit\n" {
		t.Fatalf("branch: %+v", b)
	}
	if _, resp, _ := c.Repositories.GetBranch(ctx, "octo", "hello", "nope", 0); apptest.ResponseStatus(resp) != http.StatusNotFound {
		t.Fatalf("unknown branch: %d", apptest.ResponseStatus(resp))
	}
}
