package deployments

import (
	"encoding/json"
	"net/url"

	"forgeapi/internal/accounts"
	"forgeapi/internal/repos"
	"forgeapi/internal/wire"
)

// deploymentJSON is the platform's deployment object.
type deploymentJSON struct {
	URL                   string               `json:"url"`
	ID                    int64                `json:"id"`
	NodeID                string               `json:"node_id"`
	SHA                   string               `json:"sha"`
	Ref                   string               `json:"ref"`
	Task                  string               `json:"task"`
	Payload               json.RawMessage      `json:"payload"`
	OriginalEnvironment   string               `json:"original_environment"`
	Environment           string               `json:"environment"`
	Description           *string              `json:"description"`
	Creator               *accounts.SimpleUser `json:"creator"`
	CreatedAt             wire.Time            `json:"created_at"`
	UpdatedAt             wire.Time            `json:"updated_at"`
	StatusesURL           string               `json:"statuses_url"`
	RepositoryURL         string               `json:"repository_url"`
	TransientEnvironment  bool                 `json:"transient_environment"`
	ProductionEnvironment bool                 `json:"production_environment"`
	PerformedViaGitHubApp any                  `json:"performed_via_github_app"`
}

// DeploymentNodeID is the node id of a deployment, as REST and GraphQL
// show it.
func DeploymentNodeID(id int64) string { return wire.NodeID("DE", id) }

// StatusNodeID is the node id of a deployment status.
func StatusNodeID(id int64) string { return wire.NodeID("DES", id) }

// EnvironmentNodeID is the node id of an environment.
func EnvironmentNodeID(id int64) string { return wire.NodeID("EN", id) }

func toDeploymentJSON(base string, repo *repos.Repository, d *Deployment) deploymentJSON {
	api := base + "/repos/" + repo.FullName()
	url := api + "/deployments/" + wire.Itoa(d.ID)
	return deploymentJSON{URL: url, ID: d.ID, NodeID: DeploymentNodeID(d.ID), SHA: d.SHA, Ref: d.Ref, Task: d.Task,
		Payload: d.Payload, OriginalEnvironment: d.OriginalEnvironment, Environment: d.Environment, Description: d.Description,
		Creator: simpleUser(base, d.Creator), CreatedAt: wire.T(d.CreatedAt), UpdatedAt: wire.T(d.UpdatedAt),
		StatusesURL: url + "/statuses", RepositoryURL: api, TransientEnvironment: d.Transient, ProductionEnvironment: d.Production}
}

// statusJSON is the platform's deployment-status object.
type statusJSON struct {
	URL                   string               `json:"url"`
	ID                    int64                `json:"id"`
	NodeID                string               `json:"node_id"`
	State                 string               `json:"state"`
	Creator               *accounts.SimpleUser `json:"creator"`
	Description           string               `json:"description"`
	Environment           string               `json:"environment"`
	TargetURL             string               `json:"target_url"`
	CreatedAt             wire.Time            `json:"created_at"`
	UpdatedAt             wire.Time            `json:"updated_at"`
	DeploymentURL         string               `json:"deployment_url"`
	RepositoryURL         string               `json:"repository_url"`
	EnvironmentURL        string               `json:"environment_url"`
	LogURL                string               `json:"log_url"`
	PerformedViaGitHubApp any                  `json:"performed_via_github_app"`
}

func toStatusJSON(base string, repo *repos.Repository, st *Status) statusJSON {
	api := base + "/repos/" + repo.FullName()
	dep := api + "/deployments/" + wire.Itoa(st.DeploymentID)
	return statusJSON{URL: dep + "/statuses/" + wire.Itoa(st.ID), ID: st.ID, NodeID: StatusNodeID(st.ID), State: st.State,
		Creator: simpleUser(base, st.Creator), Description: st.Description, Environment: st.Environment, TargetURL: st.TargetURL,
		CreatedAt: wire.T(st.CreatedAt), UpdatedAt: wire.T(st.CreatedAt), DeploymentURL: dep, RepositoryURL: api,
		EnvironmentURL: st.EnvironmentURL, LogURL: st.LogURL}
}

// environmentJSON is the platform's environment object.
type environmentJSON struct {
	ID                     int64            `json:"id"`
	NodeID                 string           `json:"node_id"`
	Name                   string           `json:"name"`
	URL                    string           `json:"url"`
	HTMLURL                string           `json:"html_url"`
	CreatedAt              wire.Time        `json:"created_at"`
	UpdatedAt              wire.Time        `json:"updated_at"`
	ProtectionRules        []map[string]any `json:"protection_rules"`
	DeploymentBranchPolicy *policySettings  `json:"deployment_branch_policy"`
}

// policySettings is the platform's deployment-branch-policy-settings.
type policySettings struct {
	ProtectedBranches    bool `json:"protected_branches"`
	CustomBranchPolicies bool `json:"custom_branch_policies"`
}

// reviewerJSON is one required reviewer: its type and the user or team.
type reviewerJSON struct {
	Type     string `json:"type"`
	Reviewer any    `json:"reviewer"`
}

// Protection rule ids: an environment has at most one rule of each kind,
// whose id is derived from the environment's, so that it stays the same
// from one read to the next.
func ruleID(envID int64, kind int64) int64 { return envID*4 + kind }

func toEnvironmentJSON(base string, repo *repos.Repository, e *Environment, reviewers []reviewerJSON) environmentJSON {
	j := environmentJSON{ID: e.ID, NodeID: EnvironmentNodeID(e.ID), Name: e.Name,
		URL:       base + "/repos/" + repo.FullName() + "/environments/" + url.PathEscape(e.Name),
		HTMLURL:   accounts.WebBase(base) + "/" + repo.FullName() + "/deployments/activity_log?environments_filter=" + url.QueryEscape(e.Name),
		CreatedAt: wire.T(e.CreatedAt), UpdatedAt: wire.T(e.UpdatedAt), ProtectionRules: []map[string]any{}}
	rule := func(kind int64, typ string, extra map[string]any) {
		r := map[string]any{"id": ruleID(e.ID, kind), "node_id": wire.NodeID("GA", ruleID(e.ID, kind)), "type": typ}
		for k, v := range extra {
			r[k] = v
		}
		j.ProtectionRules = append(j.ProtectionRules, r)
	}
	if e.WaitTimer > 0 {
		rule(1, "wait_timer", map[string]any{"wait_timer": e.WaitTimer})
	}
	if len(reviewers) > 0 {
		rule(2, "required_reviewers", map[string]any{"prevent_self_review": e.PreventSelfReview, "reviewers": reviewers})
	}
	if e.BranchPolicy != PolicyAll {
		rule(3, "branch_policy", nil)
		j.DeploymentBranchPolicy = &policySettings{ProtectedBranches: e.BranchPolicy == PolicyProtected,
			CustomBranchPolicies: e.BranchPolicy == PolicyCustom}
	}
	return j
}

// policyJSON is the platform's deployment-branch-policy object.
type policyJSON struct {
	ID     int64  `json:"id"`
	NodeID string `json:"node_id"`
	Name   string `json:"name"`
	Type   string `json:"type"`
}

func toPolicyJSON(p *BranchPolicy) policyJSON {
	return policyJSON{ID: p.ID, NodeID: wire.NodeID("DBP", p.ID), Name: p.Name, Type: p.Kind}
}

func simpleUser(base string, a *accounts.Account) *accounts.SimpleUser {
	if a == nil {
		return nil
	}
	su := accounts.ToSimpleUser(base, a)
	return &su
}
