package e2e_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// TestArchives downloads tarballs and zipballs as go-github's
// GetArchiveLink and a browser do: the link is a 302 (of a branch with
// '/', a tag, a SHA, the default branch, and the repository's
// archive_url template), the download unpacks to the same files, modes
// and links as git archive of the same commit under {owner}-{repo}-{sha7}/
// (the tar stream is git archive's byte for byte), named as the platform
// names it, and served again from the cache. A private repository's
// link is refused to the anonymous and to a token without access; its
// download needs the link's signature.
func TestArchives(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo")
	bob := env.User("bob")
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo")
	c := env.Client(token)
	work := apptest.WorkTree(t, map[string]string{"README.md": "# hello\n", "src/main.go": "package main\n"})
	writeFile(t, work, "run.sh", "#!/bin/sh\necho hi\n", 0o755)
	if err := os.Symlink("src/main.go", filepath.Join(work, "link")); err != nil {
		t.Fatal(err)
	}
	apptest.Git(t, work, "add", "run.sh", "link")
	main := apptest.Commit(t, work, "executable and link", map[string]string{"docs/a b.txt": "spaced\n"})
	apptest.Git(t, work, "tag", "-a", "v1.0", "-m", "one")
	feature := apptest.Commit(t, work, "feature", map[string]string{"feature.txt": "f\n"})
	apptest.Git(t, work, "push", "-q", env.GitURL("octo", "hello", "octo", token),
		main+":refs/heads/main", feature+":refs/heads/feature/x", "refs/tags/v1.0")

	apptest.Step(t, "the links of refs, with go-github", func(t *testing.T) {
		for _, tc := range []struct{ ref, sha string }{{"", main}, {"main", main}, {"feature/x", feature}, {"v1.0", main}, {feature, feature}, {feature[:10], feature}} {
			for _, f := range []github.ArchiveFormat{github.Tarball, github.Zipball} {
				u, resp, err := c.Repositories.GetArchiveLink(ctx, "octo", "hello", f, &github.RepositoryContentGetOptions{Ref: tc.ref}, 0)
				apptest.Must(t, "archive link of "+tc.ref, err)
				ext := map[github.ArchiveFormat]string{github.Tarball: "legacy.tar.gz", github.Zipball: "legacy.zip"}[f]
				if resp.StatusCode != http.StatusFound || u.String() != env.URL+"/_codeload/octo/hello/"+ext+"/"+tc.sha {
					t.Fatalf("%s %s: %d %s", f, tc.ref, resp.StatusCode, u)
				}
			}
		}
		_, resp, err := c.Repositories.GetArchiveLink(ctx, "octo", "hello", github.Tarball, &github.RepositoryContentGetOptions{Ref: "nope"}, 0)
		if err == nil || resp.StatusCode != http.StatusNotFound {
			t.Fatalf("an unknown ref: %v %v", resp, err)
		}
	})
	apptest.Step(t, "the tarball unpacks as git archive's", func(t *testing.T) {
		body, h := download(t, env, "/repos/octo/hello/tarball/feature/x", "")
		prefix := "octo-hello-" + feature[:7]
		if h.Get("Content-Type") != "application/x-gzip" || h.Get("Content-Disposition") != "attachment; filename="+prefix+".tar.gz" {
			t.Fatalf("headers %v", h)
		}
		got := gunzip(t, body)
		want := gitOutput(t, work, "archive", "--format=tar", "--prefix="+prefix+"/", feature)
		if !bytes.Equal(got, want) {
			t.Fatalf("the tar stream differs from git archive's (%d and %d bytes)", len(got), len(want))
		}
		files := tarFiles(t, got)
		if files[prefix+"/run.sh"] != "-rwxrwxr-x #!/bin/sh\necho hi\n" || files[prefix+"/link"] != "Lrwxrwxrwx -> src/main.go" ||
			files[prefix+"/docs/a b.txt"] != "-rw-rw-r-- spaced\n" || files[prefix+"/feature.txt"] == "" {
			t.Fatalf("files %q", files)
		}
		again, _ := download(t, env, "/repos/octo/hello/tarball/feature/x", "")
		if !bytes.Equal(again, body) {
			t.Fatal("the cached tarball differs")
		}
	})
	apptest.Step(t, "the zipball unpacks as git archive's", func(t *testing.T) {
		body, h := download(t, env, "/repos/octo/hello/zipball/v1.0", "")
		prefix := "octo-hello-" + main[:7]
		if h.Get("Content-Type") != "application/zip" || h.Get("Content-Disposition") != "attachment; filename="+prefix+".zip" {
			t.Fatalf("headers %v", h)
		}
		got, want := zipFiles(t, body), zipFiles(t, gitOutput(t, work, "archive", "--format=zip", "--prefix="+prefix+"/", main))
		if fmt.Sprint(got) != fmt.Sprint(want) || !strings.HasPrefix(got[prefix+"/run.sh"], "-rwxr") ||
			!strings.HasPrefix(got[prefix+"/link"], "L") {
			t.Fatalf("zip files\n%q\nwant\n%q", got, want)
		}
	})
	apptest.Step(t, "archive_url resolves", func(t *testing.T) {
		r, _, err := c.Repositories.Get(ctx, "octo", "hello")
		apptest.Must(t, "get the repository", err)
		u := strings.NewReplacer("{archive_format}", "zipball", "{/ref}", "/main").Replace(r.GetArchiveURL())
		resp, _ := link(t, env, strings.TrimPrefix(u, env.URL), "token "+token)
		if resp.StatusCode != http.StatusFound || !strings.HasSuffix(resp.Header.Get("Location"), "/legacy.zip/"+main) {
			t.Fatalf("%s: %d %v", u, resp.StatusCode, resp.Header)
		}
	})
	apptest.Step(t, "a private repository's archive", func(t *testing.T) {
		_, _, err := c.Repositories.Edit(ctx, "octo", "hello", &github.Repository{Private: github.Ptr(true)})
		apptest.Must(t, "make the repository private", err)
		for who, auth := range map[string]string{"anonymous": "", "bob": "token " + env.Token(bob, "repo")} {
			resp, body := env.Get("/repos/octo/hello/tarball", auth)
			apptest.WantStatus(t, who, resp, body, http.StatusNotFound)
		}
		u, _, err := c.Repositories.GetArchiveLink(ctx, "octo", "hello", github.Tarball, nil, 0)
		apptest.Must(t, "archive link", err)
		if u.Query().Get("token") == "" || u.Query().Get("expires") == "" {
			t.Fatalf("an unsigned link %s", u)
		}
		body, _ := get(t, env, u.String(), http.StatusOK)
		if tarFiles(t, gunzip(t, body))["octo-hello-"+main[:7]+"/README.md"] != "-rw-rw-r-- # hello\n" {
			t.Fatal("the private tarball")
		}
		q := u.Query()
		q.Set("token", strings.Repeat("0", 64))
		bad := *u
		bad.RawQuery = q.Encode()
		unsigned := *u
		unsigned.RawQuery = ""
		zip := strings.Replace(u.String(), "legacy.tar.gz", "legacy.zip", 1)
		for what, link := range map[string]string{"a wrong token": bad.String(), "no token": unsigned.String(), "another format": zip} {
			body, _ := get(t, env, link, http.StatusNotFound)
			if !strings.Contains(string(body), `"Not Found"`) {
				t.Fatalf("%s: %s", what, body)
			}
		}
	})
	apptest.Step(t, "downloads of what does not exist", func(t *testing.T) {
		for _, p := range []string{"/_codeload/octo/nope/legacy.tar.gz/" + main, "/_codeload/octo/hello/legacy.rar/" + main,
			"/_codeload/octo/hello/legacy.tar.gz/main"} {
			get(t, env, env.URL+p, http.StatusNotFound)
		}
		env.Repo(octo, "open")
		get(t, env, env.URL+"/_codeload/octo/open/legacy.tar.gz/"+main, http.StatusNotFound)
		resp, body := env.Get("/repos/octo/open/tarball", "")
		apptest.WantStatus(t, "an empty repository", resp, body, http.StatusNotFound)
	})
}

// download follows the link at path (with the authorization) and returns
// the archive and its headers.
func download(t *testing.T, env *apptest.Env, path, authorization string) ([]byte, http.Header) {
	t.Helper()
	resp, body := link(t, env, path, authorization)
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("%s: %d %s", path, resp.StatusCode, body)
	}
	return get(t, env, resp.Header.Get("Location"), http.StatusOK)
}

// link GETs the API path without following its redirect.
func link(t *testing.T, env *apptest.Env, path, authorization string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest("GET", env.URL+path, nil)
	apptest.Must(t, "request", err)
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	client := &http.Client{Transport: env.Transport(), CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	apptest.Must(t, "GET "+path, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	apptest.Must(t, "read "+path, err)
	return resp, body
}

// get GETs u anonymously and wants the status.
func get(t *testing.T, env *apptest.Env, u string, status int) ([]byte, http.Header) {
	t.Helper()
	resp, err := env.HTTPClient().Get(u)
	apptest.Must(t, "GET "+u, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	apptest.Must(t, "read "+u, err)
	if resp.StatusCode != status {
		t.Fatalf("GET %s: %d, want %d: %.200s", u, resp.StatusCode, status, body)
	}
	return body, resp.Header
}

func writeFile(t *testing.T, dir, name, content string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

// gitOutput is git's standard output in dir.
func gitOutput(t testing.TB, dir string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = apptest.GitEnv(t.TempDir())
	out, err := cmd.Output()
	apptest.Must(t, "git "+args[0], err)
	return out
}

func gunzip(t testing.TB, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	apptest.Must(t, "gzip header", err)
	out, err := io.ReadAll(zr)
	apptest.Must(t, "gunzip", err)
	return out
}

// tarFiles maps each entry of the tar to "MODE CONTENT" ("MODE -> TARGET"
// for a link).
func tarFiles(t testing.TB, b []byte) map[string]string {
	t.Helper()
	files := map[string]string{}
	tr := tar.NewReader(bytes.NewReader(b))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files
		}
		apptest.Must(t, "tar", err)
		mode := h.FileInfo().Mode()
		switch h.Typeflag {
		case tar.TypeReg:
			data, err := io.ReadAll(tr)
			apptest.Must(t, "tar entry", err)
			files[h.Name] = mode.String() + " " + string(data)
		case tar.TypeSymlink:
			files[h.Name] = mode.String() + " -> " + h.Linkname
		}
	}
}

// zipFiles maps each file of the zip to "MODE CONTENT".
func zipFiles(t testing.TB, b []byte) map[string]string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	apptest.Must(t, "zip", err)
	files := map[string]string{}
	for _, f := range zr.File {
		if f.FileInfo().IsDir() {
			continue
		}
		rc, err := f.Open()
		apptest.Must(t, "zip entry", err)
		data, err := io.ReadAll(rc)
		rc.Close()
		apptest.Must(t, "zip entry", err)
		files[f.Name] = f.Mode().String() + " " + string(data)
	}
	return files
}
