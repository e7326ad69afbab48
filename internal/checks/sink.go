package checks

import (
	"context"
	"encoding/json"
	"strings"

	"forgeapi/internal/events"
	"forgeapi/internal/store"
)

// PushSink is the events sink that makes check suites when a push lands
// (git pushes and the API's server pushes alike, in the push's
// transaction): for a branch's new head, a suite (queued) for each app
// installed on the repository that subscribes to check_suite with the
// checks permission, unless the repository's preferences turned
// automatic suites off for it or it has a suite of the commit already,
// and check_suite requested to that app.
type PushSink struct{ Service *Service }

// HandleEvent handles push events and ignores the others.
func (k PushSink) HandleEvent(ctx context.Context, tx *store.Tx, e *events.Event) error {
	if e.HookEvent != "push" || e.Repo == nil || k.Service.Apps == nil {
		return nil
	}
	ref, _ := e.HookPayload["ref"].(string)
	before, _ := e.HookPayload["before"].(string)
	after, _ := e.HookPayload["after"].(string)
	branch, ok := strings.CutPrefix(ref, "refs/heads/")
	if !ok || strings.Trim(after, "0") == "" {
		return nil
	}
	recipients, err := k.Service.Apps.Recipients(ctx, tx, &events.Event{HookEvent: "check_suite", Repo: e.Repo})
	if err != nil || len(recipients) == 0 {
		return err
	}
	head := Head{SHA: after, Branch: &branch, Commit: simpleCommit(e.HookPayload["head_commit"]), Before: &before, After: &after}
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
