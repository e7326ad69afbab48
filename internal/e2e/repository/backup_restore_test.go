package repository_test

import (
	"encoding/base64"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/webhooks"
)

// TestRestoreSetsBackWhatMovedAfterTheDatabaseSnapshot restores a backup
// whose repositories were copied well after its database: branches
// pushed, written through the contents API, created, deleted and
// force-moved after the snapshot, a pull request's head moved, a
// repository deleted and one created. The restored forge is the one of
// the snapshot: every branch at the commit its last recorded push left,
// no event naming a missing commit, the pull request mergeable, the
// repositories whole, and it takes new pushes.
func TestRestoreSetsBackWhatMovedAfterTheDatabaseSnapshot(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octo := env.User("octo")
	token := env.Token(octo, "repo", "delete_repo")
	client := env.Client(token)
	env.Repo(octo, "app")
	env.Repo(octo, "doomed")
	url := env.GitURL("octo", "app", "octo", token)
	wt := apptest.WorkTree(t, map[string]string{"README.md": "one\n"})
	first := strings.TrimSpace(apptest.Git(t, wt, "rev-parse", "HEAD"))
	apptest.Git(t, wt, "push", "-q", url, "HEAD:refs/heads/main", "HEAD:refs/heads/deleted-later")
	apptest.Git(t, wt, "checkout", "-q", "-b", "feature")
	feature := apptest.Commit(t, wt, "feature", map[string]string{"feature.txt": "f\n"})
	apptest.Git(t, wt, "push", "-q", url, "feature")
	pr, _, err := client.PullRequests.Create(ctx, "octo", "app", github.CreatePullRequest{Title: github.Ptr("Feature"),
		Head: "feature", Base: "main"})
	apptest.Must(t, "open pull request", err)
	apptest.Git(t, wt, "push", "-q", env.GitURL("octo", "doomed", "octo", token), "HEAD:refs/heads/main")

	db := copyDatabase(t, env)
	snapshot, _ := backupOf(t, env)

	// After the snapshot of the database:
	waitPastRecordedRefsStart(t, env)
	apptest.Git(t, wt, "checkout", "-q", "main")
	apptest.Commit(t, wt, "after the snapshot", map[string]string{"later.txt": "l\n"})
	apptest.Git(t, wt, "push", "-q", url, "main", "HEAD:refs/heads/created-later", "HEAD:refs/tags/v1", ":refs/heads/deleted-later")
	_, _, err = client.Repositories.CreateFile(ctx, "octo", "app", "api.txt", &github.RepositoryContentFileOptions{
		Message: github.Ptr("written after the snapshot"), Content: []byte("a\n"), Branch: github.Ptr("main")})
	apptest.Must(t, "contents write", err)
	apptest.Git(t, wt, "checkout", "-q", "feature")
	apptest.Commit(t, wt, "feature, later", map[string]string{"feature.txt": "g\n"})
	apptest.Git(t, wt, "push", "-q", url, "feature")
	env.Repo(octo, "newer") // before the deletion: SQLite would give it doomed's id
	_, err = client.Repositories.Delete(ctx, "octo", "doomed")
	apptest.Must(t, "delete repository", err)
	later, _ := backupOf(t, env)
	if db.file == "" {
		withDatabaseOf(t, later, snapshot)
	}
	env.Stop()

	restored, summary := restoreOf(t, env, later, db)
	notes := strings.Join(summary.Notes, "\n")
	for _, want := range []string{"were set back", "octo/doomed had no copy", "1 repositories created after the database's snapshot were left out"} {
		if !strings.Contains(notes, want) {
			t.Errorf("restore notes: want %q in\n%s", want, notes)
		}
	}
	appDir := filepath.Join(restored.DataDir, "git", "1.git")
	heads := branchHeads(t, appDir)
	want := map[string]string{"refs/heads/main": first, "refs/heads/deleted-later": first, "refs/heads/feature": feature}
	if len(heads) != len(want) {
		t.Errorf("references after restore: %v, want %v", heads, want)
	}
	for ref, sha := range want {
		if heads[ref] != sha {
			t.Errorf("%s after restore: %s, want %s", ref, heads[ref], sha)
		}
	}
	if out, _ := gitDir(appDir, "rev-parse", "refs/pull/1/head"); out != feature {
		t.Errorf("refs/pull/1/head after restore: %s, want %s", out, feature)
	}
	checkEventsAgreeWithGit(t, restored, token, "octo", "app", appDir)
	checkFsck(t, restored)
	if _, err := os.Stat(filepath.Join(restored.DataDir, "git", "3.git")); !os.IsNotExist(err) {
		t.Errorf("the copy of a repository created after the snapshot was restored (%v)", err)
	}

	rclient := restored.Client(token)
	doomed, _, err := rclient.Repositories.ListBranches(ctx, "octo", "doomed", nil)
	apptest.Must(t, "branches of the repository deleted after the snapshot", err)
	if len(doomed) != 0 {
		t.Errorf("octo/doomed, restored empty, has branches %v", doomed)
	}
	merged, _, err := rclient.PullRequests.Merge(ctx, "octo", "app", pr.GetNumber(), "", &github.PullRequestOptions{SHA: feature})
	apptest.Must(t, "merge the pull request on the restored server", err)
	rurl := restored.GitURL("octo", "app", "octo", token)
	apptest.Git(t, wt, "fetch", "-q", rurl, "main")
	apptest.Git(t, wt, "checkout", "-q", "FETCH_HEAD")
	next := apptest.Commit(t, wt, "on the restored server", map[string]string{"next.txt": "n\n"})
	apptest.Git(t, wt, "push", "-q", rurl, "HEAD:refs/heads/main")
	if heads := branchHeads(t, appDir); heads["refs/heads/main"] != next {
		t.Errorf("main after a push to the restored server: %s, want %s (on the merge %s)", heads["refs/heads/main"], next, merged.GetSHA())
	}
	checkEventsAgreeWithGit(t, restored, token, "octo", "app", appDir)
}

// TestRestoreRefuses checks that restore takes only a complete, intact
// backup, into a new data directory, and leaves nothing behind when it
// refuses; and that backup takes only a new directory.
func TestRestoreRefuses(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octo := env.User("octo")
	token := env.Token(octo, "repo")
	env.Repo(octo, "app")
	_, _, err := env.Client(token).Repositories.CreateFile(ctx, "octo", "app", "README.md", &github.RepositoryContentFileOptions{
		Message: github.Ptr("first"), Content: []byte("hello\n")})
	apptest.Must(t, "contents write", err)
	db := copyDatabase(t, env)
	dir, _ := backupOf(t, env)
	database := db.restore(t)
	restoreArgs := func(from, into string) []string {
		args := []string{"restore", from, "--data", into}
		if database != "" {
			args = append(args, "--database", database)
		}
		return args
	}

	t.Run("non-empty data directory", func(t *testing.T) {
		into := t.TempDir()
		keep := filepath.Join(into, "forgeapi.db")
		if err := os.WriteFile(keep, []byte("mine"), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out := forgeapi(restoreArgs(dir, into)...)
		if code != 1 || !strings.Contains(out, "is not empty") {
			t.Errorf("restore into a non-empty directory: exit %d, %q", code, out)
		}
		if body, _ := os.ReadFile(keep); string(body) != "mine" {
			t.Errorf("restore changed a file of the non-empty directory: %q", body)
		}
	})
	t.Run("backup into a non-empty directory", func(t *testing.T) {
		args := []string{"backup", dir, "--data", env.DataDir}
		if env.Config.DatabaseURL != "" {
			args = append(args, "--database", env.Config.DatabaseURL)
		}
		if code, out := forgeapi(args...); code != 1 || !strings.Contains(out, "is not empty") {
			t.Errorf("backup into a non-empty directory: exit %d, %q", code, out)
		}
	})
	broken := func(t *testing.T, breakIt func(dir string)) string {
		copyDir := filepath.Join(t.TempDir(), "backup")
		copyTree(t, dir, copyDir)
		breakIt(copyDir)
		into := filepath.Join(t.TempDir(), "data")
		code, out := forgeapi(restoreArgs(copyDir, into)...)
		if code != 1 {
			t.Errorf("restore of a broken backup: exit %d, %q", code, out)
		}
		if _, err := os.Stat(into); !os.IsNotExist(err) {
			t.Errorf("a refused restore left %s behind (%v)", into, err)
		}
		return out
	}
	t.Run("restore cut short", func(t *testing.T) {
		into := t.TempDir()
		if err := os.WriteFile(filepath.Join(into, "RESTORE-IN-PROGRESS"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"user", "create", "mona"}, {"token", "list"}} {
			code, out := forgeapi(append(args, "--data", into)...)
			if code != 1 || !strings.Contains(out, "did not finish (RESTORE-IN-PROGRESS is there)") {
				t.Errorf("forgeapi %s on the data directory of a restore cut short: exit %d, %q", args[0], code, out)
			}
		}
		if _, err := os.Stat(filepath.Join(into, "forgeapi.db")); !os.IsNotExist(err) {
			t.Errorf("a command opened the store of a restore cut short (%v)", err)
		}
	})
	t.Run("corrupt object", func(t *testing.T) {
		out := broken(t, func(dir string) {
			objects, _ := filepath.Glob(filepath.Join(dir, "git", "1.git", "objects", "??", "*"))
			if len(objects) == 0 {
				t.Fatal("no loose object in the backup")
			}
			body, err := os.ReadFile(objects[0])
			if err != nil {
				t.Fatal(err)
			}
			body[len(body)/2] ^= 0xff
			if err := os.Chmod(objects[0], 0o644); err == nil {
				err = os.WriteFile(objects[0], body, 0o644)
			}
			if err != nil {
				t.Fatal(err)
			}
		})
		if !strings.Contains(out, "the backup is corrupt: git/1.git/objects/") {
			t.Errorf("restore of a corrupt backup: %q", out)
		}
	})
	t.Run("no manifest", func(t *testing.T) {
		out := broken(t, func(dir string) { _ = os.Remove(filepath.Join(dir, "manifest.json")) })
		if !strings.Contains(out, "is not a complete backup") {
			t.Errorf("restore of a backup without manifest: %q", out)
		}
	})
	t.Run("missing file", func(t *testing.T) {
		out := broken(t, func(dir string) { _ = os.RemoveAll(filepath.Join(dir, "git", "1.git", "refs")) })
		if !strings.Contains(out, "the backup is incomplete: git/1.git/refs/heads/main is missing") {
			t.Errorf("restore of a partial backup: %q", out)
		}
	})
	t.Run("truncated database", func(t *testing.T) {
		if database != "" {
			t.Skip("the backup of a PostgreSQL forge holds no database")
		}
		out := broken(t, func(dir string) { _ = os.Truncate(filepath.Join(dir, "forgeapi.db"), 4096) })
		if !strings.Contains(out, "the backup is corrupt: forgeapi.db") {
			t.Errorf("restore of a truncated database: %q", out)
		}
	})

	// Each refusal above stands on its own; so does the restore that works.
	t.Run("a complete backup restores into a new directory and serves", func(t *testing.T) {
		into := filepath.Join(t.TempDir(), "data")
		if code, out := forgeapi(restoreArgs(dir, into)...); code != 0 || !strings.Contains(out, "restored 1 repositories") {
			t.Fatalf("restore: exit %d, %q", code, out)
		}
		cfg := env.Config
		cfg.Addr, cfg.DataDir, cfg.DatabaseURL = "127.0.0.1:0", into, database
		restored := apptest.StartConfig(t, cfg)
		resp, body := restored.Do(http.MethodGet, "/repos/octo/app/contents/README.md", token, nil)
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), base64.StdEncoding.EncodeToString([]byte("hello\n"))) {
			t.Errorf("README.md after restore: %d %s", resp.StatusCode, body)
		}
	})
}

// copyTree copies the directory src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		body, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, body, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestBackupWithoutKeys: a backup made with --without-keys holds no key
// file; restore says so, and the restored forge, given the key files of
// the backed-up data directory, signs its webhooks with the secrets
// sealed before.
func TestBackupWithoutKeys(t *testing.T) {
	t.Parallel()
	rc := apptest.NewReceiver(t, "s3cret")
	env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	octo := env.User("octo")
	token := env.Token(octo, "repo", "admin:repo_hook")
	env.Repo(octo, "app")
	hook, _, err := env.Client(token).Repositories.CreateHook(ctx, "octo", "app", &github.Hook{Events: []string{"push"},
		Config: &github.HookConfig{URL: github.Ptr(rc.URL), ContentType: github.Ptr("json"), Secret: github.Ptr("s3cret")}})
	apptest.Must(t, "create hook", err)
	db := copyDatabase(t, env)
	dir := filepath.Join(t.TempDir(), "backup")
	args := []string{"backup", dir, "--without-keys", "--data", env.DataDir}
	if env.Config.DatabaseURL != "" {
		args = append(args, "--database", env.Config.DatabaseURL)
	}
	if code, out := forgeapi(args...); code != 0 || !strings.Contains(out, "the key files (webhook.key, blob-signing.key, tls/, ssh/, signing/) were left out") {
		t.Fatalf("backup --without-keys: exit %d, %q", code, out)
	}
	for _, name := range []string{"webhook.key", "blob-signing.key", "ssh", "signing"} {
		if _, err := os.Stat(filepath.Join(dir, name)); !os.IsNotExist(err) {
			t.Errorf("backup --without-keys holds %s (%v)", name, err)
		}
	}
	cfg := env.Config
	cfg.Addr, cfg.DataDir, cfg.DatabaseURL = "127.0.0.1:0", filepath.Join(t.TempDir(), "data"), db.restore(t)
	args = []string{"restore", dir, "--data", cfg.DataDir}
	if cfg.DatabaseURL != "" {
		args = append(args, "--database", cfg.DatabaseURL)
	}
	if code, out := forgeapi(args...); code != 0 || !strings.Contains(out, "the backup has no webhook.key") {
		t.Fatalf("restore: exit %d, %q", code, out)
	}
	key, err := os.ReadFile(filepath.Join(env.DataDir, "webhook.key"))
	if err == nil {
		err = os.WriteFile(filepath.Join(cfg.DataDir, "webhook.key"), key, 0o600)
	}
	apptest.Must(t, "copy webhook.key", err)
	restored := apptest.StartConfig(t, cfg)
	_, err = restored.Client(token).Repositories.PingHook(ctx, "octo", "app", hook.GetID())
	apptest.Must(t, "ping", err)
	rc.WaitCount(t, func(d apptest.Delivery) string { return d.Event }, 2) // the ping at creation, and this one, both signed
}
