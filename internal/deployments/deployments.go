// Package deployments serves deployments, their statuses and the
// environments they go to (/repos/{owner}/{repo}/deployments... and
// /repos/{owner}/{repo}/environments...), as the platform does:
//
//   - creating a deployment resolves its ref (a branch, a tag or a SHA)
//     through git, checks the commit statuses its required_contexts name
//     (all the commit's contexts by default; 409 when one is not success),
//     merges the default branch into a branch behind it first when
//     auto_merge asks (202 with the merge, or 409 on a conflict), refuses
//     a ref the environment's deployment branch policy does not allow, and
//     creates the environment when it does not exist;
//   - a deployment status (error, failure, inactive, in_progress, queued,
//     pending, success) may move the deployment to another environment;
//     a success status marks the earlier deployments of the environment
//     whose latest status is success inactive (auto_inactive, on by
//     default);
//   - an environment holds a wait timer, required reviewers (users and
//     teams) and a deployment branch policy: protected branches, or custom
//     name patterns of branches and tags;
//   - an Actions job that names an environment deploys to it (Admit,
//     Finished), and a protected environment holds the job before it is
//     claimed (Hold, gates.go): its pending deployments are reviewed by
//     the required reviewers (/repos/{owner}/{repo}/actions/runs/{run_id}/
//     pending_deployments, .../approvals) and answered by the apps of
//     custom protection rules (.../deployment_protection_rule).
//
// Creating a deployment or a status sends the deployment or
// deployment_status webhook event in the change's transaction, and so do
// the gates their deployment_review and deployment_protection_rule
// events. The
// platform shows neither in the event feeds, and neither does forgeapi.
package deployments

import (
	"encoding/json"
	"time"

	"forgeapi/internal/accounts"
)

// The states of a deployment status.
const (
	StateError      = "error"
	StateFailure    = "failure"
	StateInactive   = "inactive"
	StateInProgress = "in_progress"
	StateQueued     = "queued"
	StatePending    = "pending"
	StateSuccess    = "success"
)

// validState reports whether s is a deployment status state.
func validState(s string) bool {
	switch s {
	case StateError, StateFailure, StateInactive, StateInProgress, StateQueued, StatePending, StateSuccess:
		return true
	}
	return false
}

// Limits, in characters. The description limit is the platform's (140
// for a status, as commit statuses); the others are forgeapi's.
const (
	MaxDescriptionLength       = 140
	MaxDeploymentDescription   = 1024
	MaxEnvironmentNameLength   = 255
	MaxTaskLength              = 255
	MaxURLLength               = 2048
	MaxPayloadBytes            = 65536
	MaxReviewers               = 6     // the platform's "up to six users or teams"
	MaxWaitTimer               = 43200 // minutes (30 days), the platform's
	MaxBranchPolicyNameLength  = 255
	MaxStatusesPerDeployment   = 1000
	MaxBranchPoliciesPerTarget = 50
)

// Deployment is one deployment of a commit to an environment.
type Deployment struct {
	ID                  int64
	RepoID              int64
	SHA                 string
	Ref                 string
	Task                string
	Environment         string
	OriginalEnvironment string
	Description         *string
	Payload             json.RawMessage // an object or a string, as JSON
	Transient           bool
	Production          bool
	Creator             *accounts.Account // nil once the account is gone
	CreatedAt           time.Time
	UpdatedAt           time.Time
}

// Status is one status posted on a deployment.
type Status struct {
	ID             int64
	DeploymentID   int64
	State          string
	Description    string
	Environment    string
	TargetURL      string
	LogURL         string
	EnvironmentURL string
	Creator        *accounts.Account
	CreatedAt      time.Time
}

// Filter narrows a list of deployments; empty fields match all.
type Filter struct {
	SHA, Ref, Task, Environment string
}
