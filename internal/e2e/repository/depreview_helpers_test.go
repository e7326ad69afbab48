package repository_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apptest"
	"forgeapi/internal/depreview/advisorydb"
	"forgeapi/internal/repos"
)

// clone is a working clone whose commits the tests push to the server
// with the git CLI, over the server's git smart HTTP.
type clone struct {
	t      testing.TB
	dir    string
	env    []string
	remote string
	tick   int
}

// newClone returns an empty working clone that pushes to repo as pusher
// (who must be allowed to push: the owner, or an owner of the owning
// organization).
func newClone(t testing.TB, env *apptest.Env, repo *repos.Repository, pusher *accounts.Account) *clone {
	t.Helper()
	token := env.Token(pusher, "repo")
	c := &clone{t: t, dir: t.TempDir(), remote: env.GitURL(repo.Owner.Login, repo.Name, pusher.Login, token),
		env: append(apptest.GitEnv(t.TempDir()), "GIT_AUTHOR_NAME=Ada", "GIT_COMMITTER_NAME=Ada")}
	c.git("init", "-q", "-b", "main")
	return c
}

// git runs git in the clone and returns its trimmed output.
func (c *clone) git(args ...string) string {
	c.t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "credential.helper="}, args...)...)
	cmd.Dir = c.dir
	c.tick++
	date := fmt.Sprintf("@%d +0000", 1700000000+c.tick)
	cmd.Env = append(slices.Clone(c.env), "GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date)
	out, err := cmd.CombinedOutput()
	if err != nil {
		c.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// commit writes files (a nil content deletes the file), commits them all
// and returns the commit SHA.
func (c *clone) commit(msg string, files map[string]*string) string {
	c.t.Helper()
	for name, content := range files {
		p := filepath.Join(c.dir, filepath.FromSlash(name))
		if content == nil {
			if err := os.Remove(p); err != nil {
				c.t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			c.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(*content), 0o644); err != nil {
			c.t.Fatal(err)
		}
	}
	c.git("add", "-A")
	c.git("commit", "-q", "--allow-empty", "-m", msg)
	return c.git("rev-parse", "HEAD")
}

// push pushes refspecs (force, so tests can move branches) to the server
// over HTTP.
func (c *clone) push(refspecs ...string) {
	c.t.Helper()
	c.git(append([]string{"push", "-q", "-f", c.remote}, refspecs...)...)
}

func ptr(s string) *string { return &s }

// change is a Dependency change item as a client decodes it.
type change struct {
	ChangeType          string          `json:"change_type"`
	Manifest            string          `json:"manifest"`
	Ecosystem           string          `json:"ecosystem"`
	Name                string          `json:"name"`
	Version             string          `json:"version"`
	PackageURL          string          `json:"package_url"`
	License             *string         `json:"license"`
	SourceRepositoryURL *string         `json:"source_repository_url"`
	Scope               string          `json:"scope"`
	Vulnerabilities     []vulnerability `json:"vulnerabilities"`
}

type vulnerability struct {
	Severity        string `json:"severity"`
	AdvisoryGHSAID  string `json:"advisory_ghsa_id"`
	AdvisorySummary string `json:"advisory_summary"`
	AdvisoryURL     string `json:"advisory_url"`
}

// key is the short form the tests compare: "manifest: added name@version".
func (c change) key() string {
	return fmt.Sprintf("%s: %s %s@%s", c.Manifest, c.ChangeType, c.Name, c.Version)
}

func keys(changes []change) []string {
	out := make([]string, 0, len(changes))
	for _, c := range changes {
		out = append(out, c.key())
	}
	slices.Sort(out)
	return out
}

// comparePath is the endpoint's path for owner/repo and basehead.
func comparePath(repo *repos.Repository, basehead string) string {
	return "/repos/" + repo.FullName() + "/dependency-graph/compare/" + basehead
}

// compareAll fetches every page of a comparison with go-github (following
// the Link header) and fails the test on an error.
func compareAll(t testing.TB, client *github.Client, path string, perPage int) []change {
	t.Helper()
	var all []change
	page := 1
	for {
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		req, err := client.NewRequest(context.Background(), "GET", fmt.Sprintf("%s%sper_page=%d&page=%d", strings.TrimPrefix(path, "/"), sep, perPage, page), nil)
		if err != nil {
			t.Fatal(err)
		}
		var items []change
		resp, err := client.Do(req, &items)
		if err != nil {
			t.Fatalf("GET %s page %d: %v", path, page, err)
		}
		if items == nil {
			t.Fatalf("GET %s: body is not a JSON array", path)
		}
		all = append(all, items...)
		if resp.NextPage == 0 {
			return all
		}
		page = resp.NextPage
	}
}

// getJSON sends a raw GET and decodes a 200 body; other statuses fail.
func getJSON(t testing.TB, env *apptest.Env, path, token string) []change {
	t.Helper()
	resp, body := env.Do("GET", path, token, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
	}
	var items []change
	if err := json.Unmarshal(body, &items); err != nil || items == nil {
		t.Fatalf("GET %s: %v: %s", path, err, body)
	}
	return items
}

// importAdvisories stores the test advisory database.
func importAdvisoryFiles(t testing.TB, env *apptest.Env) {
	t.Helper()
	records, err := advisorydb.ReadPath("testdata/advisories")
	apptest.Must(t, "read advisories", err)
	_, err = advisorydb.Import(context.Background(), env.App.DB, records)
	apptest.Must(t, "import advisories", err)
}
