package e2e_test

import (
	"strings"
	"testing"

	"forgeapi/internal/apptest"
)

// TestForkPullRequestAndOIDCSettings drives the settings of fork pull
// requests, their approval and the OIDC subject through the server: the
// defaults, validation, and a repository that cannot loosen its
// organization's policy (422) until the organization allows it.
func TestForkPullRequestAndOIDCSettings(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	owner := env.User("owner")
	acme := env.Org("acme", owner)
	env.Repo(acme, "app", apptest.RepoOpts{Private: true})
	env.Repo(acme, "site")
	token := env.Token(owner, "repo", "admin:org")
	do := func(method, path, body string, want int) string {
		t.Helper()
		resp, b := env.Do(method, path, token, strings.NewReader(body))
		if resp.StatusCode != want {
			t.Fatalf("%s %s: %d, want %d: %s", method, path, resp.StatusCode, want, b)
		}
		return string(b)
	}
	const repoFork = "/repos/acme/app/actions/permissions/fork-pr-workflows-private-repos"
	const orgFork = "/orgs/acme/actions/permissions/fork-pr-workflows-private-repos"
	apptest.Step(t, "fork pull requests in private repositories", func(t *testing.T) {
		if got := do("GET", repoFork, "", 200); !strings.Contains(got, `"run_workflows_from_fork_pull_requests":false`) {
			t.Fatalf("default %s", got)
		}
		do("GET", "/repos/acme/site/actions/permissions/fork-pr-workflows-private-repos", "", 403) // a public repository
		do("PUT", repoFork, `{}`, 422)
		do("PUT", repoFork, `{"run_workflows_from_fork_pull_requests":true}`, 422) // the organization allows nothing yet
		do("PUT", orgFork, `{"run_workflows_from_fork_pull_requests":true,"send_secrets_and_variables":false}`, 204)
		do("PUT", repoFork, `{"run_workflows_from_fork_pull_requests":true,"send_secrets_and_variables":true}`, 422)
		do("PUT", repoFork, `{"run_workflows_from_fork_pull_requests":true,"require_approval_for_fork_pr_workflows":true}`, 204)
		got := do("GET", repoFork, "", 200)
		if !strings.Contains(got, `"run_workflows_from_fork_pull_requests":true`) || !strings.Contains(got, `"require_approval_for_fork_pr_workflows":true`) {
			t.Fatalf("repository setting %s", got)
		}
		do("PUT", orgFork, `{"run_workflows_from_fork_pull_requests":false}`, 204)
		if got := do("GET", repoFork, "", 200); !strings.Contains(got, `"run_workflows_from_fork_pull_requests":false`) {
			t.Fatalf("bounded by the organization: %s", got)
		}
	})
	apptest.Step(t, "approval policy", func(t *testing.T) {
		const repo = "/repos/acme/site/actions/permissions/fork-pr-contributor-approval"
		if got := do("GET", repo, "", 200); got != `{"approval_policy":"first_time_contributors"}`+"\n" && !strings.Contains(got, `"first_time_contributors"`) {
			t.Fatalf("default %s", got)
		}
		do("PUT", repo, `{"approval_policy":"sometimes"}`, 422)
		do("PUT", "/orgs/acme/actions/permissions/fork-pr-contributor-approval", `{"approval_policy":"all_external_contributors"}`, 204)
		do("PUT", repo, `{"approval_policy":"first_time_contributors"}`, 422)
		if got := do("GET", repo, "", 200); !strings.Contains(got, `"all_external_contributors"`) {
			t.Fatalf("inherited %s", got)
		}
	})
	apptest.Step(t, "OIDC subject", func(t *testing.T) {
		if got := do("GET", "/orgs/acme/actions/oidc/customization/sub", "", 200); !strings.Contains(got, `["repo","context"]`) {
			t.Fatalf("org default %s", got)
		}
		do("PUT", "/orgs/acme/actions/oidc/customization/sub", `{"include_claim_keys":["repo","bad key"]}`, 422)
		do("PUT", "/orgs/acme/actions/oidc/customization/sub", `{"include_claim_keys":["repository_owner","context"]}`, 201)
		if got := do("GET", "/repos/acme/site/actions/oidc/customization/sub", "", 200); !strings.Contains(got, `"use_default":true`) {
			t.Fatalf("repo default %s", got)
		}
		do("PUT", "/repos/acme/site/actions/oidc/customization/sub", `{"use_default":false}`, 422)
		do("PUT", "/repos/acme/site/actions/oidc/customization/sub", `{"use_default":false,"include_claim_keys":["repo"]}`, 201)
	})
}
