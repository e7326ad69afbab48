package graphql_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/repos"
)

// TestDeploymentsQuery reads a repository's deployments, their statuses
// and environments through GraphQL after a deploy tool made them over
// REST, and resolves their ids with node(id:).
func TestDeploymentsQuery(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo")
	repo := env.Repo(octo, "app", apptest.RepoOpts{Private: true})
	token := env.Token(octo, "repo")
	c := env.Client(token)
	work := apptest.WorkTree(t, map[string]string{"a.txt": "1\n"})
	sha := strings.TrimSpace(apptest.Git(t, work, "rev-parse", "HEAD"))
	apptest.Git(t, work, "push", "-q", env.GitURL("octo", "app", "octo", token), "HEAD:refs/heads/main")
	staging, _, err := c.Repositories.CreateDeployment(ctx, "octo", "app", github.DeploymentRequest{Ref: "main", Environment: github.Ptr("staging")})
	apptest.Must(t, "staging", err)
	_, _, err = c.Repositories.CreateDeploymentStatus(ctx, "octo", "app", staging.GetID(), github.DeploymentStatusRequest{State: "success",
		EnvironmentURL: github.Ptr("https://staging.example")})
	apptest.Must(t, "status", err)
	_, _, err = c.Repositories.CreateDeployment(ctx, "octo", "app", github.DeploymentRequest{Ref: sha, Environment: github.Ptr("production"),
		Payload: `{"v":2}`})
	apptest.Must(t, "production", err)

	r := post(t, env, token, `query($env: [String!]) { repository(owner: "octo", name: "app") {
		all: deployments(first: 10) { totalCount nodes { id databaseId environment state task payload commitOid
			commit { oid } ref { name } creator { login } createdAt } }
		staging: deployments(first: 5, environments: $env, orderBy: {field: CREATED_AT, direction: DESC}) {
			nodes { latestStatus { state environmentUrl creator { login } deployment { databaseId } }
				statuses(first: 5) { totalCount edges { cursor node { id state } } } } }
		environments(first: 10) { totalCount nodes { id name databaseId } }
		environment(name: "staging") { name }
		missing: environment(name: "nope") { name } } }`, map[string]any{"env": []string{"staging"}})
	if len(r.Errors) > 0 {
		t.Fatalf("errors: %+v", r.Errors)
	}
	var data struct {
		Repository struct {
			All struct {
				TotalCount int
				Nodes      []struct {
					ID, Environment, State, Task, Payload, CommitOid string
					DatabaseID                                       int64
					Commit                                           struct{ Oid string }
					Ref                                              *struct{ Name string }
					Creator                                          struct{ Login string }
				}
			}
			Staging struct {
				Nodes []struct {
					LatestStatus struct {
						State, EnvironmentURL string
						Deployment            struct{ DatabaseID int64 }
					}
					Statuses struct{ TotalCount int }
				}
			}
			Environments struct {
				TotalCount int
				Nodes      []struct{ ID, Name string }
			}
			Environment *struct{ Name string }
			Missing     *struct{ Name string }
		}
	}
	if err := json.Unmarshal(r.Data["repository"], &data.Repository); err != nil {
		t.Fatal(err)
	}
	got := data.Repository
	if got.All.TotalCount != 2 || got.All.Nodes[0].Environment != "staging" || got.All.Nodes[0].State != "ACTIVE" ||
		got.All.Nodes[0].Ref == nil || got.All.Nodes[0].Ref.Name != "main" || got.All.Nodes[0].Commit.Oid != sha ||
		got.All.Nodes[1].State != "PENDING" || got.All.Nodes[1].Ref != nil || got.All.Nodes[1].Payload != `{"v":2}` ||
		got.All.Nodes[0].Creator.Login != "octo" || got.All.Nodes[0].DatabaseID != staging.GetID() {
		t.Fatalf("deployments %+v", got.All)
	}
	if len(got.Staging.Nodes) != 1 || got.Staging.Nodes[0].LatestStatus.State != "SUCCESS" ||
		got.Staging.Nodes[0].LatestStatus.EnvironmentURL != "https://staging.example" || got.Staging.Nodes[0].Statuses.TotalCount != 1 {
		t.Fatalf("staging %+v", got.Staging)
	}
	if got.Environments.TotalCount != 2 || got.Environments.Nodes[0].Name != "production" || got.Environment == nil || got.Missing != nil {
		t.Fatalf("environments %+v", got)
	}

	node := post(t, env, token, `query($a: ID!, $b: ID!) { a: node(id: $a) { ... on Deployment { task } }
		b: node(id: $b) { ... on Environment { name } } }`, map[string]any{"a": staging.GetNodeID(), "b": got.Environments.Nodes[1].ID})
	if len(node.Errors) > 0 || string(node.Data["a"]) != `{"task":"deploy"}` || string(node.Data["b"]) != `{"name":"staging"}` {
		t.Fatalf("nodes %s %s %+v", node.Data["a"], node.Data["b"], node.Errors)
	}

	// A fine-grained token without Deployments read may not read them.
	fine := env.FineGrainedToken(octo, octo, []*repos.Repository{repo}, "contents:read")
	r = post(t, env, fine, `{ repository(owner: "octo", name: "app") { deployments(first: 1) { totalCount } } }`, nil)
	if len(r.Errors) != 1 || r.Errors[0].Type != "FORBIDDEN" {
		t.Fatalf("without Deployments read: %+v", r.Errors)
	}
}
