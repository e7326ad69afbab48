package e2e_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/repos"
)

// item is one valid cluster deployment with overrides applied.
func item(name string, overrides map[string]any) map[string]any {
	b := map[string]any{"name": "image-" + name, "digest": digest(name), "version": "1.0", "deployment_name": name}
	for k, v := range overrides {
		if v == nil {
			delete(b, k)
			continue
		}
		b[k] = v
	}
	return b
}

func clusterBody(items ...map[string]any) map[string]any {
	return map[string]any{"logical_environment": "prod", "physical_environment": "eu-west", "deployments": items}
}

func TestClusterDeploymentRecordsWithGoGitHub(t *testing.T) {
	t.Parallel()
	f := newArtifactFixture(t)
	client := f.env.Client(f.token)
	out, resp, err := client.Organizations.SetClusterDeploymentRecords(apptest.Ctx(), "acme", "moda-1", github.ClusterDeploymentRecordsRequest{
		LogicalEnvironment: "prod", PhysicalEnvironment: github.Ptr("eu-west"),
		Deployments: []*github.ClusterArtifactDeployment{
			{Name: "web", Digest: digest("web"), DeploymentName: "web-pod", GithubRepository: github.Ptr("web")},
			{Name: "api", Digest: digest("api"), DeploymentName: "api-pod", Status: "decommissioned", Version: github.Ptr("2.0")},
		},
	})
	apptest.Must(t, "set cluster deployment records", err)
	if resp.StatusCode != http.StatusOK || out.GetTotalCount() != 2 || len(out.DeploymentRecords) != 2 {
		t.Fatalf("got %d %+v", resp.StatusCode, out)
	}
	web, api := out.DeploymentRecords[0], out.DeploymentRecords[1]
	if web.GetDeploymentName() != "web-pod" || web.GetCluster() != "moda-1" || web.GetPhysicalEnvironment() != "eu-west" ||
		web.GetLogicalEnvironment() != "prod" || api.GetDeploymentName() != "api-pod" {
		t.Fatalf("records %+v %+v", web, api)
	}
}

func TestClusterDeploymentRecordsUpsertAndDefaults(t *testing.T) {
	t.Parallel()
	f := newArtifactFixture(t)
	var first records
	f.call("POST", clusterPath("moda-1"), f.token, clusterBody(
		item("a", nil),
		item("b", map[string]any{"status": "decommissioned"}),
		item("c", map[string]any{"status": ""}),
	)).want(t, http.StatusOK).decode(t, &first)
	if *first.TotalCount != 3 || names(first.DeploymentRecords) != "a,b,c" {
		t.Fatalf("first call %+v", first)
	}
	statuses := []string{first.DeploymentRecords[0].Status, first.DeploymentRecords[1].Status, first.DeploymentRecords[2].Status}
	if statuses[0] != "deployed" || statuses[1] != "decommissioned" || statuses[2] != "deployed" {
		t.Fatalf("statuses %v: an absent status must default to deployed", statuses)
	}
	for _, r := range first.DeploymentRecords {
		if r.Cluster != "moda-1" || r.LogicalEnvironment != "prod" || r.PhysicalEnvironment != "eu-west" {
			t.Fatalf("record %+v does not carry the cluster and environments", r)
		}
	}

	// b is updated with a new digest, d is new; a and c are left alone.
	var second records
	f.call("POST", clusterPath("moda-1"), f.token, clusterBody(
		item("d", nil),
		item("b", map[string]any{"digest": digest("b2")}),
	)).want(t, http.StatusOK).decode(t, &second)
	if names(second.DeploymentRecords) != "d,b" || second.DeploymentRecords[1].ID != first.DeploymentRecords[1].ID ||
		second.DeploymentRecords[1].Status != "deployed" || second.DeploymentRecords[1].Digest != digest("b2") {
		t.Fatalf("second call %+v", second)
	}
	if n := *f.listDeployments(digest("a")).TotalCount; n != 1 {
		t.Fatalf("a: %d records", n)
	}
	// The same deployment name in another cluster is another record.
	var other records
	f.call("POST", clusterPath("moda-2"), f.token, clusterBody(item("a", nil))).want(t, http.StatusOK).decode(t, &other)
	if other.DeploymentRecords[0].ID == first.DeploymentRecords[0].ID || *f.listDeployments(digest("a")).TotalCount != 2 {
		t.Fatalf("moda-2 reused moda-1's record")
	}
	// The single endpoint sees the cluster call's identity.
	var single records
	f.call("POST", deploymentPath, f.token, deployment(map[string]any{"digest": digest("a"), "cluster": "moda-1", "deployment_name": "a"})).
		want(t, http.StatusOK).decode(t, &single)
	if single.DeploymentRecords[0].ID != first.DeploymentRecords[0].ID {
		t.Fatalf("single upsert of the cluster's record made a new one")
	}
}

func TestClusterDeploymentRecordsReturnRecords(t *testing.T) {
	t.Parallel()
	f := newArtifactFixture(t)
	body := clusterBody(item("a", nil), item("b", nil))
	body["return_records"] = false
	r := f.call("POST", clusterPath("moda-1"), f.token, body).want(t, http.StatusOK)
	if string(r.Body) != `{"total_count":2,"deployment_records":[]}`+"\n" {
		t.Fatalf("body %s", r.Body)
	}
	if *f.listDeployments(digest("b")).TotalCount != 1 {
		t.Fatal("records not stored")
	}
}

func TestClusterDeploymentRecordsValidation(t *testing.T) {
	t.Parallel()
	f := newArtifactFixture(t)
	t.Run("repeated deployment name", func(t *testing.T) {
		f.call("POST", clusterPath("moda-1"), f.token, clusterBody(item("a", nil), item("b", nil), item("x", map[string]any{"deployment_name": "a"}))).
			wantFieldError(t, "deployments[2].deployment_name", "invalid")
	})
	t.Run("item fields", func(t *testing.T) {
		r := f.call("POST", clusterPath("moda-1"), f.token, clusterBody(
			item("a", nil),
			item("b", map[string]any{"digest": "sha256:nothex"}),
			item("c", map[string]any{"name": nil, "status": "up"}),
			item("d", map[string]any{"deployment_name": nil}),
			item("e", map[string]any{"runtime_risks": []string{"x"}, "tags": map[string]string{"1": "", "2": "", "3": "", "4": "", "5": "", "6": ""}}),
			item("f", map[string]any{"service_repository": "bad name"}),
		))
		r.wantFieldError(t, "deployments[1].digest", "invalid")
		r.wantFieldError(t, "deployments[2].name", "missing_field")
		r.wantFieldError(t, "deployments[2].status", "invalid")
		r.wantFieldError(t, "deployments[3].deployment_name", "missing_field")
		r.wantFieldError(t, "deployments[4].runtime_risks[0]", "invalid")
		r.wantFieldError(t, "deployments[4].tags", "invalid")
		r.wantFieldError(t, "deployments[5].service_repository", "invalid")
	})
	t.Run("too many deployments", func(t *testing.T) {
		items := make([]map[string]any, 1001)
		for i := range items {
			items[i] = item(fmt.Sprint("d", i), nil)
		}
		f.call("POST", clusterPath("moda-1"), f.token, clusterBody(items...)).wantFieldError(t, "deployments", "invalid")
	})
	t.Run("a thousand deployments", func(t *testing.T) {
		items := make([]map[string]any, 1000)
		for i := range items {
			items[i] = item(fmt.Sprint("k", i), map[string]any{"service_repository": "web"})
		}
		var out records
		f.call("POST", clusterPath("big"), f.token, clusterBody(items...)).want(t, http.StatusOK).decode(t, &out)
		if *out.TotalCount != 1000 || len(out.DeploymentRecords) != 1000 || out.DeploymentRecords[999].DeploymentName != "k999" {
			t.Fatalf("got %d records", len(out.DeploymentRecords))
		}
		if n := *f.listDeployments(digest("k999")).TotalCount; n != 1 {
			t.Fatalf("k999: %d records", n)
		}
	})
	t.Run("missing deployments", func(t *testing.T) {
		f.call("POST", clusterPath("moda-1"), f.token, map[string]any{"logical_environment": "prod"}).
			wantFieldError(t, "deployments", "missing_field")
	})
	t.Run("missing logical environment", func(t *testing.T) {
		f.call("POST", clusterPath("moda-1"), f.token, map[string]any{"deployments": []any{item("a", nil)}}).
			wantFieldError(t, "logical_environment", "missing_field")
	})
	t.Run("bad cluster name", func(t *testing.T) {
		f.call("POST", clusterPath("moda%201"), f.token, clusterBody(item("a", nil))).wantFieldError(t, "cluster", "invalid")
	})
	t.Run("deployments not an array", func(t *testing.T) {
		f.call("POST", clusterPath("moda-1"), f.token, map[string]any{"logical_environment": "prod", "deployments": "a"}).
			want(t, http.StatusUnprocessableEntity)
	})
	for _, d := range []string{"a", "b", "c", "d0"} {
		if n := *f.listDeployments(digest(d)).TotalCount; n != 0 {
			t.Fatalf("refused calls stored %d records for %s", n, d)
		}
	}
	t.Run("empty deployments", func(t *testing.T) {
		var out records
		f.call("POST", clusterPath("moda-1"), f.token, clusterBody([]map[string]any{}...)).want(t, http.StatusOK).decode(t, &out)
		if *out.TotalCount != 0 || out.DeploymentRecords == nil {
			t.Fatalf("got %s", fmt.Sprint(out))
		}
	})
}

func TestClusterFirstProcessedWins(t *testing.T) {
	t.Parallel()
	f := newArtifactFixture(t)
	shared := digest("shared")
	var out records
	f.call("POST", clusterPath("moda-1"), f.token, clusterBody(
		item("one", map[string]any{"digest": shared, "name": "first-name", "version": "1.0", "service_repository": "web"}),
		item("two", map[string]any{"digest": shared, "name": "second-name", "version": "2.0", "service_repository": "web"}),
		item("three", map[string]any{"digest": shared, "name": "docs-name", "version": "3.0", "service_repository": "docs"}),
		item("four", map[string]any{"digest": shared, "name": "org-name", "version": nil}),
	)).want(t, http.StatusOK).decode(t, &out)
	want := []struct{ name, version string }{{"first-name", "1.0"}, {"first-name", "1.0"}, {"docs-name", "3.0"}, {"org-name", "<nil>"}}
	for i, w := range want {
		if r := out.DeploymentRecords[i]; r.Name != w.name || deref(r.Version) != w.version {
			t.Fatalf("record %d is %s %s, want %s %s", i, r.Name, deref(r.Version), w.name, w.version)
		}
	}
	// Listing agrees, and a later request does not rename the artifact.
	f.call("POST", deploymentPath, f.token, deployment(map[string]any{"digest": shared, "name": "late-name", "version": "9", "service_repository": "web"})).
		want(t, http.StatusOK)
	for _, r := range f.listDeployments(shared).DeploymentRecords {
		if deref(r.ServiceRepository) == "web" && (r.Name != "first-name" || deref(r.Version) != "1.0") {
			t.Fatalf("web artifact renamed: %+v", r)
		}
	}
}

func TestClusterPartialSuccess(t *testing.T) {
	t.Parallel()
	f := newArtifactFixture(t)
	// An installation that selects only web: api (private) is hidden from
	// it, docs (public) is visible but not writable.
	iat := f.env.InstallationToken(f.org, []*repos.Repository{f.web}, "artifact_metadata:write")
	mixed := func() []map[string]any {
		return []map[string]any{
			item("ok", map[string]any{"service_repository": "web"}),
			item("missing", map[string]any{"service_repository": "nope"}),
			item("hidden", map[string]any{"service_repository": "api"}),
			item("readonly", map[string]any{"service_repository": "docs"}),
			item("orglevel", nil),
		}
	}

	t.Run("partial success answers 207", func(t *testing.T) {
		body := clusterBody(mixed()...)
		body["partial_success"] = true
		var out records
		f.call("POST", clusterPath("moda-1"), iat, body).want(t, http.StatusMultiStatus).decode(t, &out)
		if *out.TotalCount != 2 || names(out.DeploymentRecords) != "ok,orglevel" {
			t.Fatalf("records %+v", out)
		}
		causes := map[string]string{}
		for _, e := range out.Errors {
			causes[e.Deployment.DeploymentName] = fmt.Sprintf("%s@%d", e.Cause, e.Index)
			if e.Deployment.Status != "deployed" || e.Deployment.ServiceRepository == nil {
				t.Fatalf("error deployment %+v", e.Deployment)
			}
		}
		if len(causes) != 3 || causes["missing"] != "not_found@1" || causes["hidden"] != "not_found@2" || causes["readonly"] != "unauthorized@3" {
			t.Fatalf("errors %+v", out.Errors)
		}
		if *f.listDeployments(digest("ok")).TotalCount != 1 || *f.listDeployments(digest("readonly")).TotalCount != 0 {
			t.Fatal("stored records do not match the answer")
		}
	})
	t.Run("without partial success nothing is stored", func(t *testing.T) {
		items := mixed()
		for _, it := range items {
			it["digest"] = digest("whole-" + it["deployment_name"].(string))
		}
		r := f.call("POST", clusterPath("moda-2"), iat, clusterBody(items...))
		r.wantFieldError(t, "deployments[1].service_repository", "invalid")
		r.wantFieldError(t, "deployments[2].service_repository", "invalid")
		if *f.listDeployments(digest("whole-ok")).TotalCount != 0 {
			t.Fatal("a refused call stored records")
		}
	})
	t.Run("unwritable repository without partial success is 403", func(t *testing.T) {
		r := f.call("POST", clusterPath("moda-3"), iat, clusterBody(item("w", map[string]any{"service_repository": "web"}),
			item("r", map[string]any{"service_repository": "docs"}))).want(t, http.StatusForbidden)
		var e apiError
		r.decode(t, &e)
		if len(e.Errors) != 1 || e.Errors[0].Field != "deployments[1].service_repository" || e.Errors[0].Code != "unauthorized" {
			t.Fatalf("403 body %s", r.Body)
		}
	})
	t.Run("partial success with nothing refused is 200", func(t *testing.T) {
		body := clusterBody(item("fine", map[string]any{"service_repository": "web"}))
		body["partial_success"] = true
		f.call("POST", clusterPath("moda-4"), iat, body).want(t, http.StatusOK)
	})
	t.Run("partial success does not excuse invalid items", func(t *testing.T) {
		body := clusterBody(item("good", nil), item("bad", map[string]any{"digest": "sha256:x"}))
		body["partial_success"] = true
		f.call("POST", clusterPath("moda-5"), iat, body).wantFieldError(t, "deployments[1].digest", "invalid")
	})
}

func TestConcurrentClusterCallsOnTheSameRecords(t *testing.T) {
	t.Parallel()
	f := newArtifactFixture(t)
	const callers, perCall = 4, 50
	bodies := make([]map[string]any, callers)
	for c := range bodies {
		items := make([]map[string]any, perCall)
		for i := range items {
			// Every caller writes the same deployments and artifacts, in its own order.
			n := (i + c*7) % perCall
			items[i] = item(fmt.Sprint("pod-", n), map[string]any{"digest": digest(fmt.Sprint("shared-", n%5)), "service_repository": "web"})
		}
		bodies[c] = clusterBody(items...)
	}
	statuses := make(chan int, callers)
	var wg sync.WaitGroup
	for _, body := range bodies {
		wg.Go(func() {
			resp, _ := f.env.DoJSON("POST", clusterPath("moda-1"), f.token, mustJSON(t, body))
			statuses <- resp.StatusCode
		})
	}
	wg.Wait()
	close(statuses)
	for s := range statuses {
		if s != http.StatusOK {
			t.Fatalf("concurrent call answered %d", s)
		}
	}
	total := 0
	for n := range 5 {
		total += *f.listDeployments(digest(fmt.Sprint("shared-", n))).TotalCount
	}
	if total != perCall {
		t.Fatalf("want %d records, got %d", perCall, total)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
