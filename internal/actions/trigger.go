package actions

import (
	"context"
	"encoding/json"
	"errors"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/actions/engine"
	"forgeapi/internal/events"
	"forgeapi/internal/git/gitcmd"
	"forgeapi/internal/git/gitread"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// WorkflowsDir is where a commit's workflow files are.
const WorkflowsDir = ".github/workflows"

// trigger is an event that may start runs.
type trigger struct {
	Repo    *repos.Repository
	Actor   *accounts.Account
	Event   string
	Payload map[string]any // github.event
	SHA     string
	Ref     string  // refs/heads/..., refs/tags/...
	Branch  *string // head_branch
	Files   []string
	Title   string            // display_title
	Action  string            // pull_request's action
	Base    string            // pull_request's base branch
	Inputs  map[string]string // workflow_dispatch's
	Only    string            // workflow_dispatch, schedule: the one workflow file
	Commit  json.RawMessage   // head_commit
	// Source and SourceBranch are, for workflow_run, the name of the
	// workflow whose run triggers and that run's head branch.
	Source, SourceBranch string
	// Approval makes the runs wait for approval (forks.go).
	Approval bool
}

// PushSink starts the runs of the workflows a push or a pull request
// triggers, in the event's transaction (git pushes and the server's
// own).
type PushSink struct{ Service *Service }

// HandleEvent handles push and pull_request events and ignores the
// others. As on the platform, what a job's GITHUB_TOKEN does (its actor
// is github-actions[bot]) starts no run, except repository_dispatch (and
// workflow_dispatch, which does not come here): no workflow triggers
// itself over and over.
func (k PushSink) HandleEvent(ctx context.Context, tx *store.Tx, e *events.Event) error {
	if e.Repo == nil || k.Service == nil {
		return nil
	}
	if e.Actor != nil && e.Actor.Login == BotLogin && e.HookEvent != "repository_dispatch" {
		return nil
	}
	switch e.HookEvent {
	case "push":
		return k.pushed(ctx, tx, e)
	case "pull_request":
		return k.pullRequest(ctx, tx, e)
	case "repository_dispatch":
		return k.repositoryDispatch(ctx, tx, e)
	}
	return nil
}

// repositoryDispatch runs the default branch's workflows on
// repository_dispatch whose types list the event's type (or that list
// none).
func (k PushSink) repositoryDispatch(ctx context.Context, tx *store.Tx, e *events.Event) error {
	eventType, _ := e.HookPayload["action"].(string)
	t, ok, err := k.Service.onDefaultBranch(ctx, e.Repo, e.Actor, "repository_dispatch", e.HookPayload)
	if err != nil || !ok {
		return err
	}
	t.Action = eventType
	_, err = k.Service.start(ctx, tx, t)
	return err
}

// onDefaultBranch is a trigger of the event on the head of the
// repository's default branch; ok is false when the branch has no
// commit.
func (s *Service) onDefaultBranch(ctx context.Context, repo *repos.Repository, actor *accounts.Account, event string,
	payload map[string]any) (trigger, bool, error) {
	branch := repo.DefaultBranch
	head, ok := s.readCommit(repo.ID, "refs/heads/"+branch)
	if !ok {
		return trigger{}, false, nil
	}
	return trigger{Repo: repo, Actor: actor, Event: event, Payload: payload, SHA: head.SHA, Ref: "refs/heads/" + branch,
		Branch: &branch, Commit: simpleCommitJSON(head)}, true, nil
}

func (k PushSink) pushed(ctx context.Context, tx *store.Tx, e *events.Event) error {
	ref, _ := e.HookPayload["ref"].(string)
	after, _ := e.HookPayload["after"].(string)
	if strings.Trim(after, "0") == "" {
		return nil // a deletion
	}
	t := trigger{Repo: e.Repo, Actor: e.Actor, Event: "push", Payload: e.HookPayload, SHA: after, Ref: ref,
		Files: pushedFiles(e.HookPayload), Commit: simpleCommit(e.HookPayload["head_commit"])}
	if branch, ok := strings.CutPrefix(ref, "refs/heads/"); ok {
		t.Branch = &branch
	} else if tag, ok := strings.CutPrefix(ref, "refs/tags/"); ok {
		t.Branch = &tag
	}
	if m, ok := e.HookPayload["head_commit"].(map[string]any); ok {
		msg, _ := m["message"].(string)
		t.Title, _, _ = strings.Cut(msg, "\n")
	}
	if _, err := k.Service.start(ctx, tx, t); err != nil {
		return err
	}
	if t.Branch != nil && ref == "refs/heads/"+e.Repo.DefaultBranch {
		return k.Service.syncSchedules(ctx, tx, e.Repo, after)
	}
	return nil
}

func (k PushSink) pullRequest(ctx context.Context, tx *store.Tx, e *events.Event) error {
	action, _ := e.HookPayload["action"].(string)
	raw, err := json.Marshal(e.HookPayload["pull_request"])
	if err != nil {
		return err
	}
	var pr struct {
		Number int64  `json:"number"`
		Title  string `json:"title"`
		Head   struct {
			SHA  string `json:"sha"`
			Ref  string `json:"ref"`
			Repo *struct {
				ID int64 `json:"id"`
			} `json:"repo"`
		} `json:"head"`
		Base struct {
			Ref string `json:"ref"`
		} `json:"base"`
	}
	if err := json.Unmarshal(raw, &pr); err != nil || pr.Head.SHA == "" {
		return err
	}
	branch := pr.Head.Ref
	t := trigger{Repo: e.Repo, Actor: e.Actor, Event: "pull_request", Payload: e.HookPayload, SHA: pr.Head.SHA,
		Ref: "refs/pull/" + itoa(pr.Number) + "/merge", Branch: &branch, Title: pr.Title, Action: action, Base: pr.Base.Ref}
	if pr.Head.Repo == nil || pr.Head.Repo.ID != e.Repo.ID { // a fork's (forks.go)
		pol, runs, err := k.Service.forkPolicy(ctx, tx, e.Repo)
		if err != nil || !runs {
			return err
		}
		if t.Approval, err = k.Service.needsApproval(ctx, tx, e.Repo, e.Actor, pol); err != nil {
			return err
		}
	}
	t.Commit = k.Service.commitJSON(e.Repo.ID, pr.Head.SHA)
	_, err = k.Service.start(ctx, tx, t)
	return err
}

// pushedFiles are the files a push's commits added, modified or removed
// (nil when the payload lists no commits).
func pushedFiles(payload map[string]any) []string {
	raw, err := json.Marshal(payload["commits"])
	var commits []struct{ Added, Modified, Removed []string }
	if err != nil || json.Unmarshal(raw, &commits) != nil || len(commits) == 0 {
		return nil
	}
	var files []string
	for _, c := range commits {
		files = append(append(append(files, c.Added...), c.Modified...), c.Removed...)
	}
	return files
}

// simpleCommit is the simple-commit of a push payload's head_commit.
func simpleCommit(head any) json.RawMessage {
	m, ok := head.(map[string]any)
	if !ok {
		return json.RawMessage("null")
	}
	out := map[string]any{}
	for _, k := range []string{"id", "tree_id", "message", "timestamp", "author", "committer"} {
		out[k] = m[k]
	}
	b, err := json.Marshal(out)
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}

// commitJSON is the simple-commit of a commit of the repository ("null"
// when it cannot be read).
func (s *Service) commitJSON(repoID int64, sha string) json.RawMessage {
	c, ok := s.readCommit(repoID, sha)
	if !ok {
		return json.RawMessage("null")
	}
	return simpleCommitJSON(c)
}

// readCommit is the commit rev resolves to in the repository, read in
// process (every issue, comment and pull request event of a repository
// looks for workflows on its default branch); ok is false when there is
// none.
func (s *Service) readCommit(repoID int64, rev string) (gitread.Commit, bool) {
	g, err := gitread.Open(s.Repos.GitDir(repoID))
	if err != nil {
		return gitread.Commit{}, false
	}
	defer g.Close()
	c, err := g.CommitMeta(rev)
	return c, err == nil
}

// simpleCommitJSON is the platform's simple-commit of c.
func simpleCommitJSON(c gitread.Commit) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"id": c.SHA, "tree_id": c.TreeSHA, "message": strings.TrimRight(c.Message, "\n"),
		"timestamp": c.CommitterDate.UTC().Format(time.RFC3339),
		"author":    map[string]string{"name": c.AuthorName, "email": c.AuthorEmail},
		"committer": map[string]string{"name": c.CommitterName, "email": c.CommitterEmail}})
	return b
}

// workflowFile is a workflow file of a commit.
type workflowFile struct {
	Path    string
	Content []byte
}

// workflowFiles reads the commit's .github/workflows/*.yml and *.yaml
// (a symlink's content is its target, as git reads it), in process: every
// push and pull request event reads them, in the transaction that
// records it, and most commits have none.
func (s *Service) workflowFiles(ctx context.Context, repoID int64, sha string) ([]workflowFile, error) {
	g, err := gitread.Open(s.Repos.GitDir(repoID))
	if err != nil {
		return nil, nil // no repository: no workflows
	}
	defer g.Close()
	entries, err := g.ListDir(sha, WorkflowsDir)
	if err != nil {
		return nil, nil // no such directory, or not a directory
	}
	var files []workflowFile
	for _, e := range entries {
		if ext := path.Ext(e.Name); ext != ".yml" && ext != ".yaml" {
			continue
		}
		if e.Type != gitread.EntryFile && e.Type != gitread.EntrySymlink {
			continue // a directory or a submodule of that name
		}
		content, err := g.ReadBlob(e.SHA)
		if err != nil {
			continue // unreadable: as if absent, never a failed push
		}
		files = append(files, workflowFile{Path: WorkflowsDir + "/" + e.Name, Content: content})
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files, nil
}

// start records the commit's workflows and starts the runs the trigger
// matches.
func (s *Service) start(ctx context.Context, tx *store.Tx, t trigger) ([]*Run, error) {
	files, err := s.workflowFiles(ctx, t.Repo.ID, t.SHA)
	if err != nil {
		return nil, err
	}
	var runs []*Run
	for _, f := range files {
		if t.Only != "" && f.Path != t.Only {
			continue
		}
		parsed, perr := engine.ParseWith(f.Content, s.resolver(ctx, tx, t.Repo, t.SHA, f.Path))
		name := f.Path
		if perr == nil && parsed.Name != "" {
			name = parsed.Name
		}
		wf, err := upsertWorkflow(ctx, tx, t.Repo.ID, f.Path, name, tx.Now())
		if err != nil {
			return nil, err
		}
		if wf.State != StateActive || !triggered(parsed, perr, t) {
			continue
		}
		r, err := s.createRun(ctx, tx, wf, parsed, perr, f.Content, t)
		if err != nil {
			return nil, err
		}
		runs = append(runs, r)
	}
	return runs, nil
}

// triggered says whether the trigger runs the workflow. A workflow that
// does not parse fails a run of every push, as on the platform.
func triggered(w *engine.Workflow, parseErr error, t trigger) bool {
	if parseErr != nil {
		return t.Event == "push" || t.Event == "workflow_dispatch"
	}
	f, ok := w.Events[t.Event]
	if !ok {
		return false
	}
	switch t.Event {
	case "push":
		return pushMatches(f, t.Ref, t.Files)
	case "pull_request":
		return pullRequestMatches(f, t.Action, t.Base, t.Files)
	case "repository_dispatch":
		return len(f.Types) == 0 || contains(f.Types, t.Action)
	case "schedule":
		return contains(f.Crons, t.Action)
	case "workflow_run":
		return workflowRunMatches(f, t.Action, t.Source, t.SourceBranch)
	}
	return true
}

// createRun stores a run of the workflow with its jobs queued (or, for a
// workflow that does not parse, completed as failed with the parser's
// message) and emits workflow_run requested and workflow_job queued.
func (s *Service) createRun(ctx context.Context, tx *store.Tx, wf *Workflow, parsed *engine.Workflow, parseErr error,
	content []byte, t trigger) (*Run, error) {
	payload, err := json.Marshal(t.Payload)
	if err != nil {
		return nil, err
	}
	title := t.Title
	if title == "" {
		title = wf.Name
	}
	r := &Run{RepoID: t.Repo.ID, WorkflowID: wf.ID, Name: wf.Name, DisplayTitle: title, Event: t.Event, Status: StatusQueued,
		HeadSHA: t.SHA, HeadBranch: t.Branch, WorkflowFile: string(content), EventPayload: payload, Inputs: t.Inputs,
		HeadCommit: t.Commit, CreatedAt: tx.Now(), WorkflowPath: wf.Path}
	if len(r.HeadCommit) == 0 {
		r.HeadCommit = json.RawMessage("null")
	}
	if t.Actor != nil {
		r.ActorID = &t.Actor.ID
	}
	if parseErr != nil {
		failure := Failure
		r.Status, r.Conclusion, r.Error = StatusCompleted, &failure, parseErr.Error()
	} else if t.Approval {
		waiting := ConclusionActionRequired
		r.Status, r.Conclusion = StatusCompleted, &waiting
	}
	if err := insertRun(ctx, tx, r); err != nil {
		return nil, err
	}
	if err := s.emitRun(ctx, tx, "requested", r, t.Actor); err != nil {
		return nil, err
	}
	if parseErr != nil || t.Approval {
		return r, s.emitRun(ctx, tx, "completed", r, t.Actor) // Approve queues the waiting run's jobs
	}
	if err := s.queueJobs(ctx, tx, r, parsed.Jobs, nil, t.Actor); err != nil {
		return nil, err
	}
	return r, s.joinGroup(ctx, tx, r, t)
}

// queueJobs stores the attempt's jobs: those in keep (the successful jobs
// of the attempt a rerun copies) completed as they were, the others
// queued, and emits workflow_job queued for these.
func (s *Service) queueJobs(ctx context.Context, tx *store.Tx, r *Run, jobs []engine.Job, keep map[string]*Job,
	actor *accounts.Account) error {
	var vars map[string]string // the run's github fields, read for the first job with a concurrency group
	var err error
	for _, ej := range jobs {
		j := &Job{RunID: r.ID, RepoID: r.RepoID, RunAttempt: r.RunAttempt, Key: ej.Key, Name: ej.Name, Matrix: ej.Matrix,
			Needs: ej.Needs, Labels: ej.Labels, Status: StatusQueued, CreatedAt: tx.Now(), Environment: ej.Environment}
		if ej.Call != nil {
			j.WorkflowFile, j.Callers = string(ej.Call.Workflow), ej.Call.Callers
		}
		if old, ok := keep[ej.Name]; ok {
			j.Status, j.Conclusion, j.StartedAt, j.CompletedAt = old.Status, old.Conclusion, old.StartedAt, old.CompletedAt
			j.Steps, j.Outputs, j.RunnerName, j.CheckRunID = old.Steps, old.Outputs, old.RunnerName, old.CheckRunID
		} else {
			for i, name := range append(append([]string{"Set up job"}, ej.Steps...), "Complete job") {
				j.Steps = append(j.Steps, Step{Name: name, Status: StatusQueued, Number: i + 1})
			}
		}
		if err := insertJob(ctx, tx, j); err != nil {
			return err
		}
		if ej.Concurrency.Group != "" && vars == nil {
			if vars, err = runVars(ctx, tx, r); err != nil {
				return err
			}
		}
		if err := s.joinJobGroup(ctx, tx, j, ej.Concurrency, vars); err != nil {
			return err
		}
		if j.Status == StatusQueued {
			if err := s.emitJob(ctx, tx, "queued", r, j, actor); err != nil {
				return err
			}
		}
	}
	tx.AfterCommit(s.wake)
	return nil
}

// wake wakes the built-in runner (Wake) and the registered runners
// waiting for a job (queued).
func (s *Service) wake() {
	if s.Wake != nil {
		s.Wake()
	}
	s.queued.notify()
}

// Dispatch runs the workflow on the ref (a branch or tag, or a commit
// SHA) with the inputs, checked against the workflow's inputs, and emits
// workflow_dispatch. ErrNoDispatch: the workflow at that ref has no
// workflow_dispatch trigger.
func (s *Service) Dispatch(ctx context.Context, repo *repos.Repository, wf *Workflow, ref string, inputs map[string]string,
	actor *accounts.Account) error {
	sha, branch, err := s.resolveRef(ctx, repo.ID, ref)
	if err != nil {
		return err
	}
	content, err := gitcmd.In(s.Repos.GitDir(repo.ID)).Output(ctx, nil, "cat-file", "blob", sha+":"+wf.Path)
	if err != nil {
		return ErrNoWorkflowAtRef
	}
	parsed, err := engine.ParseWith(content, s.resolver(ctx, s.DB, repo, sha, wf.Path))
	if err != nil {
		return &InvalidWorkflowError{Message: err.Error()}
	}
	if _, ok := parsed.Events["workflow_dispatch"]; !ok {
		return ErrNoDispatch
	}
	inputs, err = checkInputs(parsed.Inputs, inputs)
	if err != nil {
		return err
	}
	payload := map[string]any{"inputs": inputs, "ref": "refs/heads/" + branch, "workflow": wf.Path}
	if branch == "" {
		payload["ref"] = ref
	}
	t := trigger{Repo: repo, Actor: actor, Event: "workflow_dispatch", Payload: payload, SHA: sha, Branch: &branch,
		Inputs: inputs, Only: wf.Path, Commit: s.commitJSON(repo.ID, sha)}
	if branch == "" {
		t.Branch = nil
	}
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		if err := s.Events.Emit(ctx, tx, &events.Event{HookEvent: "workflow_dispatch", HookPayload: payload, Actor: actor,
			Repo: repo, Public: !repo.Private}); err != nil {
			return err
		}
		_, err := s.start(ctx, tx, t)
		return err
	})
}

// Errors of a dispatch.
var (
	ErrNoDispatch      = errors.New("Workflow does not have 'workflow_dispatch' trigger")
	ErrNoWorkflowAtRef = errors.New("The workflow file does not exist at this ref")
	ErrNoRef           = errors.New("No ref found")
)

// InvalidWorkflowError is a workflow that does not parse at the
// dispatch's ref.
type InvalidWorkflowError struct{ Message string }

func (e *InvalidWorkflowError) Error() string { return "Invalid workflow file: " + e.Message }

// InputError is an input the workflow does not take or a required one
// missing.
type InputError struct{ Message string }

func (e *InputError) Error() string { return e.Message }

// checkInputs fills in the defaults and refuses unknown and missing
// required inputs, as the platform does.
func checkInputs(defined map[string]engine.Input, given map[string]string) (map[string]string, error) {
	out := map[string]string{}
	var unknown []string
	for k, v := range given {
		if _, ok := defined[k]; !ok {
			unknown = append(unknown, k)
			continue
		}
		out[k] = v
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, &InputError{Message: "Unexpected inputs provided: " + jsonList(unknown)}
	}
	var missing []string
	for k, in := range defined {
		if _, ok := out[k]; ok {
			continue
		}
		if in.Required && in.Default == "" {
			missing = append(missing, k)
			continue
		}
		out[k] = in.Default
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, &InputError{Message: "Required input '" + strings.Join(missing, "', '") + "' not provided"}
	}
	return out, nil
}

func jsonList(l []string) string {
	b, _ := json.Marshal(l)
	return string(b)
}

// resolveRef finds a dispatch's commit: a branch, a tag or a full SHA;
// branch is "" for a tag or a SHA.
func (s *Service) resolveRef(ctx context.Context, repoID int64, ref string) (sha, branch string, err error) {
	g := gitcmd.In(s.Repos.GitDir(repoID))
	name := strings.TrimPrefix(ref, "refs/heads/")
	if sha, found, err := gitread.ResolveCommit(ctx, g, "refs/heads/"+name); err != nil {
		return "", "", err
	} else if found {
		return sha, name, nil
	}
	tag := strings.TrimPrefix(ref, "refs/tags/")
	if sha, err := g.Text(ctx, nil, "rev-parse", "--verify", "--quiet", "refs/tags/"+tag+"^{commit}"); err == nil && sha != "" {
		return sha, "", nil
	}
	if len(ref) == 40 {
		if sha, err := g.Text(ctx, nil, "rev-parse", "--verify", "--quiet", ref+"^{commit}"); err == nil && sha != "" {
			return sha, "", nil
		}
	}
	return "", "", ErrNoRef
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
