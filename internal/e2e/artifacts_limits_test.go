package e2e_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"forgeapi/internal/apptest"
	"forgeapi/internal/artifacts"
	"forgeapi/internal/httpapi"
)

// tooLong checks the shared 422 entry of a string over its limit.
func (r response) tooLong(t *testing.T, what, resource, field string, max int) {
	t.Helper()
	apptest.WantTooLong(t, what, &http.Response{StatusCode: r.Status}, r.Body, resource, field, max)
}

// TestArtifactFieldLimits: strings over the platform's limits, and tags
// over forgeapi's, are 422s naming the field and the limit, in a single
// record, in a cluster item and in a storage record.
func TestArtifactFieldLimits(t *testing.T) {
	t.Parallel()
	f := newArtifactFixture(t)
	single := func(overrides map[string]any) map[string]any {
		b := item("one", overrides)
		b["status"], b["logical_environment"] = "deployed", "prod"
		return b
	}
	f.call("POST", deploymentPath, f.token, single(map[string]any{"name": strings.Repeat("n", 257)})).
		tooLong(t, "single: long name", "DeploymentRecord", "name", 256)
	f.call("POST", deploymentPath, f.token, single(map[string]any{"tags": map[string]string{"team": strings.Repeat("v", 257)}})).
		tooLong(t, "single: long tag value", "DeploymentRecord", "tags.team", 256)
	r := f.call("POST", deploymentPath, f.token, single(map[string]any{"tags": map[string]string{strings.Repeat("k", 129): "v"}}))
	r.wantFieldError(t, "tags", "custom")
	if !strings.Contains(string(r.Body), "a key of tags is too long (maximum is 128 characters)") {
		t.Errorf("long tag key: %s", r.Body)
	}
	f.call("POST", clusterPath("moda-1"), f.token, clusterBody(item("a", nil), item("b", map[string]any{"version": strings.Repeat("v", 101)}))).
		tooLong(t, "cluster: long version", "DeploymentRecord", "deployments[1].version", 100)
	f.call("POST", storagePath, f.token, map[string]any{"name": "lib", "digest": digest("lib"), "registry_url": "https://registry.example",
		"artifact_url": "https://registry.example/" + strings.Repeat("a", 152)}).
		tooLong(t, "storage: long artifact_url", "StorageRecord", "artifact_url", 152)

	atLimit := map[string]string{strings.Repeat("k", 128): strings.Repeat("ü", 256)}
	f.call("POST", deploymentPath, f.token, single(map[string]any{"tags": atLimit})).want(t, http.StatusOK)
}

// TestClusterBatchBodyLimit: the largest valid cluster batch (1000
// deployments, every field and tag at its limit) is over the default
// 1 MiB and accepted; a batch body over artifacts.MaxClusterBody is a
// JSON 413.
func TestClusterBatchBodyLimit(t *testing.T) {
	t.Parallel()
	f := newArtifactFixture(t)
	repo := strings.Repeat("r", 100)
	f.env.Repo(f.org, repo)
	tags := map[string]string{}
	for i := range 5 {
		tags[fmt.Sprint(i)+strings.Repeat("k", 127)] = strings.Repeat("v", 256)
	}
	items := make([]map[string]any, 1000)
	for i := range items {
		name := fmt.Sprintf("%04d", i)
		items[i] = map[string]any{
			"name": strings.Repeat("n", 252) + name, "digest": digest(name), "version": strings.Repeat("1", 100),
			"status": "decommissioned", "deployment_name": strings.Repeat("d", 252) + name,
			"service_repository": repo, "github_repository": repo, "tags": tags,
			"runtime_risks": []string{"critical-resource", "internet-exposed", "lateral-movement", "sensitive-data"},
		}
	}
	batch := map[string]any{"logical_environment": strings.Repeat("l", 128), "physical_environment": strings.Repeat("p", 128),
		"deployments": items, "return_records": false}
	body, err := json.Marshal(batch)
	apptest.Must(t, "encode", err)
	t.Logf("the largest valid batch is %d bytes of compact JSON", len(body))
	if len(body) <= httpapi.DefaultMaxBody || len(body) > artifacts.MaxClusterBody {
		t.Fatalf("the largest batch (%d bytes) must need more than the default limit and fit MaxClusterBody", len(body))
	}
	r := f.call("POST", clusterPath(strings.Repeat("c", 128)), f.token, string(body)).want(t, http.StatusOK)
	var out records
	r.decode(t, &out)
	if *out.TotalCount != 1000 {
		t.Fatalf("recorded %d deployments", *out.TotalCount)
	}

	padded := string(body[:len(body)-1]) + `,"pad":"` + strings.Repeat(" ", artifacts.MaxClusterBody-len(body)) + `"}`
	r = f.call("POST", clusterPath("moda-1"), f.token, padded)
	var e struct {
		Message string `json:"message"`
	}
	if r.Status != http.StatusRequestEntityTooLarge || json.Unmarshal(r.Body, &e) != nil || !strings.Contains(e.Message, "4 MiB") {
		t.Fatalf("a %d-byte batch: %d %s, want a JSON 413", len(padded), r.Status, r.Body)
	}
}
