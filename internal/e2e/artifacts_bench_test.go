package e2e_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"forgeapi/internal/apptest"
)

// BenchmarkClusterDeploymentRecords posts 1000 deployments in one cluster
// call to the real server (target: under 250 ms on SQLite). "insert"
// records a new cluster each time; "update" sets the same cluster again.
// Half the deployments name a repository, and pairs share an artifact.
func BenchmarkClusterDeploymentRecords(b *testing.B) {
	env := apptest.Start(b)
	owner := env.User("owner")
	org := env.Org("acme", owner)
	env.Repo(org, "web")
	token := env.FineGrainedToken(owner, org, apptest.AllRepos, "artifact_metadata:write")
	items := make([]map[string]any, 1000)
	for i := range items {
		items[i] = map[string]any{
			"name": fmt.Sprint("image-", i/2), "digest": digest(fmt.Sprint(i / 2)), "version": "1.0.0",
			"deployment_name": fmt.Sprintf("ns-deploy-%d-container", i), "tags": map[string]string{"team": "shop", "tier": "web"},
			"runtime_risks": []string{"internet-exposed", "sensitive-data"},
		}
		if i%2 == 0 {
			items[i]["service_repository"] = "web"
		}
	}
	body, err := json.Marshal(map[string]any{"logical_environment": "prod", "physical_environment": "eu-west", "deployments": items})
	if err != nil {
		b.Fatal(err)
	}
	post := func(b *testing.B, cluster string) {
		req, err := http.NewRequest("POST", env.URL+"/orgs/acme/artifacts/metadata/deployment-record/cluster/"+cluster, strings.NewReader(string(body)))
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		n, _ := io.Copy(io.Discard, resp.Body)
		if resp.StatusCode != http.StatusOK || n < 1000*200 {
			b.Fatalf("status %d, %d bytes", resp.StatusCode, n)
		}
	}
	b.Run("insert", func(b *testing.B) {
		i := 0
		for b.Loop() {
			i++
			post(b, fmt.Sprint("insert-", i))
		}
	})
	b.Run("update", func(b *testing.B) {
		post(b, "update")
		for b.Loop() {
			post(b, "update")
		}
	})
}
