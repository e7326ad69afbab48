package archive_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"forgeapi/internal/orgmigration/archive"
)

// gitEnv isolates git from the machine's and the user's configuration.
func gitEnv(home string) []string {
	return []string{
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.com",
		"GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test@example.com",
		"GIT_AUTHOR_DATE=2026-03-10T12:00:00Z", "GIT_COMMITTER_DATE=2026-03-10T12:00:00Z",
	}
}

// gitRunner runs git commands with an isolated configuration.
type gitRunner struct {
	tb  testing.TB
	env []string
}

func newGitRunner(tb testing.TB) gitRunner {
	tb.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		tb.Skip("git is not installed")
	}
	return gitRunner{tb: tb, env: gitEnv(tb.TempDir())}
}

// run runs git with args in dir and returns its trimmed standard output.
// It must be called from the test's goroutine.
func (g gitRunner) run(dir string, args ...string) string {
	g.tb.Helper()
	out, err := g.try(dir, args...)
	if err != nil {
		g.tb.Fatal(err)
	}
	return out
}

// try is run for any goroutine: it returns the error instead of failing.
func (g gitRunner) try(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), g.env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return strings.TrimSpace(stdout.String()), nil
}

// refs returns "objectname refname" lines of every ref of repo, and HEAD.
func (g gitRunner) refs(repo string) (refs, head string) {
	g.tb.Helper()
	return g.run(repo, "for-each-ref", "--format=%(objectname) %(refname)"), g.run(repo, "symbolic-ref", "HEAD")
}

// makeSourceRepository builds a bare repository with branches, an
// annotated and a light tag, a note, packed and loose refs, a custom hook
// and a stale lock file, and returns its path.
func makeSourceRepository(g gitRunner, root string) string {
	g.tb.Helper()
	work := filepath.Join(root, "work")
	bare := filepath.Join(root, "source.git")
	g.run(root, "init", "-q", work)
	for i, name := range []string{"README.md", "main.go", "docs/guide.md"} {
		path := filepath.Join(work, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			g.tb.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(strings.Repeat(name, i+1)), 0o644); err != nil {
			g.tb.Fatal(err)
		}
		g.run(work, "add", name)
		g.run(work, "commit", "-q", "-m", "add "+name)
	}
	g.run(work, "tag", "-a", "v1.0.0", "-m", "release")
	g.run(work, "checkout", "-q", "-b", "feature")
	if err := os.WriteFile(filepath.Join(work, "feature.txt"), []byte("feature"), 0o644); err != nil {
		g.tb.Fatal(err)
	}
	g.run(work, "add", "feature.txt")
	g.run(work, "commit", "-q", "-m", "feature")
	g.run(work, "tag", "light")
	g.run(work, "notes", "add", "-m", "a note")
	g.run(root, "clone", "-q", "--bare", work, bare)
	g.run(work, "push", "-q", bare, "refs/notes/*:refs/notes/*")
	g.run(bare, "pack-refs", "--all")
	g.run(work, "checkout", "-q", "main")
	g.run(work, "commit", "-q", "--allow-empty", "-m", "loose ref update")
	g.run(work, "push", "-q", bare, "main")
	writeFile(g.tb, filepath.Join(bare, "hooks", "pre-receive"), "#!/bin/sh\nexit 0\n")
	writeFile(g.tb, filepath.Join(bare, "refs", "heads", "stale.lock"), "junk")
	return bare
}

func writeFile(tb testing.TB, path, content string) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
		tb.Fatal(err)
	}
}

// extract unpacks the gzip-compressed tar archive at file into dir and
// returns the names of its entries in order.
func extract(tb testing.TB, file, dir string) []string {
	tb.Helper()
	f, err := os.Open(file)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		tb.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var names []string
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return names
		}
		if err != nil {
			tb.Fatal(err)
		}
		names = append(names, hdr.Name)
		if !filepath.IsLocal(hdr.Name) {
			tb.Fatalf("archive entry %q escapes the archive root", hdr.Name)
		}
		target := filepath.Join(dir, filepath.FromSlash(hdr.Name))
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				tb.Fatal(err)
			}
		case tar.TypeReg:
			out, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_EXCL, os.FileMode(hdr.Mode))
			if err != nil {
				tb.Fatal(err)
			}
			if _, err := io.Copy(out, tr); err != nil {
				tb.Fatal(err)
			}
			out.Close()
		default:
			tb.Fatalf("unexpected entry type %c for %s", hdr.Typeflag, hdr.Name)
		}
	}
}

func writeArchive(tb testing.TB, file string, write func(w *archive.Writer) error) {
	tb.Helper()
	f, err := os.Create(file)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	w := archive.NewWriter(f)
	if err := write(w); err != nil {
		tb.Fatal(err)
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
}

func TestWriterExportsRepositoriesAndMetadata(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g := newGitRunner(t)
	root := t.TempDir()
	source := makeSourceRepository(g, root)
	empty := filepath.Join(root, "empty.git")
	g.run(root, "init", "-q", "--bare", empty)

	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	orgURL := "https://forge.example.com/octo-org"
	file := filepath.Join(root, "archive.tar.gz")
	writeArchive(t, file, func(w *archive.Writer) error {
		w.TempDir = t.TempDir()
		w.GitEnv = g.env
		return errors.Join(
			w.WriteSchema(),
			w.AddJSON(archive.OrganizationsFile, []archive.Organization{{
				Type: "organization", URL: orgURL, Login: "octo-org", Name: "Octo",
				Members:   []archive.OrganizationMember{{User: "https://forge.example.com/mona", Role: "admin", State: "active"}},
				CreatedAt: created,
			}}),
			w.AddJSON(archive.UsersFile, []archive.User{{
				Type: "user", URL: "https://forge.example.com/mona", Login: "mona",
				Emails: []archive.UserEmail{{Address: "mona@example.com", Primary: true}}, CreatedAt: created,
			}}),
			w.AddJSON(archive.RepositoriesFile, []archive.Repository{{
				Type: "repository", URL: orgURL + "/hello-world", Owner: orgURL, Name: "hello-world",
				Labels: []archive.Label{}, Collaborators: []any{}, Webhooks: []any{}, PublicKeys: []any{},
				GitURL: archive.GitURL("octo-org", "hello-world"), DefaultBranch: "main", CreatedAt: created,
			}}),
			w.AddJSON("teams_000001.json", []archive.Organization(nil)),
			w.AddBareRepository(ctx, "octo-org", "hello-world", source),
			w.AddBareRepository(ctx, "octo-org", "empty", empty),
		)
	})

	out := t.TempDir()
	names := extract(t, file, out)
	checkJSONArrays(t, out, map[string]int{
		archive.SchemaFile: -1, archive.OrganizationsFile: 1, archive.UsersFile: 1,
		archive.RepositoriesFile: 1, "teams_000001.json": 0,
	})
	for _, name := range names {
		if strings.Contains(name, "/hooks") || strings.HasSuffix(name, ".lock") {
			t.Errorf("archive holds %s; hooks and lock files must stay out", name)
		}
	}

	for repo, src := range map[string]string{"hello-world": source, "empty": empty} {
		exported := filepath.Join(out, "repositories", "octo-org", repo+".git")
		wantRefs, wantHead := g.refs(src)
		gotRefs, gotHead := g.refs(exported)
		if gotRefs != wantRefs || gotHead != wantHead {
			t.Errorf("%s: exported refs\n%s\nHEAD %s\nwant\n%s\nHEAD %s", repo, gotRefs, gotHead, wantRefs, wantHead)
		}
		if remotes := g.run(exported, "remote"); remotes != "" {
			t.Errorf("%s: exported repository has remotes %q naming the server's paths", repo, remotes)
		}
		g.run(exported, "fsck", "--strict", "--no-progress")

		clone := filepath.Join(t.TempDir(), repo+".git")
		g.run(root, "clone", "-q", "--mirror", exported, clone)
		if cloneRefs, _ := g.refs(clone); cloneRefs != wantRefs {
			t.Errorf("%s: refs of a clone of the exported repository\n%s\nwant\n%s", repo, cloneRefs, wantRefs)
		}
	}
}

// checkJSONArrays checks that each file under dir parses; want gives the
// length of the array it must hold, or -1 for an object.
func checkJSONArrays(t *testing.T, dir string, want map[string]int) {
	t.Helper()
	for name, length := range want {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("archive lacks %s: %v", name, err)
			continue
		}
		if length < 0 {
			var schema archive.Schema
			if err := json.Unmarshal(data, &schema); err != nil || schema.Version != archive.SchemaVersion {
				t.Errorf("%s = %s (%v), want version %s", name, data, err, archive.SchemaVersion)
			}
			continue
		}
		var records []map[string]any
		if err := json.Unmarshal(data, &records); err != nil || len(records) != length {
			t.Errorf("%s = %s (%v), want an array of %d records", name, data, err, length)
			continue
		}
		for _, r := range records {
			if r["type"] == "" || r["url"] == "" {
				t.Errorf("%s: record %v lacks type or url", name, r)
			}
		}
	}
}

func TestWriterRejectsBadInput(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g := newGitRunner(t)
	var buf bytes.Buffer
	w := archive.NewWriter(&buf)
	w.TempDir = t.TempDir()
	w.GitEnv = g.env

	if err := w.AddJSON("users_000001.json", map[string]string{"not": "an array"}); err == nil {
		t.Error("AddJSON accepted an object")
	}
	for _, name := range []string{"../x.json", "dir/x.json", "x.txt", ""} {
		if err := w.AddJSON(name, []int{}); err == nil {
			t.Errorf("AddJSON accepted name %q", name)
		}
	}
	for _, pair := range [][2]string{{"..", "r"}, {"o", ".."}, {"o/x", "r"}, {"o", ""}, {"o", "r/../x"}} {
		if err := w.AddBareRepository(ctx, pair[0], pair[1], t.TempDir()); err == nil {
			t.Errorf("AddBareRepository accepted %q/%q", pair[0], pair[1])
		}
	}
	if err := w.AddBareRepository(ctx, "o", "missing", filepath.Join(t.TempDir(), "missing.git")); err == nil {
		t.Error("AddBareRepository accepted a missing source")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	source := makeSourceRepository(g, t.TempDir())
	if err := w.AddBareRepository(cancelled, "o", "r", source); err == nil {
		t.Error("AddBareRepository succeeded with a cancelled context")
	}
}

func TestWriterAfterClose(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	w := archive.NewWriter(&buf)
	if err := w.WriteSchema(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("second Close = %v, want nil", err)
	}
	if err := w.AddJSON(archive.UsersFile, []int{}); !errors.Is(err, archive.ErrClosed) {
		t.Fatalf("AddJSON after Close = %v, want ErrClosed", err)
	}
	gz, err := gzip.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	hdr, err := tar.NewReader(gz).Next()
	if err != nil || hdr.Name != archive.SchemaFile {
		t.Fatalf("first entry = %v, %v; want %s", hdr, err, archive.SchemaFile)
	}
}

// failingWriter accepts limit bytes, then fails.
type failingWriter struct{ limit int }

func (f *failingWriter) Write(p []byte) (int, error) {
	if len(p) > f.limit {
		return 0, errors.New("disk full")
	}
	f.limit -= len(p)
	return len(p), nil
}

func TestWriterErrorsStick(t *testing.T) {
	t.Parallel()
	g := newGitRunner(t)
	source := makeSourceRepository(g, t.TempDir())
	w := archive.NewWriter(&failingWriter{limit: 100})
	w.TempDir = t.TempDir()
	w.GitEnv = g.env
	err := w.AddBareRepository(context.Background(), "o", "r", source)
	if err == nil {
		err = w.Close() // gzip may buffer everything until Close
	}
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("writing to a failing destination = %v, want disk full", err)
	}
	if err := w.WriteSchema(); err == nil {
		t.Fatal("WriteSchema after a failed write succeeded")
	}
}

// TestWriterSnapshotsDuringPushes exports a repository while another
// goroutine keeps pushing to it: every export must be a complete,
// consistent repository whatever the interleaving.
func TestWriterSnapshotsDuringPushes(t *testing.T) {
	t.Parallel()
	g := newGitRunner(t)
	root := t.TempDir()
	source := makeSourceRepository(g, root)
	work := filepath.Join(root, "work")

	stop := make(chan struct{})
	pushed := make(chan error, 1)
	go func() {
		pushed <- pushUntilStopped(g, work, source, stop)
	}()
	const exports = 4
	for i := range exports {
		file := filepath.Join(root, fmt.Sprintf("archive-%d.tar.gz", i))
		writeArchive(t, file, func(w *archive.Writer) error {
			w.TempDir = t.TempDir()
			w.GitEnv = g.env
			return w.AddBareRepository(context.Background(), "o", "r", source)
		})
		out := t.TempDir()
		extract(t, file, out)
		exported := filepath.Join(out, "repositories", "o", "r.git")
		g.run(exported, "fsck", "--strict", "--no-progress")
		g.run(exported, "rev-list", "--all", "--objects")
	}
	close(stop)
	if err := <-pushed; err != nil {
		t.Fatal(err)
	}
}

// pushUntilStopped commits a change and pushes it to main of bare, again
// and again until stop closes.
func pushUntilStopped(g gitRunner, work, bare string, stop <-chan struct{}) error {
	for i := 0; ; i++ {
		select {
		case <-stop:
			return nil
		default:
		}
		if err := os.WriteFile(filepath.Join(work, "pushed.txt"), []byte(fmt.Sprint(i)), 0o644); err != nil {
			return err
		}
		if _, err := g.try(work, "add", "pushed.txt"); err != nil {
			return err
		}
		if _, err := g.try(work, "commit", "-q", "-m", fmt.Sprint("push ", i)); err != nil {
			return err
		}
		if _, err := g.try(work, "push", "-q", bare, "main"); err != nil {
			return err
		}
	}
}

// TestWriterCopiesAlternateObjects exports a repository that borrows its
// objects from another (a fork made with clone --shared): the export must
// hold them itself.
func TestWriterCopiesAlternateObjects(t *testing.T) {
	t.Parallel()
	g := newGitRunner(t)
	root := t.TempDir()
	parent := makeSourceRepository(g, root)
	fork := filepath.Join(root, "fork.git")
	g.run(root, "clone", "-q", "--bare", "--shared", parent, fork)

	file := filepath.Join(root, "archive.tar.gz")
	writeArchive(t, file, func(w *archive.Writer) error {
		w.TempDir = t.TempDir()
		w.GitEnv = g.env
		return w.AddBareRepository(context.Background(), "o", "fork", fork)
	})
	out := t.TempDir()
	names := extract(t, file, out)
	for _, name := range names {
		if strings.HasSuffix(name, "objects/info/alternates") {
			t.Fatalf("archive holds %s", name)
		}
	}
	exported := filepath.Join(out, "repositories", "o", "fork.git")
	g.run(exported, "fsck", "--strict", "--no-progress")
	wantRefs, _ := g.refs(fork)
	if gotRefs, _ := g.refs(exported); gotRefs != wantRefs {
		t.Fatalf("exported refs\n%s\nwant\n%s", gotRefs, wantRefs)
	}
}
