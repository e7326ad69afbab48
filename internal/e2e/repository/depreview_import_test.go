package repository_test

import (
	"archive/zip"
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"forgeapi/internal/apptest"
	"forgeapi/internal/cli"
	"forgeapi/internal/depreview/advisorydb"
)

// runCLI runs `forgeapi ARGS...` against env's data directory and database.
func runCLI(t *testing.T, env *apptest.Env, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	full := append([]string{"--data", env.DataDir, "--database", env.Config.DatabaseURL}, args...)
	code = cli.Execute(context.Background(), full, &out, &errOut)
	return code, out.String(), errOut.String()
}

// copyDir copies the test advisory database into a new directory.
func copyAdvisories(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir("testdata/advisories", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel("testdata/advisories", p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	apptest.Must(t, "copy advisories", err)
	return dst
}

// zipDir writes the *.json files of dir into a new zip archive.
func zipDir(t *testing.T, dir string) string {
	t.Helper()
	name := filepath.Join(t.TempDir(), "advisories.zip")
	f, err := os.Create(name)
	apptest.Must(t, "create zip", err)
	zw := zip.NewWriter(f)
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		w, err := zw.Create("advisory-database-main/advisories/" + filepath.ToSlash(rel))
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	})
	apptest.Must(t, "write zip", err)
	apptest.Must(t, "close zip", zw.Close())
	apptest.Must(t, "close zip file", f.Close())
	return name
}

// storedState is the row count and version of the advisory tables.
func storedState(t *testing.T, env *apptest.Env) (count int, version int64) {
	t.Helper()
	apptest.Must(t, "count advisories", env.Q().QueryRowContext(context.Background(), `SELECT count(*) FROM advisories`).Scan(&count))
	version, err := advisorydb.Version(context.Background(), env.Q())
	apptest.Must(t, "advisory version", err)
	return count, version
}

func TestAdvisoriesImportCommand(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	dir := copyAdvisories(t)
	steps := []struct {
		name   string
		edit   func()
		path   func() string
		stdout string
	}{
		{"first import of a directory", nil, func() string { return dir },
			"imported 5 advisories: 5 added, 0 updated, 0 unchanged\n"},
		{"the same directory again", nil, func() string { return dir },
			"imported 5 advisories: 0 added, 0 updated, 5 unchanged\n"},
		{"the same files as a zip", nil, func() string { return zipDir(t, dir) },
			"imported 5 advisories: 0 added, 0 updated, 5 unchanged\n"},
		{"reformatted JSON is unchanged", func() {
			reformat(t, filepath.Join(dir, "go", "GO-2024-0001.json"))
		}, func() string { return dir }, "imported 5 advisories: 0 added, 0 updated, 5 unchanged\n"},
		{"one changed, one new, as a zip", func() {
			rewrite(t, filepath.Join(dir, "npm", "GHSA-aaaa-bbbb-cccc.json"), "Prototype pollution in alpha", "Prototype pollution in alpha (updated)")
			writeTempFile(t, filepath.Join(dir, "npm", "nested", "GHSA-zzzz-zzzz-zzzz.json"),
				`{"id": "GHSA-zzzz-zzzz-zzzz", "summary": "new", "affected": [{"package": {"ecosystem": "npm", "name": "zulu"}, "versions": ["1.0.0"]}]}`)
		}, func() string { return zipDir(t, dir) }, "imported 6 advisories: 1 added, 1 updated, 4 unchanged\n"},
	}
	var lastVersion int64
	for _, s := range steps {
		if s.edit != nil {
			s.edit()
		}
		code, stdout, stderr := runCLI(t, env, "advisories", "import", s.path())
		if code != 0 || stdout != s.stdout {
			t.Fatalf("%s: exit %d, stdout %q, stderr %q; want stdout %q", s.name, code, stdout, stderr, s.stdout)
		}
		count, version := storedState(t, env)
		changed := !strings.Contains(s.stdout, " 0 added, 0 updated")
		if changed != (version > lastVersion) || version < lastVersion {
			t.Errorf("%s: version %d after %d", s.name, version, lastVersion)
		}
		if want := strings.Fields(s.stdout)[1]; jsonInt(count) != want {
			t.Errorf("%s: %d rows stored, want %s", s.name, count, want)
		}
		lastVersion = version
	}
}

func TestAdvisoriesImportRejectsBadInput(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	if code, _, stderr := runCLI(t, env, "advisories", "import", copyAdvisories(t)); code != 0 {
		t.Fatalf("import: %s", stderr)
	}
	wantCount, wantVersion := storedState(t, env)

	invalid := copyAdvisories(t)
	rewrite(t, filepath.Join(invalid, "npm", "GHSA-aaaa-bbbb-cccc.json"), "Prototype pollution in alpha", "changed")
	writeTempFile(t, filepath.Join(invalid, "pypi", "broken.json"), `{"id": "PYSEC-X", "affected": [`)
	noID := copyAdvisories(t)
	writeTempFile(t, filepath.Join(noID, "x.json"), `{"summary": "no id"}`)
	notZip := filepath.Join(t.TempDir(), "advisories.zip")
	writeTempFile(t, notZip, "this is not a zip archive")

	tests := []struct {
		name, path, stderr string
	}{
		{"an invalid file among valid ones", invalid, "broken.json"},
		{"an invalid file in a zip", zipDir(t, invalid), "broken.json"},
		{"a document without an id", noID, "missing id"},
		{"a missing path", filepath.Join(t.TempDir(), "nope"), "no such file or directory"},
		{"a file that is not a zip", notZip, "neither a directory nor a readable zip archive"},
		{"an empty directory", t.TempDir(), "no OSV advisory files"},
	}
	for _, tt := range tests {
		code, stdout, stderr := runCLI(t, env, "advisories", "import", tt.path)
		if code == 0 || stdout != "" || !strings.Contains(stderr, tt.stderr) ||
			!strings.HasSuffix(stderr, "\n") || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want a one-line error with %q", tt.name, code, stdout, stderr, tt.stderr)
		}
		if count, version := storedState(t, env); count != wantCount || version != wantVersion {
			t.Errorf("%s: stored %d advisories at version %d, want %d at %d", tt.name, count, version, wantCount, wantVersion)
		}
	}
	if code, _, _ := runCLI(t, env, "advisories", "import"); code == 0 {
		t.Error("import without PATH succeeded")
	}
}

// TestRunningServerSeesImports imports with the command while the server
// runs: its next comparison uses the new advisories, without a restart.
func TestRunningServerSeesImports(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	repo := env.Repo(env.User("octo"), "app")
	c := newClone(t, env, repo, repo.Owner)
	lock := manifestKinds[2]
	c.commit("base", map[string]*string{lock.path: lock.content(nil)})
	c.git("checkout", "-q", "-b", "topic")
	c.commit("add alpha", map[string]*string{lock.path: lock.content([]pkg{{"alpha", "1.0.0", false}})})
	c.push("main", "topic")
	path := comparePath(repo, "main...topic")
	summary := func() string {
		items := getJSON(t, env, path, "")
		if len(items) != 1 {
			t.Fatalf("got %d items, want 1", len(items))
		}
		if len(items[0].Vulnerabilities) == 0 {
			return ""
		}
		return items[0].Vulnerabilities[0].AdvisorySummary
	}
	if got := summary(); got != "" {
		t.Fatalf("before any import: vulnerability %q", got)
	}
	dir := copyAdvisories(t)
	if code, _, stderr := runCLI(t, env, "advisories", "import", dir); code != 0 {
		t.Fatal(stderr)
	}
	if got := summary(); got != "Prototype pollution in alpha" {
		t.Fatalf("after import: %q", got)
	}
	rewrite(t, filepath.Join(dir, "npm", "GHSA-aaaa-bbbb-cccc.json"), "Prototype pollution in alpha", "Prototype pollution in alpha, revised")
	if code, _, stderr := runCLI(t, env, "advisories", "import", dir); code != 0 {
		t.Fatal(stderr)
	}
	if got := summary(); got != "Prototype pollution in alpha, revised" {
		t.Fatalf("after update: %q", got)
	}
}

func writeTempFile(t *testing.T, name, content string) {
	t.Helper()
	apptest.Must(t, "mkdir", os.MkdirAll(filepath.Dir(name), 0o755))
	apptest.Must(t, "write "+name, os.WriteFile(name, []byte(content), 0o644))
}

// rewrite replaces old by new in the file, failing when old is absent.
func rewrite(t *testing.T, name, old, new string) {
	t.Helper()
	data, err := os.ReadFile(name)
	apptest.Must(t, "read", err)
	if !bytes.Contains(data, []byte(old)) {
		t.Fatalf("%s does not contain %q", name, old)
	}
	writeTempFile(t, name, strings.Replace(string(data), old, new, 1))
}

// reformat changes only the JSON whitespace of the file.
func reformat(t *testing.T, name string) {
	t.Helper()
	data, err := os.ReadFile(name)
	apptest.Must(t, "read", err)
	writeTempFile(t, name, strings.ReplaceAll(string(data), "\n", "\n\t \n"))
}
