package e2e_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"forgeapi/internal/apptest"
)

// TestGitHubCLIRelease runs `gh release create/upload/view/download/
// delete` (and list and view, which read GraphQL) against a server on
// --tls, through the validating proxy: the
// release made with an asset, a second asset uploaded, the downloads
// equal to the files, the release deleted.
func TestGitHubCLIRelease(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithTLS())
	octo := env.User("octo")
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo", "read:org")
	dir := apptest.WorkTree(t, map[string]string{"README.md": "# hello\n"})
	apptest.Git(t, dir, "config", "http.sslCAInfo", env.Main.CAFile())
	apptest.Git(t, dir, "push", "-q", env.GitURL("octo", "hello", "octo", token), "HEAD:refs/heads/main")
	gh := apptest.GH(t, env, token, true)
	files := t.TempDir()
	gh.Dir = files
	run := func(t *testing.T, args ...string) string {
		t.Helper()
		return gh.Run(t, append(args, "--repo", gh.Host+"/octo/hello")...)
	}
	write := func(name, content string) string {
		p := filepath.Join(files, name)
		apptest.Must(t, "write", os.WriteFile(p, []byte(content), 0o644))
		return p
	}
	one := write("one.txt", "the first asset\n")
	two := write("two.bin", strings.Repeat("\x00\x01binary", 10000))

	apptest.Step(t, "gh release create with an asset", func(t *testing.T) {
		out := run(t, "release", "create", "v1.0.0", one, "--title", "First", "--notes", "The first release")
		if !strings.Contains(out, "/octo/hello/releases/tag/v1.0.0") {
			t.Fatalf("gh release create printed %q", out)
		}
	})
	apptest.Step(t, "gh release upload", func(t *testing.T) {
		run(t, "release", "upload", "v1.0.0", two)
	})
	apptest.Step(t, "gh release view", func(t *testing.T) {
		out := run(t, "release", "view", "v1.0.0")
		for _, want := range []string{"First", "The first release", "one.txt", "two.bin"} {
			if !strings.Contains(out, want) {
				t.Errorf("gh release view lacks %q:\n%s", want, out)
			}
		}
	})
	apptest.Step(t, "gh release download", func(t *testing.T) {
		into := t.TempDir()
		run(t, "release", "download", "v1.0.0", "--dir", into)
		for name, want := range map[string]string{"one.txt": one, "two.bin": two} {
			got, err := os.ReadFile(filepath.Join(into, name))
			apptest.Must(t, "read the download", err)
			wantBytes, _ := os.ReadFile(want)
			if string(got) != string(wantBytes) {
				t.Errorf("%s downloaded: %d bytes, want %d", name, len(got), len(wantBytes))
			}
		}
	})
	apptest.Step(t, "gh release list", func(t *testing.T) {
		out := run(t, "release", "list")
		if !strings.Contains(out, "v1.0.0") {
			t.Errorf("gh release list:\n%s", out)
		}
	})
	apptest.Step(t, "gh release delete", func(t *testing.T) {
		run(t, "release", "delete", "v1.0.0", "--yes")
		if _, resp, _ := env.Client(token).Repositories.GetReleaseByTag(apptest.Ctx(), "octo", "hello", "v1.0.0"); resp == nil || resp.StatusCode != 404 {
			t.Errorf("the release is still there after gh release delete")
		}
	})
}
