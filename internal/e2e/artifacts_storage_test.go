package e2e_test

import (
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/repos"
)

// storage is a valid storage record body with overrides applied.
func storage(d string, overrides map[string]any) map[string]any {
	b := map[string]any{"name": "libfoo", "digest": d, "registry_url": "https://reg.example.com/artifactory/"}
	for k, v := range overrides {
		if v == nil {
			delete(b, k)
			continue
		}
		b[k] = v
	}
	return b
}

func (f *artifactFixture) listStorage(token, d string) []storageRecord {
	f.t.Helper()
	var out storageRecords
	f.call("GET", listStoragePath(d), token, nil).want(f.t, http.StatusOK).decode(f.t, &out)
	return out.StorageRecords
}

func repoNames(rs []storageRecord) string {
	var out []string
	for _, r := range rs {
		out = append(out, deref(r.ServiceRepository))
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

func TestStorageRecordWithGoGitHub(t *testing.T) {
	t.Parallel()
	f := newArtifactFixture(t)
	client := f.env.Client(f.token)
	d := digest("libfoo")
	out, _, err := client.Organizations.CreateArtifactStorageRecord(apptest.Ctx(), "acme", github.CreateArtifactStorageRequest{
		Name: "libfoo", Digest: d, Version: github.Ptr("1.2.3"),
		ArtifactURL: github.Ptr("https://reg.example.com/artifactory/bar/libfoo-1.2.3"), Path: github.Ptr("com/example/libfoo-1.2.3"),
		RegistryURL: "https://reg.example.com/artifactory/", Repository: github.Ptr("bar"), Status: github.Ptr("active"),
		GithubRepository: github.Ptr("web"),
	})
	apptest.Must(t, "create storage record", err)
	if out.GetTotalCount() != 1 || len(out.StorageRecords) != 1 {
		t.Fatalf("got %+v", out)
	}
	rec := out.StorageRecords[0]
	if rec.GetName() != "libfoo" || rec.GetDigest() != d || rec.GetArtifactURL() != "https://reg.example.com/artifactory/bar/libfoo-1.2.3" ||
		rec.GetRegistryURL() != "https://reg.example.com/artifactory/" || rec.GetRepository() != "bar" || rec.GetStatus() != "active" ||
		rec.GetID() == 0 || rec.CreatedAt == nil || rec.UpdatedAt == nil {
		t.Fatalf("record %+v", rec)
	}
	list, _, err := client.Organizations.ListArtifactStorageRecords(apptest.Ctx(), "acme", d)
	apptest.Must(t, "list storage records", err)
	if len(list.StorageRecords) != 1 || list.StorageRecords[0].GetID() != rec.GetID() {
		t.Fatalf("list %+v", list)
	}
}

func TestStorageRecordForEachRepositoryOfTheArtifact(t *testing.T) {
	t.Parallel()
	f := newArtifactFixture(t)
	d := digest("multi")
	// The artifact is deployed from web and api.
	f.call("POST", clusterPath("moda-1"), f.token, clusterBody(
		item("w", map[string]any{"digest": d, "service_repository": "web"}),
		item("a", map[string]any{"digest": d, "service_repository": "api"}),
	)).want(t, http.StatusOK)

	var out storageRecords
	f.call("POST", storagePath, f.token, storage(d, nil)).want(t, http.StatusOK).decode(t, &out)
	if *out.TotalCount != 2 || repoNames(out.StorageRecords) != "api,web" {
		t.Fatalf("want a record for api and web, got %+v", out)
	}
	for _, r := range out.StorageRecords {
		if r.Status != "active" || r.Version != nil || r.ArtifactURL != nil || r.Repository != nil || r.Name != "libfoo" {
			t.Fatalf("defaults: %+v", r)
		}
	}
	// service_repository adds its repository (docs) to the artifact's.
	f.call("POST", storagePath, f.token, storage(d, map[string]any{"service_repository": "docs", "registry_url": "https://other.example.com"})).
		want(t, http.StatusOK).decode(t, &out)
	if *out.TotalCount != 3 || repoNames(out.StorageRecords) != "api,docs,web" {
		t.Fatalf("with service_repository: %+v", out)
	}
	if n := len(f.listStorage(f.token, d)); n != 5 {
		t.Fatalf("want 5 storage records, got %d", n)
	}
}

func TestStorageRecordUpsert(t *testing.T) {
	t.Parallel()
	f := newArtifactFixture(t)
	d := digest("upsert")
	var first, second, third storageRecords
	f.call("POST", storagePath, f.token, storage(d, map[string]any{"repository": "bar", "service_repository": "web"})).
		want(t, http.StatusOK).decode(t, &first)
	f.call("POST", storagePath, f.token, storage(d, map[string]any{"repository": "bar", "status": "eol", "version": "2"})).
		want(t, http.StatusOK).decode(t, &second)
	if len(second.StorageRecords) != 1 || second.StorageRecords[0].ID != first.StorageRecords[0].ID ||
		second.StorageRecords[0].Status != "eol" || deref(second.StorageRecords[0].Version) != "2" ||
		second.StorageRecords[0].CreatedAt != first.StorageRecords[0].CreatedAt {
		t.Fatalf("repeat did not update: %+v then %+v", first, second)
	}
	f.call("POST", storagePath, f.token, storage(d, map[string]any{"repository": "baz", "status": "deleted"})).
		want(t, http.StatusOK).decode(t, &third)
	if third.StorageRecords[0].ID == first.StorageRecords[0].ID {
		t.Fatal("another registry repository reused the record")
	}
}

func TestStorageRecordWithoutRepository(t *testing.T) {
	t.Parallel()
	f := newArtifactFixture(t)
	d := digest("orphan")
	var out storageRecords
	f.call("POST", storagePath, f.token, storage(d, nil)).want(t, http.StatusOK).decode(t, &out)
	if *out.TotalCount != 1 || out.StorageRecords[0].ServiceRepository != nil {
		t.Fatalf("got %+v", out)
	}
	// Other algorithms than sha256 are stored records too.
	d512 := "sha512:" + strings.Repeat("0a", 64)
	f.call("POST", storagePath, f.token, storage(d512, nil)).want(t, http.StatusOK).decode(t, &out)
	if out.StorageRecords[0].Digest != d512 || len(f.listStorage(f.token, d512)) != 1 {
		t.Fatalf("sha512: %+v", out)
	}
}

func TestStorageRecordReturnRecords(t *testing.T) {
	t.Parallel()
	f := newArtifactFixture(t)
	r := f.call("POST", storagePath, f.token, storage(digest("x"), map[string]any{"return_records": false})).want(t, http.StatusOK)
	if string(r.Body) != `{"total_count":1,"storage_records":[]}`+"\n" {
		t.Fatalf("body %s", r.Body)
	}
	// The list has storage_records only, as the spec shows it.
	r = f.call("GET", listStoragePath(digest("x")), f.token, nil).want(t, http.StatusOK)
	var raw map[string]json.RawMessage
	r.decode(t, &raw)
	if _, ok := raw["total_count"]; ok || len(raw) != 1 {
		t.Fatalf("list body %s", r.Body)
	}
}

func TestStorageRecordValidation(t *testing.T) {
	t.Parallel()
	f := newArtifactFixture(t)
	d := digest("v")
	cases := []struct {
		name        string
		body        map[string]any
		field, code string
	}{
		{"missing name", map[string]any{"name": nil}, "name", "missing_field"},
		{"long name", map[string]any{"name": strings.Repeat("n", 257)}, "name", "custom"},
		{"missing digest", map[string]any{"digest": nil}, "digest", "missing_field"},
		{"digest without algorithm", map[string]any{"digest": strings.TrimPrefix(d, "sha256:")}, "digest", "invalid"},
		{"uppercase digest", map[string]any{"digest": strings.ToUpper(d)}, "digest", "invalid"},
		{"short sha256", map[string]any{"digest": "sha256:abcd"}, "digest", "invalid"},
		{"non-hex digest", map[string]any{"digest": "md5:zz"}, "digest", "invalid"},
		{"missing registry_url", map[string]any{"registry_url": nil}, "registry_url", "missing_field"},
		{"http registry_url", map[string]any{"registry_url": "http://reg.example.com"}, "registry_url", "invalid"},
		{"relative registry_url", map[string]any{"registry_url": "reg.example.com"}, "registry_url", "invalid"},
		{"http artifact_url", map[string]any{"artifact_url": "ftp://reg.example.com/x"}, "artifact_url", "invalid"},
		{"long artifact_url", map[string]any{"artifact_url": "https://reg.example.com/" + strings.Repeat("a", 200)}, "artifact_url", "custom"},
		{"long path", map[string]any{"path": strings.Repeat("p", 513)}, "path", "custom"},
		{"long repository", map[string]any{"repository": strings.Repeat("r", 129)}, "repository", "custom"},
		{"bad status", map[string]any{"status": "inactive"}, "status", "invalid"},
		{"empty version", map[string]any{"version": ""}, "version", "invalid"},
		{"unknown service repository", map[string]any{"service_repository": "nope"}, "service_repository", "invalid"},
		{"bad service repository", map[string]any{"service_repository": "a b"}, "service_repository", "invalid"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f.call("POST", storagePath, f.token, storage(d, c.body)).wantFieldError(t, c.field, c.code)
		})
	}
	if n := len(f.listStorage(f.token, d)); n != 0 {
		t.Fatalf("refused requests stored %d records", n)
	}
}

func TestStorageRecordsVisibility(t *testing.T) {
	t.Parallel()
	f := newArtifactFixture(t)
	d := digest("visible")
	f.call("POST", clusterPath("moda-1"), f.token, clusterBody(
		item("w", map[string]any{"digest": d, "service_repository": "web"}),
		item("a", map[string]any{"digest": d, "service_repository": "api"}),
		item("d", map[string]any{"digest": d, "service_repository": "docs"}),
		item("o", map[string]any{"digest": d}),
	)).want(t, http.StatusOK)
	var out storageRecords
	f.call("POST", storagePath, f.token, storage(d, nil)).want(t, http.StatusOK).decode(t, &out)
	if repoNames(out.StorageRecords) != "<nil>,api,docs,web" {
		t.Fatalf("storage records %s", repoNames(out.StorageRecords))
	}

	webOnly := []*repos.Repository{f.web}
	cases := []struct {
		name, token, want string
	}{
		{"owner, all repositories", f.env.FineGrainedToken(f.owner, f.org, apptest.AllRepos, "contents:read"), "<nil>,api,docs,web"},
		{"member, all repositories", f.env.FineGrainedToken(f.member, f.org, apptest.AllRepos, "artifact_metadata:read"), "<nil>,api,docs,web"},
		// api is private and not selected: hidden; docs is public: readable.
		{"owner, web only", f.env.FineGrainedToken(f.owner, f.org, webOnly, "contents:read"), "<nil>,docs,web"},
		{"installation, web only", f.env.InstallationToken(f.org, webOnly, "artifact_metadata:read"), "<nil>,docs,web"},
		{"app user, no repositories", f.env.AppUserToken(f.member, f.org, nil, "contents:read"), "<nil>,docs,web"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := repoNames(f.listStorage(c.token, d)); got != c.want {
				t.Fatalf("visible %q, want %q", got, c.want)
			}
		})
	}
	// Deployment records of the digest are all listed (the spec filters storage records only).
	var deps records
	f.call("GET", listDeploymentsPath(d), cases[2].token, nil).want(t, http.StatusOK).decode(t, &deps)
	if *deps.TotalCount != 4 {
		t.Fatalf("deployment records %d", *deps.TotalCount)
	}
}

func TestStorageRecordOnlyOnWritableRepositories(t *testing.T) {
	t.Parallel()
	f := newArtifactFixture(t)
	d := digest("partly")
	f.call("POST", clusterPath("moda-1"), f.token, clusterBody(
		item("w", map[string]any{"digest": d, "service_repository": "web"}),
		item("a", map[string]any{"digest": d, "service_repository": "api"}),
	)).want(t, http.StatusOK)
	iat := f.env.InstallationToken(f.org, []*repos.Repository{f.web}, "artifact_metadata:write")
	var out storageRecords
	f.call("POST", storagePath, iat, storage(d, nil)).want(t, http.StatusOK).decode(t, &out)
	if repoNames(out.StorageRecords) != "web" {
		t.Fatalf("an installation that selects web recorded on %s", repoNames(out.StorageRecords))
	}
	f.call("POST", storagePath, iat, storage(d, map[string]any{"service_repository": "docs"})).want(t, http.StatusForbidden)
	f.call("POST", storagePath, iat, storage(d, map[string]any{"service_repository": "api"})).wantFieldError(t, "service_repository", "invalid")
}

func TestRecordsSurviveRestart(t *testing.T) {
	t.Parallel()
	f := newArtifactFixture(t)
	d := digest("durable")
	f.call("POST", deploymentPath, f.token, deployment(map[string]any{"digest": d, "service_repository": "web"})).want(t, http.StatusOK)
	f.call("POST", storagePath, f.token, storage(d, nil)).want(t, http.StatusOK)
	f.env.Stop()
	f.env = apptest.StartConfig(t, f.env.Config)
	if deps := f.listDeployments(d); *deps.TotalCount != 1 || deref(deps.DeploymentRecords[0].ServiceRepository) != "web" {
		t.Fatalf("deployment records after restart: %+v", deps)
	}
	if got := repoNames(f.listStorage(f.token, d)); got != "web" {
		t.Fatalf("storage records after restart: %s", got)
	}
}
