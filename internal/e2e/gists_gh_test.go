package e2e_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"forgeapi/internal/apptest"
)

// TestGitHubCLIGist runs `gh gist create/view/edit/clone/delete` against
// a server on --tls, through the validating proxy: the gist made from a
// file, read back, a file added and one edited (each a commit), cloned
// with git, and deleted.
func TestGitHubCLIGist(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithTLS())
	octo := env.User("octo")
	token := env.Token(octo, "gist", "read:org")
	gh := apptest.GH(t, env, token, true)
	files := t.TempDir()
	editor := filepath.Join(t.TempDir(), "editor.sh")
	apptest.Must(t, "write the editor", os.WriteFile(editor, []byte("#!/bin/sh\necho 'edited by gh' > \"$1\"\n"), 0o755))
	gh.Dir = files
	gh.Env = []string{"GH_EDITOR=" + editor, "GIT_SSL_CAINFO=" + env.Main.CAFile(), "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0"}
	run := gh.Run
	write := func(name, content string) string {
		p := filepath.Join(files, name)
		apptest.Must(t, "write", os.WriteFile(p, []byte(content), 0o644))
		return p
	}
	id := ""
	apptest.Step(t, "gh gist create", func(t *testing.T) {
		out := run(t, "gist", "create", "--public", "-d", "from gh", write("hello.txt", "hello from gh\n"))
		m := regexp.MustCompile(`/gist/([0-9a-f]{32})`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("gh gist create printed %q", out)
		}
		id = m[1]
	})
	apptest.Step(t, "gh gist list reads GraphQL: secret gists too, or only them", func(t *testing.T) {
		out := run(t, "gist", "create", "-d", "a secret one", write("secret.txt", "psst\n"))
		if !regexp.MustCompile(`/gist/[0-9a-f]{32}`).MatchString(out) {
			t.Fatalf("gh gist create printed %q", out)
		}
		all := run(t, "gist", "list")
		if !strings.Contains(all, id) || !strings.Contains(all, "a secret one") || !strings.Contains(all, "from gh") {
			t.Fatalf("gh gist list printed %q", all)
		}
		if secret := run(t, "gist", "list", "--secret"); strings.Contains(secret, id) || !strings.Contains(secret, "a secret one") {
			t.Fatalf("gh gist list --secret printed %q", secret)
		}
	})
	apptest.Step(t, "gh gist view", func(t *testing.T) {
		if out := run(t, "gist", "view", id, "--raw"); !strings.Contains(out, "hello from gh") || !strings.Contains(out, "from gh") {
			t.Fatalf("gh gist view printed %q", out)
		}
	})
	apptest.Step(t, "gh gist edit adds a file and edits one", func(t *testing.T) {
		run(t, "gist", "edit", id, "--add", write("two.txt", "second file\n"))
		run(t, "gist", "edit", id, "--filename", "hello.txt")
		if out := run(t, "gist", "view", id, "--files"); !strings.Contains(out, "hello.txt") || !strings.Contains(out, "two.txt") {
			t.Fatalf("gh gist view --files printed %q", out)
		}
		if out := run(t, "gist", "view", id, "--raw", "--filename", "hello.txt"); !strings.Contains(out, "edited by gh") {
			t.Fatalf("hello.txt after the edit: %q", out)
		}
	})
	apptest.Step(t, "gh gist clone, and git log shows the three commits", func(t *testing.T) {
		run(t, "gist", "clone", id, "cloned")
		log := apptest.Git(t, filepath.Join(files, "cloned"), "log", "--format=%an")
		if strings.Count(log, "octo\n") != 3 {
			t.Fatalf("git log of the clone:\n%s", log)
		}
	})
	apptest.Step(t, "gh gist delete", func(t *testing.T) {
		run(t, "gist", "delete", id)
		if resp, body := env.Get("/gists/"+id, "token "+token); resp.StatusCode != 404 {
			t.Fatalf("deleted gist: %d %s", resp.StatusCode, body)
		}
	})
}
