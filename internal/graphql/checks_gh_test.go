package graphql_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// TestGitHubCLIPullRequestChecks: a CI app's check run shows in GraphQL's
// statusCheckRollup beside a commit status (the rollup's state counts
// both) and in Commit.checkSuites, and gh pr checks and gh pr view --json
// statusCheckRollup (gh 2.23, on --tls) print it.
func TestGitHubCLIPullRequestChecks(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithTLS())
	ctx := apptest.Ctx()
	octo := env.User("octo")
	repo := env.Repo(octo, "hello")
	token := env.Token(octo, "repo", "read:org")
	pr := pushFeature(t, env, "hello", token, "-c", "http.sslCAInfo="+env.Main.CAFile())
	head := pr.GetHead().GetSHA()
	a := env.RegisterApp(octo, "CI", "checks:write")
	inst := env.Install(a, octo, repo)
	atr, err := ghinstallation.NewAppsTransport(env.Transport(), a.ID, a.PrivateKeyPEM)
	apptest.Must(t, "apps transport", err)
	atr.BaseURL = env.APIBase()
	ci := env.ClientWith(ghinstallation.NewFromAppsTransport(atr, inst.ID))

	run, _, err := ci.Checks.CreateCheckRun(ctx, "octo", "hello", github.CreateCheckRunOptions{Name: "ci/test", HeadSHA: head,
		Status: github.Ptr("in_progress"), DetailsURL: github.Ptr("https://ci.example/run/1")})
	apptest.Must(t, "create the run", err)
	_, _, err = env.Client(token).Repositories.CreateStatus(ctx, "octo", "hello", head, github.RepoStatus{
		State: github.Ptr("success"), Context: github.Ptr("lint"), TargetURL: github.Ptr("https://ci.example/lint")})
	apptest.Must(t, "status", err)

	const rollup = `query($n: Int!) { repository(owner: "octo", name: "hello") { pullRequest(number: $n) {
		statusCheckRollup { state contexts(first: 10) { totalCount nodes { __typename
			... on StatusContext { context state }
			... on CheckRun { name status conclusion detailsUrl startedAt completedAt checkSuite { workflowRun { workflow { name } } } } } } }
		commits(last: 1) { nodes { commit { checkSuites(first: 5) { totalCount nodes { status conclusion
			checkRuns(first: 5, filterBy: {checkName: "ci/test"}) { totalCount nodes { name status conclusion } } } } } } } } } }`
	var got struct {
		Repository struct {
			PullRequest struct {
				StatusCheckRollup struct {
					State    string
					Contexts struct {
						TotalCount int
						Nodes      []map[string]any
					}
				}
				Commits struct {
					Nodes []struct {
						Commit struct {
							CheckSuites struct {
								TotalCount int
								Nodes      []struct {
									Status, Conclusion string
									CheckRuns          struct {
										TotalCount int
										Nodes      []struct{ Name, Status, Conclusion string }
									}
								}
							}
						}
					}
				}
			}
		}
	}
	gqlData(t, env, token, rollup, map[string]any{"n": pr.GetNumber()}, &got)
	p := got.Repository.PullRequest
	if p.StatusCheckRollup.State != "PENDING" || p.StatusCheckRollup.Contexts.TotalCount != 2 ||
		p.StatusCheckRollup.Contexts.Nodes[0]["__typename"] != "CheckRun" || p.StatusCheckRollup.Contexts.Nodes[0]["status"] != "IN_PROGRESS" ||
		p.StatusCheckRollup.Contexts.Nodes[0]["conclusion"] != nil || p.StatusCheckRollup.Contexts.Nodes[1]["context"] != "lint" {
		t.Fatalf("rollup while the run is in progress: %+v", p.StatusCheckRollup)
	}
	_, _, err = ci.Checks.UpdateCheckRun(ctx, "octo", "hello", run.GetID(), github.UpdateCheckRunOptions{Name: "ci/test",
		Conclusion: github.Ptr("success"), Output: &github.CheckRunOutput{Title: github.Ptr("ok"), Summary: github.Ptr("All passed")}})
	apptest.Must(t, "complete the run", err)
	gqlData(t, env, token, rollup, map[string]any{"n": pr.GetNumber()}, &got)
	p = got.Repository.PullRequest
	suites := p.Commits.Nodes[0].Commit.CheckSuites
	if p.StatusCheckRollup.State != "SUCCESS" || p.StatusCheckRollup.Contexts.Nodes[0]["conclusion"] != "SUCCESS" ||
		suites.TotalCount != 1 || suites.Nodes[0].Status != "COMPLETED" || suites.Nodes[0].Conclusion != "SUCCESS" ||
		suites.Nodes[0].CheckRuns.TotalCount != 1 || suites.Nodes[0].CheckRuns.Nodes[0].Name != "ci/test" {
		t.Fatalf("rollup after the success: %+v", p)
	}

	ghRun, host := ghCLI(t, env, token)
	repoArg := host + "/octo/hello"
	out := ghRun("pr", "checks", "1", "--repo", repoArg)
	if !strings.Contains(out, "ci/test\tpass\t") || !strings.Contains(out, "https://ci.example/run/1") || !strings.Contains(out, "lint\tpass\t") {
		t.Errorf("gh pr checks:\n%s", out)
	}
	var view struct {
		StatusCheckRollup []map[string]any `json:"statusCheckRollup"`
	}
	if err := json.Unmarshal([]byte(ghRun("pr", "view", "1", "--repo", repoArg, "--json", "statusCheckRollup")), &view); err != nil {
		t.Fatal(err)
	}
	if len(view.StatusCheckRollup) != 2 || view.StatusCheckRollup[0]["__typename"] != "CheckRun" ||
		view.StatusCheckRollup[0]["name"] != "ci/test" || view.StatusCheckRollup[0]["conclusion"] != "SUCCESS" {
		t.Errorf("gh pr view --json statusCheckRollup: %+v", view)
	}
}
