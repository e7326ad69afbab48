package actions

import (
	"context"
	"encoding/json"
	"strconv"

	"forgeapi/internal/accounts"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// workflowJSON is the platform's workflow object.
type workflowJSON struct {
	ID        int64     `json:"id"`
	NodeID    string    `json:"node_id"`
	Name      string    `json:"name"`
	Path      string    `json:"path"`
	State     string    `json:"state"`
	CreatedAt wire.Time `json:"created_at"`
	UpdatedAt wire.Time `json:"updated_at"`
	URL       string    `json:"url"`
	HTMLURL   string    `json:"html_url"`
	BadgeURL  string    `json:"badge_url"`
}

// runJSON is the platform's workflow-run object.
type runJSON struct {
	ID                  int64                `json:"id"`
	Name                string               `json:"name"`
	NodeID              string               `json:"node_id"`
	CheckSuiteID        *int64               `json:"check_suite_id,omitempty"`
	CheckSuiteNodeID    *string              `json:"check_suite_node_id,omitempty"`
	HeadBranch          *string              `json:"head_branch"`
	HeadSHA             string               `json:"head_sha"`
	Path                string               `json:"path"`
	DisplayTitle        string               `json:"display_title"`
	RunNumber           int64                `json:"run_number"`
	Event               string               `json:"event"`
	Status              string               `json:"status"`
	Conclusion          *string              `json:"conclusion"`
	WorkflowID          int64                `json:"workflow_id"`
	URL                 string               `json:"url"`
	HTMLURL             string               `json:"html_url"`
	PullRequests        []any                `json:"pull_requests"`
	CreatedAt           wire.Time            `json:"created_at"`
	UpdatedAt           wire.Time            `json:"updated_at"`
	Actor               *accounts.SimpleUser `json:"actor,omitempty"`
	TriggeringActor     *accounts.SimpleUser `json:"triggering_actor,omitempty"`
	RunAttempt          int                  `json:"run_attempt"`
	ReferencedWorkflows []any                `json:"referenced_workflows"`
	RunStartedAt        wire.Time            `json:"run_started_at"`
	JobsURL             string               `json:"jobs_url"`
	LogsURL             string               `json:"logs_url"`
	CheckSuiteURL       string               `json:"check_suite_url"`
	ArtifactsURL        string               `json:"artifacts_url"`
	CancelURL           string               `json:"cancel_url"`
	RerunURL            string               `json:"rerun_url"`
	PreviousAttemptURL  *string              `json:"previous_attempt_url"`
	WorkflowURL         string               `json:"workflow_url"`
	HeadCommit          json.RawMessage      `json:"head_commit"`
	Repository          repos.JSON           `json:"repository"`
	HeadRepository      repos.JSON           `json:"head_repository"`
}

// jobJSON is the platform's job object.
type jobJSON struct {
	ID              int64      `json:"id"`
	RunID           int64      `json:"run_id"`
	RunURL          string     `json:"run_url"`
	RunAttempt      int        `json:"run_attempt"`
	NodeID          string     `json:"node_id"`
	HeadSHA         string     `json:"head_sha"`
	URL             string     `json:"url"`
	HTMLURL         *string    `json:"html_url"`
	Status          string     `json:"status"`
	Conclusion      *string    `json:"conclusion"`
	CreatedAt       wire.Time  `json:"created_at"`
	StartedAt       wire.Time  `json:"started_at"`
	CompletedAt     *wire.Time `json:"completed_at"`
	Name            string     `json:"name"`
	Steps           []stepJSON `json:"steps"`
	CheckRunURL     string     `json:"check_run_url"`
	Labels          []string   `json:"labels"`
	RunnerID        *int64     `json:"runner_id"`
	RunnerName      *string    `json:"runner_name"`
	RunnerGroupID   *int64     `json:"runner_group_id"`
	RunnerGroupName *string    `json:"runner_group_name"`
	WorkflowName    *string    `json:"workflow_name"`
	HeadBranch      *string    `json:"head_branch"`
}

type stepJSON struct {
	Name        string     `json:"name"`
	Status      string     `json:"status"`
	Conclusion  *string    `json:"conclusion"`
	Number      int        `json:"number"`
	StartedAt   *wire.Time `json:"started_at"`
	CompletedAt *wire.Time `json:"completed_at"`
}

// view renders the objects of one repository, reading accounts with q.
type view struct {
	ctx   context.Context
	q     store.Q
	repo  *repos.Repository
	base  string
	users map[int64]*accounts.SimpleUser
}

func newView(ctx context.Context, q store.Q, repo *repos.Repository) *view {
	return &view{ctx: ctx, q: q, repo: repo, base: httpapi.BaseURL(ctx), users: map[int64]*accounts.SimpleUser{}}
}

func (v *view) api() string { return v.base + "/repos/" + v.repo.FullName() }

func (v *view) web() string { return accounts.WebBase(v.base) + "/" + v.repo.FullName() }

func (v *view) workflow(w *Workflow) workflowJSON {
	id := strconv.FormatInt(w.ID, 10)
	return workflowJSON{ID: w.ID, NodeID: wire.NodeID("W", w.ID), Name: w.Name, Path: w.Path, State: w.State,
		CreatedAt: wire.T(w.CreatedAt), UpdatedAt: wire.T(w.UpdatedAt), URL: v.api() + "/actions/workflows/" + id,
		HTMLURL: v.web() + "/blob/" + v.repo.DefaultBranch + "/" + w.Path, BadgeURL: v.web() + "/workflows/" + baseName(w.Path) + "/badge.svg"}
}

func baseName(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return p[i+1:]
		}
	}
	return p
}

// user is the simple-user of an account id (nil for none).
func (v *view) user(id *int64) (*accounts.SimpleUser, error) {
	if id == nil {
		return nil, nil
	}
	if u, ok := v.users[*id]; ok {
		return u, nil
	}
	a, err := actorOf(v.ctx, v.q, id)
	if err != nil || a == nil {
		return nil, err
	}
	u := accounts.ToSimpleUser(v.base, a)
	v.users[*id] = &u
	return &u, nil
}

func (v *view) run(r *Run) (runJSON, error) {
	actor, err := v.user(r.ActorID)
	if err != nil {
		return runJSON{}, err
	}
	triggering, err := v.user(r.TriggeringActorID)
	if err != nil {
		return runJSON{}, err
	}
	api := v.api() + "/actions/runs/" + strconv.FormatInt(r.ID, 10)
	repo := repos.ToJSON(repos.URLs{Base: v.base}, v.repo, repos.Stats{}, auth.RoleNone)
	j := runJSON{ID: r.ID, Name: r.Name, NodeID: wire.NodeID("WFR", r.ID), HeadBranch: r.HeadBranch, HeadSHA: r.HeadSHA,
		Path: r.WorkflowPath, DisplayTitle: r.DisplayTitle, RunNumber: r.RunNumber, Event: r.Event, Status: r.Status,
		Conclusion: r.Conclusion, WorkflowID: r.WorkflowID, URL: api, HTMLURL: v.web() + "/actions/runs/" + strconv.FormatInt(r.ID, 10),
		PullRequests: []any{}, CreatedAt: wire.T(r.CreatedAt), UpdatedAt: wire.T(r.UpdatedAt), Actor: actor,
		TriggeringActor: triggering, RunAttempt: r.RunAttempt, ReferencedWorkflows: []any{}, RunStartedAt: wire.T(r.RunStartedAt),
		JobsURL: api + "/jobs", LogsURL: api + "/logs", CheckSuiteURL: v.api() + "/check-suites/" + strconv.FormatInt(suiteID(r), 10),
		ArtifactsURL: api + "/artifacts", CancelURL: api + "/cancel", RerunURL: api + "/rerun",
		WorkflowURL: v.api() + "/actions/workflows/" + strconv.FormatInt(r.WorkflowID, 10), HeadCommit: r.HeadCommit,
		Repository: repo, HeadRepository: repo}
	if r.CheckSuiteID != nil {
		node := wire.NodeID("CS", *r.CheckSuiteID)
		j.CheckSuiteID, j.CheckSuiteNodeID = r.CheckSuiteID, &node
	}
	if r.RunAttempt > 1 {
		prev := api + "/attempts/" + strconv.Itoa(r.RunAttempt-1)
		j.PreviousAttemptURL = &prev
	}
	if len(j.HeadCommit) == 0 {
		j.HeadCommit = json.RawMessage("null")
	}
	return j, nil
}

func (v *view) job(r *Run, j *Job) jobJSON {
	id := strconv.FormatInt(j.ID, 10)
	html := v.web() + "/actions/runs/" + strconv.FormatInt(r.ID, 10) + "/job/" + id
	started := j.CreatedAt
	if j.StartedAt != nil {
		started = *j.StartedAt
	}
	name := r.Name
	out := jobJSON{ID: j.ID, RunID: r.ID, RunURL: v.api() + "/actions/runs/" + strconv.FormatInt(r.ID, 10),
		RunAttempt: j.RunAttempt, NodeID: wire.NodeID("CR", checkRunID(j)), HeadSHA: r.HeadSHA, URL: v.api() + "/actions/jobs/" + id,
		HTMLURL: &html, Status: j.Status, Conclusion: j.Conclusion, CreatedAt: wire.T(j.CreatedAt), StartedAt: wire.T(started),
		CompletedAt: wire.TP(j.CompletedAt), Name: j.Name, Steps: []stepJSON{}, CheckRunURL: v.api() + "/check-runs/" + strconv.FormatInt(checkRunID(j), 10),
		Labels: orEmpty(j.Labels), RunnerName: j.RunnerName, WorkflowName: &name, HeadBranch: r.HeadBranch}
	switch {
	case j.RunnerID != nil: // a registered runner, its organization's group (none for a repository's runner)
		out.RunnerID, out.RunnerGroupID, out.RunnerGroupName = j.RunnerID, j.RunnerGroupID, j.RunnerGroupName
	case j.RunnerName != nil: // the built-in runner
		zero, group := int64(1), "Default"
		out.RunnerID, out.RunnerGroupID, out.RunnerGroupName = &zero, &zero, &group
	}
	for _, s := range j.Steps {
		out.Steps = append(out.Steps, stepJSON{Name: s.Name, Status: s.Status, Conclusion: s.Conclusion, Number: s.Number,
			StartedAt: wire.TP(s.StartedAt), CompletedAt: wire.TP(s.CompletedAt)})
	}
	return out
}
