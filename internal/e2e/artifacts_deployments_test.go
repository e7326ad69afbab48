package e2e_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

func TestCreateDeploymentRecordWithGoGitHub(t *testing.T) {
	t.Parallel()
	f := newArtifactFixture(t)
	client := f.env.Client(f.token)
	d := digest("web-1")
	out, _, err := client.Organizations.CreateArtifactDeploymentRecord(apptest.Ctx(), "ACME", github.CreateArtifactDeploymentRequest{
		Name: "web-image", Digest: d, Version: github.Ptr("1.0.0"), Status: "deployed",
		LogicalEnvironment: "prod", PhysicalEnvironment: github.Ptr("eu-west"), Cluster: github.Ptr("moda-1"),
		DeploymentName: "shop-web-nginx", Tags: map[string]string{"team": "shop"},
		RuntimeRisks:     []github.DeploymentRuntimeRisk{github.DeploymentRuntimeRiskInternetExposed},
		GithubRepository: github.Ptr("web"),
	})
	apptest.Must(t, "create deployment record", err)
	if out.GetTotalCount() != 1 || len(out.DeploymentRecords) != 1 {
		t.Fatalf("got %+v", out)
	}
	rec := out.DeploymentRecords[0]
	if rec.GetDigest() != d || rec.GetLogicalEnvironment() != "prod" || rec.GetPhysicalEnvironment() != "eu-west" ||
		rec.GetCluster() != "moda-1" || rec.GetDeploymentName() != "shop-web-nginx" || rec.Tags["team"] != "shop" ||
		len(rec.RuntimeRisks) != 1 || rec.RuntimeRisks[0] != github.DeploymentRuntimeRiskInternetExposed ||
		rec.GetID() == 0 || rec.CreatedAt == nil || rec.UpdatedAt == nil || rec.AttestationID != nil {
		t.Fatalf("record %+v", rec)
	}
	list, _, err := client.Organizations.ListArtifactDeploymentRecords(apptest.Ctx(), "acme", d)
	apptest.Must(t, "list deployment records", err)
	if list.GetTotalCount() != 1 || list.DeploymentRecords[0].GetID() != rec.GetID() {
		t.Fatalf("list %+v", list)
	}
}

func TestDeploymentRecordJSONShape(t *testing.T) {
	t.Parallel()
	f := newArtifactFixture(t)
	r := f.call("POST", deploymentPath, f.token, deployment(map[string]any{
		"service_repository": "web", "tags": map[string]string{"team": "shop"}, "runtime_risks": []string{"sensitive-data"},
	})).want(t, http.StatusOK)
	var raw struct {
		TotalCount        int              `json:"total_count"`
		DeploymentRecords []map[string]any `json:"deployment_records"`
	}
	r.decode(t, &raw)
	got := raw.DeploymentRecords[0]
	for _, k := range []string{"id", "name", "version", "digest", "status", "logical_environment", "physical_environment",
		"cluster", "deployment_name", "tags", "runtime_risks", "service_repository", "created", "created_at", "updated_at", "attestation_id"} {
		if _, ok := got[k]; !ok {
			t.Errorf("record lacks %q: %v", k, got)
		}
	}
	if got["attestation_id"] != nil || got["name"] != "web-image" || got["version"] != "1.0.0" || got["status"] != "deployed" ||
		got["service_repository"] != "web" || got["created"] != got["created_at"] {
		t.Fatalf("record %v", got)
	}
	if !strings.HasSuffix(got["created"].(string), "Z") {
		t.Fatalf("created %v is not UTC ISO 8601", got["created"])
	}
}

func TestDeploymentRecordUpsertIdentity(t *testing.T) {
	t.Parallel()
	f := newArtifactFixture(t)
	var first records
	f.call("POST", deploymentPath, f.token, deployment(nil)).want(t, http.StatusOK).decode(t, &first)
	id := first.DeploymentRecords[0].ID

	// The same identity with a new digest, status, tags and risks updates the record.
	var second records
	f.call("POST", "/orgs/AcMe/artifacts/metadata/deployment-record", f.token, deployment(map[string]any{
		"digest": digest("web-2"), "status": "decommissioned", "tags": map[string]string{"v": "2"},
		"runtime_risks": []string{"lateral-movement"},
	})).want(t, http.StatusOK).decode(t, &second)
	got := second.DeploymentRecords[0]
	if got.ID != id || got.Digest != digest("web-2") || got.Status != "decommissioned" || got.Tags["v"] != "2" ||
		len(got.RuntimeRisks) != 1 || got.Created != first.DeploymentRecords[0].Created || got.UpdatedAt < got.Created {
		t.Fatalf("update: first %+v, second %+v", first.DeploymentRecords[0], got)
	}
	if n := len(f.listDeployments(digest("web-1")).DeploymentRecords); n != 0 {
		t.Fatalf("the old digest still has %d records", n)
	}
	if l := f.listDeployments(digest("web-2")); *l.TotalCount != 1 || l.DeploymentRecords[0].ID != id {
		t.Fatalf("new digest: %+v", l)
	}

	// Each part of the identity makes a new record when it changes.
	for _, change := range []map[string]any{
		{"deployment_name": "shop-web-sidecar"},
		{"cluster": "moda-2"},
		{"physical_environment": "us-east"},
		{"logical_environment": "staging"},
	} {
		change["digest"] = digest("web-2")
		var r records
		f.call("POST", deploymentPath, f.token, deployment(change)).want(t, http.StatusOK).decode(t, &r)
		if r.DeploymentRecords[0].ID == id {
			t.Fatalf("%v updated the record instead of creating one", change)
		}
	}
	if n := *f.listDeployments(digest("web-2")).TotalCount; n != 5 {
		t.Fatalf("want 5 records, got %d", n)
	}

	// An absent physical environment and cluster are the empty ones.
	var a, b records
	f.call("POST", deploymentPath, f.token, deployment(map[string]any{"physical_environment": nil, "cluster": nil, "deployment_name": "bare"})).
		want(t, http.StatusOK).decode(t, &a)
	f.call("POST", deploymentPath, f.token, deployment(map[string]any{"physical_environment": "", "cluster": "", "deployment_name": "bare"})).
		want(t, http.StatusOK).decode(t, &b)
	if a.DeploymentRecords[0].ID != b.DeploymentRecords[0].ID || a.DeploymentRecords[0].PhysicalEnvironment != "" {
		t.Fatalf("absent and empty environments differ: %+v %+v", a, b)
	}
}

func TestDeploymentRecordReturnRecords(t *testing.T) {
	t.Parallel()
	f := newArtifactFixture(t)
	r := f.call("POST", deploymentPath, f.token, deployment(map[string]any{"return_records": false})).want(t, http.StatusOK)
	if string(r.Body) != `{"total_count":1,"deployment_records":[]}`+"\n" {
		t.Fatalf("body %s", r.Body)
	}
	if n := *f.listDeployments(digest("web-1")).TotalCount; n != 1 {
		t.Fatalf("record not stored: %d", n)
	}
	var withRecords records
	f.call("POST", deploymentPath, f.token, deployment(map[string]any{"return_records": true})).want(t, http.StatusOK).decode(t, &withRecords)
	if len(withRecords.DeploymentRecords) != 1 {
		t.Fatalf("return_records true: %+v", withRecords)
	}
}

func TestDeploymentRecordValidation(t *testing.T) {
	t.Parallel()
	f := newArtifactFixture(t)
	other := f.env.Org("other", f.owner)
	f.env.Repo(other, "elsewhere")
	long := func(n int) string { return strings.Repeat("x", n) }
	cases := []struct {
		name        string
		body        map[string]any
		field, code string
	}{
		{"missing name", map[string]any{"name": nil}, "name", "missing_field"},
		{"empty name", map[string]any{"name": ""}, "name", "invalid"},
		{"long name", map[string]any{"name": long(257)}, "name", "custom"},
		{"missing digest", map[string]any{"digest": nil}, "digest", "missing_field"},
		{"uppercase digest", map[string]any{"digest": strings.ToUpper(digest("a"))}, "digest", "invalid"},
		{"short digest", map[string]any{"digest": "sha256:abc"}, "digest", "invalid"},
		{"sha512 digest", map[string]any{"digest": "sha512:" + strings.Repeat("ab", 64)}, "digest", "invalid"},
		{"no algorithm", map[string]any{"digest": strings.TrimPrefix(digest("a"), "sha256:")}, "digest", "invalid"},
		{"missing status", map[string]any{"status": nil}, "status", "missing_field"},
		{"bad status", map[string]any{"status": "running"}, "status", "invalid"},
		{"missing logical environment", map[string]any{"logical_environment": nil}, "logical_environment", "missing_field"},
		{"long logical environment", map[string]any{"logical_environment": long(129)}, "logical_environment", "custom"},
		{"long physical environment", map[string]any{"physical_environment": long(129)}, "physical_environment", "custom"},
		{"long cluster", map[string]any{"cluster": long(129)}, "cluster", "custom"},
		{"missing deployment name", map[string]any{"deployment_name": nil}, "deployment_name", "missing_field"},
		{"long deployment name", map[string]any{"deployment_name": long(257)}, "deployment_name", "custom"},
		{"long version", map[string]any{"version": long(101)}, "version", "custom"},
		{"empty version", map[string]any{"version": ""}, "version", "invalid"},
		{"six tags", map[string]any{"tags": map[string]string{"a": "1", "b": "2", "c": "3", "d": "4", "e": "5", "f": "6"}}, "tags", "invalid"},
		{"unknown risk", map[string]any{"runtime_risks": []string{"internet-exposed", "meteor-strike"}}, "runtime_risks[1]", "invalid"},
		{"repeated risk", map[string]any{"runtime_risks": []string{"sensitive-data", "sensitive-data"}}, "runtime_risks[1]", "invalid"},
		{"five risks", map[string]any{"runtime_risks": []string{"critical-resource", "internet-exposed", "lateral-movement", "sensitive-data", "sensitive-data"}}, "runtime_risks", "invalid"},
		{"bad repository name", map[string]any{"service_repository": "acme/web"}, "service_repository", "invalid"},
		{"empty repository name", map[string]any{"service_repository": ""}, "service_repository", "invalid"},
		{"unknown repository", map[string]any{"service_repository": "nope"}, "service_repository", "invalid"},
		{"repository of another organization", map[string]any{"service_repository": "elsewhere"}, "service_repository", "invalid"},
		{"conflicting repository names", map[string]any{"service_repository": "web", "github_repository": "docs"}, "github_repository", "invalid"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f.call("POST", deploymentPath, f.token, deployment(c.body)).wantFieldError(t, c.field, c.code)
		})
	}
	t.Run("tag value not a string", func(t *testing.T) {
		f.call("POST", deploymentPath, f.token, deployment(map[string]any{"tags": map[string]any{"a": 1}})).want(t, http.StatusUnprocessableEntity)
	})
	t.Run("runtime_risks not an array", func(t *testing.T) {
		f.call("POST", deploymentPath, f.token, deployment(map[string]any{"runtime_risks": "sensitive-data"})).want(t, http.StatusUnprocessableEntity)
	})
	t.Run("malformed JSON", func(t *testing.T) {
		f.call("POST", deploymentPath, f.token, `{"name":`).want(t, http.StatusBadRequest)
	})
	t.Run("empty body", func(t *testing.T) {
		r := f.call("POST", deploymentPath, f.token, "")
		for _, field := range []string{"name", "digest", "status", "logical_environment", "deployment_name"} {
			r.wantFieldError(t, field, "missing_field")
		}
	})
	// Nothing that failed validation was stored.
	for _, d := range []string{digest("web-1"), digest("a")} {
		if n := *f.listDeployments(d).TotalCount; n != 0 {
			t.Fatalf("%d records stored by refused requests", n)
		}
	}
}

func TestDeploymentRecordServiceRepository(t *testing.T) {
	t.Parallel()
	f := newArtifactFixture(t)
	d := digest("svc")
	for _, body := range []map[string]any{
		{"service_repository": "WEB", "deployment_name": "a", "digest": d},
		{"github_repository": "api", "deployment_name": "b", "digest": d},
		{"deployment_name": "c", "digest": d},
	} {
		f.call("POST", deploymentPath, f.token, deployment(body)).want(t, http.StatusOK)
	}
	got := map[string]string{}
	for _, r := range f.listDeployments(d).DeploymentRecords {
		got[r.DeploymentName] = deref(r.ServiceRepository)
	}
	if got["a"] != "web" || got["b"] != "api" || got["c"] != "<nil>" {
		t.Fatalf("service repositories %v", got)
	}
}

func TestListDeploymentRecordsDigestParameter(t *testing.T) {
	t.Parallel()
	f := newArtifactFixture(t)
	for _, bad := range []string{"sha256:abc", "notadigest", "sha256:" + strings.Repeat("A", 64)} {
		f.call("GET", listDeploymentsPath(bad), f.token, nil).wantFieldError(t, "subject_digest", "invalid")
	}
	r := f.call("GET", listDeploymentsPath(digest("none")), f.token, nil).want(t, http.StatusOK)
	var raw map[string]json.RawMessage
	r.decode(t, &raw)
	if string(raw["total_count"]) != "0" || string(raw["deployment_records"]) != "[]" {
		t.Fatalf("empty list body %s", r.Body)
	}
}

func TestRecordsBelongToTheirOrganization(t *testing.T) {
	t.Parallel()
	f := newArtifactFixture(t)
	other := f.env.Org("other", f.owner)
	f.env.Repo(other, "web")
	otherToken := f.env.FineGrainedToken(f.owner, other, apptest.AllRepos, "artifact_metadata:write")
	otherPath := func(p string) string { return strings.Replace(p, "/orgs/acme/", "/orgs/other/", 1) }
	d := digest("shared-across-orgs")
	body := deployment(map[string]any{"digest": d, "service_repository": "web"})

	// The same identity in two organizations is two records.
	var mine, theirs records
	f.call("POST", deploymentPath, f.token, body).want(t, http.StatusOK).decode(t, &mine)
	f.call("POST", otherPath(deploymentPath), otherToken, body).want(t, http.StatusOK).decode(t, &theirs)
	if mine.DeploymentRecords[0].ID == theirs.DeploymentRecords[0].ID {
		t.Fatal("another organization's call updated this organization's record")
	}
	f.call("POST", storagePath, f.token, storage(d, nil)).want(t, http.StatusOK)
	f.call("POST", otherPath(storagePath), otherToken, storage(d, nil)).want(t, http.StatusOK)

	// Each organization lists its own records of the digest only.
	if l := f.listDeployments(d); *l.TotalCount != 1 || l.DeploymentRecords[0].ID != mine.DeploymentRecords[0].ID {
		t.Fatalf("acme lists %+v", l)
	}
	var otherList records
	f.call("GET", otherPath(listDeploymentsPath(d)), otherToken, nil).want(t, http.StatusOK).decode(t, &otherList)
	if *otherList.TotalCount != 1 || otherList.DeploymentRecords[0].ID != theirs.DeploymentRecords[0].ID {
		t.Fatalf("other lists %+v", otherList)
	}
	if n := len(f.listStorage(f.token, d)); n != 1 {
		t.Fatalf("acme lists %d storage records, want 1", n)
	}
}
