package repository_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apptest"
	"forgeapi/internal/repos"
	"forgeapi/internal/testwait"
)

// fixture is a running server with an organization, its owner and a
// classic token of the owner with the scopes migrations need.
type fixture struct {
	t      *testing.T
	env    *apptest.Env
	owner  *accounts.Account
	org    *accounts.Account
	token  string
	client *github.Client
	git    gitRunner
}

func newFixture(t *testing.T, opts ...apptest.Option) *fixture {
	t.Helper()
	env := apptest.Start(t, opts...)
	owner := env.User(apptest.Unique("owner"))
	org := env.Org(apptest.Unique("org"), owner)
	token := env.Token(owner, "repo", "admin:org")
	return &fixture{t: t, env: env, owner: owner, org: org, token: token, client: env.Client(token), git: newGitRunner(t)}
}

// path is an API path under the fixture's organization.
func (f *fixture) path(format string, args ...any) string {
	return "/orgs/" + f.org.Login + fmt.Sprintf(format, args...)
}

// gitEnv isolates git from the machine's and the user's configuration.
func gitEnv(home string) []string {
	return []string{
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0",
		"GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.com",
		"GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test@example.com",
	}
}

// gitRunner runs the git CLI with an isolated configuration.
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
func (g gitRunner) run(dir string, args ...string) string {
	g.tb.Helper()
	out, err := g.try(dir, args...)
	if err != nil {
		g.tb.Fatal(err)
	}
	return out
}

// try runs git with args in dir and returns its trimmed standard output,
// or an error holding its standard error.
func (g gitRunner) try(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-c", "init.defaultBranch=main", "-c", "credential.helper="}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), g.env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return strings.TrimSpace(stdout.String()), nil
}

// refs lists "objectname refname" of every ref of the repository at dir.
func (g gitRunner) refs(dir string) string {
	g.tb.Helper()
	return g.run(dir, "for-each-ref", "--format=%(objectname) %(refname)")
}

// commits lists every commit reachable from any ref of the repository.
func (g gitRunner) commits(dir string) string {
	g.tb.Helper()
	return g.run(dir, "rev-list", "--all")
}

// pushHistory makes a history in a working repository (commits on main,
// a feature branch, an annotated and a light tag, distinct per seed) and
// pushes all of it with the git CLI over HTTP to the server, as the
// organization's owner.
func (f *fixture) pushHistory(repo *repos.Repository, seed string) {
	f.t.Helper()
	g := f.git
	work := f.t.TempDir()
	g.run(work, "init", "-q")
	for i, name := range []string{"README.md", "src/main.go", "docs/guide.md"} {
		writeFileAt(f.t, filepath.Join(work, name), strings.Repeat(seed+" "+name+"\n", i+1))
		g.run(work, "add", name)
		g.run(work, "commit", "-q", "-m", seed+": add "+name)
	}
	g.run(work, "tag", "-a", "v1.0.0", "-m", "release of "+seed)
	g.run(work, "checkout", "-q", "-b", "feature")
	writeFileAt(f.t, filepath.Join(work, "feature.txt"), seed)
	g.run(work, "add", "feature.txt")
	g.run(work, "commit", "-q", "-m", seed+": feature")
	g.run(work, "tag", "light")
	g.run(work, "push", "-q", f.gitURL(repo.Name), "refs/heads/*:refs/heads/*", "refs/tags/*:refs/tags/*")
}

// gitURL is the clone URL of the organization's repository, with the
// owner's token in it.
func (f *fixture) gitURL(repo string) string {
	return f.env.GitURL(f.org.Login, repo, f.owner.Login, f.token)
}

func writeFileAt(tb testing.TB, path, content string) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		tb.Fatal(err)
	}
}

// migrationJSON is the subset of the migration object the tests read
// through raw requests.
type migrationJSON struct {
	ID                   int64             `json:"id"`
	NodeID               string            `json:"node_id"`
	GUID                 string            `json:"guid"`
	State                string            `json:"state"`
	Owner                map[string]any    `json:"owner"`
	LockRepositories     bool              `json:"lock_repositories"`
	ExcludeMetadata      bool              `json:"exclude_metadata"`
	ExcludeGitData       bool              `json:"exclude_git_data"`
	ExcludeAttachments   bool              `json:"exclude_attachments"`
	ExcludeReleases      bool              `json:"exclude_releases"`
	ExcludeOwnerProjects bool              `json:"exclude_owner_projects"`
	OrgMetadataOnly      bool              `json:"org_metadata_only"`
	Exclude              []string          `json:"exclude"`
	Repositories         []json.RawMessage `json:"repositories"`
	URL                  string            `json:"url"`
	ArchiveURL           string            `json:"archive_url"`
	CreatedAt            string            `json:"created_at"`
	UpdatedAt            string            `json:"updated_at"`
}

// start posts body to start a migration and returns it; the status must
// be 201.
func (f *fixture) start(body string) migrationJSON {
	f.t.Helper()
	resp, data := f.env.DoJSON("POST", f.path("/migrations"), f.token, body)
	if resp.StatusCode != http.StatusCreated {
		f.t.Fatalf("start migration: %d %s", resp.StatusCode, data)
	}
	var m migrationJSON
	mustUnmarshal(f.t, data, &m)
	return m
}

func mustUnmarshal(tb testing.TB, data []byte, v any) {
	tb.Helper()
	if err := json.Unmarshal(data, v); err != nil {
		tb.Fatalf("decode %s: %v", data, err)
	}
}

// get reads the migration through the API.
func (f *fixture) get(id int64) migrationJSON {
	f.t.Helper()
	resp, data := f.env.Do("GET", f.path("/migrations/%d", id), f.token, nil)
	if resp.StatusCode != http.StatusOK {
		f.t.Fatalf("get migration %d: %d %s", id, resp.StatusCode, data)
	}
	var m migrationJSON
	mustUnmarshal(f.t, data, &m)
	return m
}

// waitState polls the migration until its state is want, failing on any
// other final state at once.
func (f *fixture) waitState(id int64, want string) migrationJSON {
	f.t.Helper()
	var m migrationJSON
	testwait.For(f.t, fmt.Sprintf("migration %d to be %s", id, want), func() error {
		if m = f.get(id); m.State != want {
			if m.State == "failed" || m.State == "exported" {
				f.t.Fatalf("migration %d is %s, want %s", id, m.State, want)
			}
			return fmt.Errorf("it is %s", m.State)
		}
		return nil
	})
	return m
}

// download fetches the archive through the 302 of GET .../archive with
// the HTTP client (nil: http.DefaultClient), unpacks it into a new
// directory and returns the directory and the archive's entry names.
func (f *fixture) download(id int64, client *http.Client) (string, []string) {
	f.t.Helper()
	url, err := f.client.Migrations.MigrationArchiveURL(apptest.Ctx(), f.org.Login, id)
	if err != nil {
		f.t.Fatalf("archive URL: %v", err)
	}
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Get(url)
	if err != nil {
		f.t.Fatalf("download archive: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		f.t.Fatalf("download archive: %d %s", resp.StatusCode, body)
	}
	dir := f.t.TempDir()
	return dir, untar(f.t, resp.Body, dir)
}

// untar unpacks a gzip-compressed tar stream into dir and returns the
// entry names in order.
func untar(tb testing.TB, r io.Reader, dir string) []string {
	tb.Helper()
	gz, err := gzip.NewReader(r)
	if err != nil {
		tb.Fatalf("archive is not gzip: %v", err)
	}
	tr := tar.NewReader(gz)
	var names []string
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return names
		}
		if err != nil {
			tb.Fatalf("read archive: %v", err)
		}
		if !filepath.IsLocal(hdr.Name) {
			tb.Fatalf("archive entry %q escapes the archive root", hdr.Name)
		}
		names = append(names, hdr.Name)
		target := filepath.Join(dir, filepath.FromSlash(hdr.Name))
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				tb.Fatal(err)
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				tb.Fatal(err)
			}
			out, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o644)
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

// topLevel returns the sorted top-level names of an archive's entries.
func topLevel(names []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range names {
		top, _, _ := strings.Cut(strings.TrimSuffix(n, "/"), "/")
		if !seen[top] {
			seen[top] = true
			out = append(out, top)
		}
	}
	sort.Strings(out)
	return out
}

// readJSONFile decodes the archive file at dir/name into v.
func readJSONFile(tb testing.TB, dir, name string, v any) {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		tb.Fatal(err)
	}
	mustUnmarshal(tb, data, v)
}

// checkClone clones repositories/<org>/<repo>.git of an unpacked archive
// with git and checks its refs and commits against the source repository.
func (f *fixture) checkClone(dir string, repo *repos.Repository) {
	f.t.Helper()
	exported := filepath.Join(dir, "repositories", f.org.Login, repo.Name+".git")
	clone := filepath.Join(f.t.TempDir(), repo.Name+".git")
	f.git.run(f.t.TempDir(), "clone", "-q", "--mirror", exported, clone)
	source := f.env.App.Repos.GitDir(repo.ID)
	if got, want := f.git.refs(clone), f.git.refs(source); got != want {
		f.t.Errorf("%s: refs of the clone differ from the source:\n%s\nwant:\n%s", repo.Name, got, want)
	}
	if got, want := f.git.commits(clone), f.git.commits(source); got != want {
		f.t.Errorf("%s: commits of the clone differ from the source", repo.Name)
	}
	f.git.run(exported, "fsck", "--full", "--strict")
}
