package repository_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/orgmigration/archive"
	"forgeapi/internal/repos"
)

// TestExportRoundTrip exports real repositories pushed with git, downloads
// the archive through the 302, unpacks it, clones every repository with
// git and compares refs and commits with the source, and checks the JSON
// files and the migration object.
func TestExportRoundTrip(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	public := f.env.Repo(f.org, "hello-world", apptest.RepoOpts{Description: "Hello"})
	private := f.env.Repo(f.org, "secret.repo", apptest.RepoOpts{Private: true})
	f.env.Repo(f.org, "empty")
	f.pushHistory(public, "public")
	f.pushHistory(private, "private")

	m, resp, err := f.client.Migrations.StartMigration(apptest.Ctx(), f.org.Login,
		[]string{"hello-world", f.org.Login + "/secret.repo", "EMPTY", "hello-world"}, nil)
	apptest.Must(t, "start migration", err)
	if resp.StatusCode != http.StatusCreated || m.GetState() != "pending" {
		t.Fatalf("start: %d state %q, want 201 pending", resp.StatusCode, m.GetState())
	}
	if got := len(m.Repositories); got != 3 {
		t.Fatalf("repositories: %d, want 3 (duplicates dropped)", got)
	}
	if m.Repositories[1].GetFullName() != f.org.Login+"/secret.repo" || !m.Repositories[1].GetPrivate() {
		t.Errorf("second repository: %s private=%v", m.Repositories[1].GetFullName(), m.Repositories[1].GetPrivate())
	}
	id := m.GetID()
	pending := f.get(id)
	checkMigrationObject(t, f, pending)
	if pending.State != "exported" && pending.ArchiveURL != "" { // the exporter may be done already
		t.Errorf("archive_url in state %s: %q", pending.State, pending.ArchiveURL)
	}

	done := f.waitState(id, "exported")
	if want := f.env.URL + f.path("/migrations/%d/archive", id); done.ArchiveURL != want {
		t.Errorf("archive_url = %q, want %q", done.ArchiveURL, want)
	}

	dir, names := f.download(id, nil)
	wantTop := []string{archive.OrganizationsFile, "repositories", archive.RepositoriesFile, archive.SchemaFile, archive.UsersFile}
	if got := topLevel(names); !slices.Equal(got, wantTop) {
		t.Fatalf("archive top level = %v, want %v", got, wantTop)
	}
	for _, r := range []string{"hello-world", "secret.repo"} {
		f.checkClone(dir, repoByName(t, f, r))
	}
	if _, err := os.Stat(filepath.Join(dir, "repositories", f.org.Login, "empty.git", "HEAD")); err != nil {
		t.Errorf("the empty repository is not in the archive: %v", err)
	}
	checkArchiveJSON(t, f, dir, []string{"hello-world", "secret.repo", "empty"})
}

func repoByName(t *testing.T, f *fixture, name string) *repos.Repository {
	t.Helper()
	r, err := repos.ByOwnerAndName(apptest.Ctx(), f.env.App.DB, f.org.Login, name)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// checkMigrationObject checks the fields of a migration object.
func checkMigrationObject(t *testing.T, f *fixture, m migrationJSON) {
	t.Helper()
	if m.GUID == "" || !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(m.GUID) {
		t.Errorf("guid %q is not a UUID", m.GUID)
	}
	if m.NodeID == "" {
		t.Error("node_id is empty")
	}
	if m.Owner["login"] != f.org.Login || m.Owner["type"] != "Organization" {
		t.Errorf("owner = %v", m.Owner)
	}
	for _, field := range []string{"id", "node_id", "url", "repos_url", "events_url", "avatar_url", "gravatar_id",
		"html_url", "followers_url", "following_url", "gists_url", "starred_url", "subscriptions_url",
		"organizations_url", "received_events_url", "type", "site_admin"} {
		if _, ok := m.Owner[field]; !ok {
			t.Errorf("owner has no %s", field)
		}
	}
	if want := f.env.URL + f.path("/migrations/%d", m.ID); m.URL != want {
		t.Errorf("url = %q, want %q", m.URL, want)
	}
	offset := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d$`)
	if !offset.MatchString(m.CreatedAt) || !offset.MatchString(m.UpdatedAt) {
		t.Errorf("timestamps %q, %q lack a UTC offset", m.CreatedAt, m.UpdatedAt)
	}
	if m.Exclude == nil {
		t.Error("exclude is missing")
	}
	var repo map[string]any
	mustUnmarshal(t, m.Repositories[0], &repo)
	for _, field := range []string{"id", "node_id", "full_name", "owner", "clone_url", "permissions", "license",
		"temp_clone_token", "topics", "visibility", "hooks_url", "default_branch", "network_count"} {
		if _, ok := repo[field]; !ok {
			t.Errorf("repository object has no %s", field)
		}
	}
}

// checkArchiveJSON checks schema.json and the record files.
func checkArchiveJSON(t *testing.T, f *fixture, dir string, repoNames []string) {
	t.Helper()
	var schema map[string]any
	readJSONFile(t, dir, archive.SchemaFile, &schema)
	if schema["version"] != archive.SchemaVersion {
		t.Errorf("schema.json = %v", schema)
	}
	var orgs []archive.Organization
	readJSONFile(t, dir, archive.OrganizationsFile, &orgs)
	if len(orgs) != 1 || orgs[0].Type != "organization" || orgs[0].Login != f.org.Login || orgs[0].URL == "" {
		t.Fatalf("organizations = %+v", orgs)
	}
	if len(orgs[0].Members) != 1 || orgs[0].Members[0].Role != "admin" || !strings.HasSuffix(orgs[0].Members[0].User, "/"+f.owner.Login) {
		t.Errorf("members = %+v", orgs[0].Members)
	}
	var users []archive.User
	readJSONFile(t, dir, archive.UsersFile, &users)
	if len(users) != 1 || users[0].Type != "user" || users[0].Login != f.owner.Login || users[0].URL != orgs[0].Members[0].User {
		t.Errorf("users = %+v", users)
	}
	var records []archive.Repository
	readJSONFile(t, dir, archive.RepositoriesFile, &records)
	if len(records) != len(repoNames) {
		t.Fatalf("repositories records: %d, want %d", len(records), len(repoNames))
	}
	for i, r := range records {
		if r.Type != "repository" || r.Name != repoNames[i] || r.Owner != orgs[0].URL ||
			!strings.HasSuffix(r.URL, "/"+f.org.Login+"/"+repoNames[i]) ||
			r.GitURL != archive.GitURL(f.org.Login, repoNames[i]) {
			t.Errorf("repository record %d = %+v", i, r)
		}
	}
}

// TestFlags exports with each flag and checks what the archive holds and
// that the migration object reports the flags.
func TestFlags(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	repo := f.env.Repo(f.org, "app")
	f.pushHistory(repo, "app")
	all := []string{archive.OrganizationsFile, "repositories", archive.RepositoriesFile, archive.SchemaFile, archive.UsersFile}
	cases := []struct {
		name, body string
		want       []string // top-level entries of the archive
		check      func(t *testing.T, m migrationJSON)
	}{
		{"exclude_git_data", `{"repositories":["app"],"exclude_git_data":true}`,
			[]string{archive.OrganizationsFile, archive.RepositoriesFile, archive.SchemaFile, archive.UsersFile},
			func(t *testing.T, m migrationJSON) { expectFlag(t, "exclude_git_data", m.ExcludeGitData) }},
		{"exclude_metadata", `{"repositories":["app"],"exclude_metadata":true}`,
			[]string{"repositories", archive.SchemaFile},
			func(t *testing.T, m migrationJSON) { expectFlag(t, "exclude_metadata", m.ExcludeMetadata) }},
		{"both", `{"repositories":["app"],"exclude_metadata":true,"exclude_git_data":true}`,
			[]string{archive.SchemaFile}, nil},
		{"org_metadata_only", `{"org_metadata_only":true,"lock_repositories":true,"exclude_metadata":true}`,
			[]string{archive.OrganizationsFile, archive.SchemaFile, archive.UsersFile},
			func(t *testing.T, m migrationJSON) {
				expectFlag(t, "org_metadata_only", m.OrgMetadataOnly)
				if len(m.Repositories) != 0 || m.Repositories == nil {
					t.Errorf("repositories = %s, want []", m.Repositories)
				}
			}},
		{"org_metadata_only_empty_list", `{"org_metadata_only":true,"repositories":[]}`,
			[]string{archive.OrganizationsFile, archive.SchemaFile, archive.UsersFile}, nil},
		{"attachments_releases_projects", `{"repositories":["app"],"exclude_attachments":true,"exclude_releases":true,"exclude_owner_projects":true}`,
			all, func(t *testing.T, m migrationJSON) {
				expectFlag(t, "exclude_attachments", m.ExcludeAttachments)
				expectFlag(t, "exclude_releases", m.ExcludeReleases)
				expectFlag(t, "exclude_owner_projects", m.ExcludeOwnerProjects)
			}},
		{"defaults", `{"repositories":["app"]}`, all, func(t *testing.T, m migrationJSON) {
			if m.LockRepositories || m.ExcludeMetadata || m.ExcludeGitData || m.ExcludeAttachments ||
				m.ExcludeReleases || m.ExcludeOwnerProjects || m.OrgMetadataOnly {
				t.Errorf("flags default to false: %+v", m)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := f.start(c.body)
			if c.check != nil {
				c.check(t, m)
			}
			f.waitState(m.ID, "exported")
			dir, names := f.download(m.ID, nil)
			if got := topLevel(names); !slices.Equal(got, c.want) {
				t.Errorf("archive top level = %v, want %v", got, c.want)
			}
			if slices.Contains(c.want, "repositories") {
				f.checkClone(dir, repo)
			}
			if c.name == "exclude_git_data" {
				var records []archive.Repository
				readJSONFile(t, dir, archive.RepositoriesFile, &records)
				if len(records) != 1 || records[0].GitURL != "" {
					t.Errorf("repository records without git data = %+v", records)
				}
			}
		})
	}
	if locked := repoByName(t, f, "app").MigrationLocked; locked {
		t.Error("org_metadata_only ignores lock_repositories, yet the repository is locked")
	}
}

func expectFlag(t *testing.T, name string, v bool) {
	t.Helper()
	if !v {
		t.Errorf("%s is false in the migration object", name)
	}
}

// TestSignedURL checks that the local backend's signed URL is served by
// forgeapi and refused once tampered with.
func TestSignedURL(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.pushHistory(f.env.Repo(f.org, "app"), "app")
	m := f.start(`{"repositories":["app"]}`)
	f.waitState(m.ID, "exported")

	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequest("GET", f.env.URL+f.path("/migrations/%d/archive", m.ID), nil)
	req.Header.Set("Authorization", "Bearer "+f.token)
	resp, err := noFollow.Do(req)
	apptest.Must(t, "GET archive", err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("GET archive: %d, want 302", resp.StatusCode)
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	apptest.Must(t, "parse Location", err)
	if !strings.HasPrefix(loc.String(), f.env.URL+"/_blobs/") || loc.Query().Get("signature") == "" {
		t.Fatalf("Location %s is not a signed forgeapi URL", loc)
	}
	tampered := *loc
	q := tampered.Query()
	q.Set("expires", q.Get("expires")+"9")
	tampered.RawQuery = q.Encode()
	bad, err := http.Get(tampered.String())
	apptest.Must(t, "GET tampered URL", err)
	bad.Body.Close()
	if bad.StatusCode != http.StatusForbidden {
		t.Errorf("tampered URL: %d, want 403", bad.StatusCode)
	}
	good, err := http.Get(loc.String())
	apptest.Must(t, "GET signed URL", err)
	good.Body.Close()
	if good.StatusCode != http.StatusOK || good.Header.Get("Content-Type") != "application/gzip" {
		t.Errorf("signed URL: %d %s", good.StatusCode, good.Header.Get("Content-Type"))
	}
}

// TestListAndVersions checks the list (most recent first, paged,
// exclude=repositories), the repositories endpoint, and the smaller
// repository objects of API version 2026-03-10.
func TestListAndVersions(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.env.Repo(f.org, "a")
	f.env.Repo(f.org, "b")
	f.env.Repo(f.org, "c")
	var ids []int64
	for _, body := range []string{`{"repositories":["a"]}`, `{"repositories":["a","b"]}`, `{"repositories":["c","b","a"]}`} {
		ids = append(ids, f.start(body).ID)
	}

	list, resp, err := f.client.Migrations.ListMigrations(apptest.Ctx(), f.org.Login, &github.ListOptions{PerPage: 2})
	apptest.Must(t, "list", err)
	if len(list) != 2 || list[0].GetID() != ids[2] || list[1].GetID() != ids[1] || resp.NextPage != 2 {
		t.Fatalf("page 1: %d items, next %d", len(list), resp.NextPage)
	}
	if len(list[0].Repositories) != 3 || list[0].Repositories[0].GetName() != "c" {
		t.Errorf("repositories of the latest migration: %v", list[0].Repositories)
	}

	r, data := f.env.Do("GET", f.path("/migrations?exclude=repositories"), f.token, nil)
	var raw []map[string]json.RawMessage
	mustUnmarshal(t, data, &raw)
	if r.StatusCode != http.StatusOK || len(raw) != 3 {
		t.Fatalf("list with exclude: %d %s", r.StatusCode, data)
	}
	for _, m := range raw {
		if _, ok := m["repositories"]; ok {
			t.Errorf("exclude=repositories left the repositories in: %s", m["id"])
		}
	}
	r, data = f.env.Do("GET", f.path("/migrations/%d?exclude=repositories", ids[0]), f.token, nil)
	if r.StatusCode != http.StatusOK || strings.Contains(string(data), `"repositories"`) {
		t.Errorf("get with exclude: %d %s", r.StatusCode, data)
	}
	r, data = f.env.DoJSON("POST", f.path("/migrations"), f.token, `{"repositories":["a"],"exclude":["repositories"]}`)
	var created map[string]json.RawMessage
	mustUnmarshal(t, data, &created)
	if _, ok := created["repositories"]; r.StatusCode != http.StatusCreated || ok || string(created["exclude"]) != `["repositories"]` {
		t.Errorf("POST with exclude: %d %s", r.StatusCode, data)
	}
	if r, data := f.env.Do("GET", f.path("/migrations?exclude=owner"), f.token, nil); r.StatusCode != http.StatusUnprocessableEntity {
		t.Errorf("unknown exclude value: %d %s", r.StatusCode, data)
	}

	r, data = f.env.Do("GET", f.path("/migrations/%d", ids[2]), f.token, nil, "X-Service-Api-Version", "2026-03-10")
	var m struct {
		Repositories []map[string]any `json:"repositories"`
	}
	mustUnmarshal(t, data, &m)
	if r.StatusCode != http.StatusOK || len(m.Repositories) != 3 {
		t.Fatalf("2026-03-10: %d %s", r.StatusCode, data)
	}
	checkSimpleRepository(t, m.Repositories[0])

	r, data = f.env.Do("GET", f.path("/migrations/%d/repositories?per_page=2&page=2", ids[2]), f.token, nil)
	var page []map[string]any
	mustUnmarshal(t, data, &page)
	if r.StatusCode != http.StatusOK || len(page) != 1 || page[0]["name"] != "a" || page[0]["clone_url"] == nil {
		t.Fatalf("repositories page 2: %d %s", r.StatusCode, data)
	}
	if !strings.Contains(r.Header.Get("Link"), `rel="prev"`) {
		t.Errorf("Link = %q", r.Header.Get("Link"))
	}
	r, data = f.env.Do("GET", f.path("/migrations/%d/repositories", ids[2]), f.token, nil, "X-Service-Api-Version", "2026-03-10")
	mustUnmarshal(t, data, &page)
	if r.StatusCode != http.StatusOK || len(page) != 3 {
		t.Fatalf("repositories, 2026-03-10: %d %s", r.StatusCode, data)
	}
	checkSimpleRepository(t, page[2])
	if r, _ := f.env.Do("GET", f.path("/migrations/%d/repositories", ids[2]+100), f.token, nil); r.StatusCode != http.StatusNotFound {
		t.Errorf("repositories of a missing migration: %d", r.StatusCode)
	}
}

// checkSimpleRepository checks a simple-repository object: its fields and
// none of the full object's.
func checkSimpleRepository(t *testing.T, repo map[string]any) {
	t.Helper()
	for _, field := range []string{"id", "node_id", "name", "full_name", "owner", "private", "html_url", "url", "hooks_url", "trees_url"} {
		if _, ok := repo[field]; !ok {
			t.Errorf("simple repository has no %s", field)
		}
	}
	for _, field := range []string{"clone_url", "permissions", "default_branch", "created_at", "temp_clone_token"} {
		if _, ok := repo[field]; ok {
			t.Errorf("simple repository has %s", field)
		}
	}
}
