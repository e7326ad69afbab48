package checks

import (
	"context"
	"encoding/json"
	"strings"

	"forgeapi/internal/events"
	"forgeapi/internal/git/gitread"
	"forgeapi/internal/store"
)

// PushSink is the events sink that makes check suites when a push lands
// (git pushes and the API's server pushes alike, in the push's
// transaction): for a branch's new head, a suite (queued) for each app
// installed on the repository that subscribes to check_suite with the
// checks permission, unless the repository's preferences turned
// automatic suites off for it or it has a suite of the commit already,
// and check_suite requested to that app. A pull request from a fork
// (opened, reopened, synchronize) does the same in the base repository
// for its head, with no head branch, as the platform does.
type PushSink struct{ Service *Service }

// HandleEvent handles push and pull_request events and ignores the
// others.
func (k PushSink) HandleEvent(ctx context.Context, tx *store.Tx, e *events.Event) error {
	if e.Repo == nil || k.Service.Apps == nil {
		return nil
	}
	switch e.HookEvent {
	case "push":
		return k.pushed(ctx, tx, e)
	case "pull_request":
		return k.forkPullRequest(ctx, tx, e)
	}
	return nil
}

// pushed requests the suites of a branch's new head.
func (k PushSink) pushed(ctx context.Context, tx *store.Tx, e *events.Event) error {
	ref, _ := e.HookPayload["ref"].(string)
	before, _ := e.HookPayload["before"].(string)
	after, _ := e.HookPayload["after"].(string)
	branch, ok := strings.CutPrefix(ref, "refs/heads/")
	if !ok || strings.Trim(after, "0") == "" {
		return nil
	}
	head := Head{SHA: after, Branch: &branch, Before: &before, After: &after}
	return k.request(ctx, tx, e, head, func() json.RawMessage { return simpleCommit(e.HookPayload["head_commit"]) })
}

// forkPullRequest requests the suites of the head of a pull request from
// a fork, opened, reopened or synchronized.
func (k PushSink) forkPullRequest(ctx context.Context, tx *store.Tx, e *events.Event) error {
	action, _ := e.HookPayload["action"].(string)
	if action != "opened" && action != "reopened" && action != "synchronize" {
		return nil
	}
	recipients, err := k.recipients(ctx, tx, e)
	if err != nil || len(recipients) == 0 {
		return err
	}
	raw, err := json.Marshal(e.HookPayload["pull_request"])
	if err != nil {
		return err
	}
	var pr struct {
		Head struct {
			SHA  string `json:"sha"`
			Repo *struct {
				ID int64 `json:"id"`
			} `json:"repo"`
		} `json:"head"`
	}
	if err := json.Unmarshal(raw, &pr); err != nil || pr.Head.Repo == nil || pr.Head.Repo.ID == e.Repo.ID || k.Service.Repos == nil {
		return err // a head in the repository itself came with its push
	}
	g, err := gitread.Open(k.Service.Repos.GitDir(e.Repo.ID))
	if err != nil {
		return err
	}
	defer g.Close()
	c, err := g.CommitMeta(pr.Head.SHA)
	if err != nil {
		return nil // the head's objects are not in the base repository: nothing to check
	}
	return k.request(ctx, tx, e, Head{SHA: pr.Head.SHA}, func() json.RawMessage { return commitJSON(c) })
}

// recipients are the installations whose apps receive check_suite on
// the event's repository.
func (k PushSink) recipients(ctx context.Context, tx *store.Tx, e *events.Event) ([]events.AppInstallation, error) {
	return k.Service.Apps.Recipients(ctx, tx, &events.Event{HookEvent: "check_suite", Repo: e.Repo})
}

// request makes the suite of the head for each app that receives
// check_suite and has automatic suites on, and sends it check_suite
// requested; commit renders the head's simple-commit once needed.
func (k PushSink) request(ctx context.Context, tx *store.Tx, e *events.Event, head Head, commit func() json.RawMessage) error {
	recipients, err := k.recipients(ctx, tx, e)
	if err != nil || len(recipients) == 0 {
		return err
	}
	head.Commit = commit()
	after := head.SHA
	v := k.Service.newView(ctx, tx, e.Repo)
	for _, r := range recipients {
		on, err := autoTrigger(ctx, tx, e.Repo.ID, r.AppID)
		if err != nil {
			return err
		}
		if !on {
			continue
		}
		suite := &Suite{RepoID: e.Repo.ID, AppID: r.AppID, HeadSHA: after, HeadBranch: head.Branch, Before: head.Before,
			After: head.After, HeadCommit: head.Commit, Status: StatusQueued, CreatedAt: e.CreatedAt}
		created, err := insertSuite(ctx, tx, suite)
		if err != nil {
			return err
		}
		if created {
			if err := k.Service.emitSuite(ctx, tx, v, "requested", suite, e.Actor, true); err != nil {
				return err
			}
		}
	}
	return nil
}

// simpleCommit is the simple-commit object of a push payload's
// head_commit: id, tree_id, message, timestamp, author and committer.
func simpleCommit(head any) json.RawMessage {
	m, _ := head.(map[string]any)
	out := map[string]any{}
	for _, k := range []string{"id", "tree_id", "message", "timestamp", "author", "committer"} {
		out[k] = m[k]
	}
	b, err := json.Marshal(out)
	if err != nil {
		return json.RawMessage(`null`)
	}
	return b
}
