package githost

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/auth"
	"forgeapi/internal/events"
	"forgeapi/internal/git/githttp"
	"forgeapi/internal/git/gitread"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// maxPayloadCommits is how many commits push payloads list, as on the
// platform; size counts them all.
const maxPayloadCommits = 20

const zeroSHA = "0000000000000000000000000000000000000000"

// postReceive records the push's events and deletes its push_log row in
// one transaction (see recordPush).
func (pr *pushRecorder) postReceive(ctx context.Context, updates []githttp.RefUpdate) error {
	g, err := gitread.Open(pr.h.Repos.GitDir(pr.repoID))
	if err != nil {
		return err
	}
	defer g.Close()
	e := &pushLogEntry{ID: pr.logID, RepoID: pr.repoID, PusherID: pr.principal.Account.ID, Key: pr.key, RefsBefore: pr.refsBefore, ViaGit: true, ViaSSH: pr.ssh}
	return pr.h.recordPush(ctx, g, e, updates)
}

// recordPush records a push in one transaction: it deletes the push's
// push_log row and, only when that DELETE removed it (neither the push's
// own postReceive nor the Recoverer has recorded the push), emits for
// each applied update a push event (and create or delete events for new
// and removed references), notes the references' new values (see
// recordRefs), measures the repository's size (repos.MeasureSize), sets
// its pushed_at and counts the push for git maintenance (see
// Maintainer); a server push's intent is carried out first, when all its
// updates were applied (see PushIntent). That DELETE makes the events,
// and the intent, exactly-once. A transaction PostgreSQL aborts for a
// conflict is run again.
func (h *Handler) recordPush(ctx context.Context, g *gitread.Repository, e *pushLogEntry, updates []githttp.RefUpdate) error {
	return h.DB.RetryTx(ctx, func(tx *store.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM push_log WHERE id = $1`, e.ID)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return err // recorded already
		}
		if err := countPush(ctx, tx, e.RepoID); err != nil {
			return err
		}
		if len(updates) == 0 {
			return nil
		}
		repo, err := repos.ByID(ctx, tx, e.RepoID)
		if err != nil {
			return err
		}
		pusher, err := accounts.ByID(ctx, tx, e.PusherID)
		if err != nil {
			return err
		}
		if err := h.carryOut(ctx, tx, e, &Push{Repo: repo, Pusher: pusher, Updates: updates}); err != nil {
			return err
		}
		now := e.PushedAt
		if now.IsZero() {
			now = tx.Now()
		}
		b := &pushBuilder{base: h.BaseURL, repo: repo, pusher: pusher, git: g, refsBefore: e.RefsBefore, now: now}
		var evs []*events.Event
		for _, u := range updates {
			ue, err := b.eventsFor(ctx, u)
			if err != nil {
				return err
			}
			evs = append(evs, ue...)
		}
		for _, ev := range evs {
			if err := h.Events.Emit(ctx, tx, ev); err != nil {
				return err
			}
		}
		if err := recordRefs(ctx, tx, g, e.RepoID, updates); err != nil {
			return err
		}
		if e.ViaGit && repo.Owner.IsOrg() {
			via := transportHTTP
			if e.ViaSSH {
				via = transportSSH
			}
			if err := recordGitVia(ctx, tx, &auth.Principal{Account: &auth.Account{ID: pusher.ID, Login: pusher.Login}}, repo, "git.push", via); err != nil {
				return err
			}
		}
		// The counts row is locked from here to the commit, after the
		// events' writes (pull requests, issues), in the order the
		// issue triggers and the pulls Checker take them too. The
		// events' payloads show the size (and pushed_at) of before.
		if err := repos.MeasureSize(ctx, tx, repo.ID, h.Repos.GitDir(repo.ID)); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE repositories SET pushed_at = $1, updated_at = $1 WHERE id = $2`, b.now, repo.ID)
		return err
	})
}

// pushBuilder turns reference updates into events.
type pushBuilder struct {
	base       string
	repo       *repos.Repository
	pusher     *accounts.Account
	git        *gitread.Repository
	refsBefore []string
	now        time.Time
}

func (b *pushBuilder) event(feedType string, feed any, hookEvent string, hook map[string]any) *events.Event {
	return &events.Event{FeedType: feedType, FeedPayload: feed, HookEvent: hookEvent, HookPayload: hook,
		Actor: b.pusher, Repo: b.repo, Public: !b.repo.Private, CreatedAt: b.now}
}

func refType(u githttp.RefUpdate) string {
	if u.IsTag() {
		return "tag"
	}
	return "branch"
}

func (b *pushBuilder) eventsFor(ctx context.Context, u githttp.RefUpdate) ([]*events.Event, error) {
	var out []*events.Event
	short := u.ShortName()
	if u.IsCreate() && (u.IsBranch() || u.IsTag()) {
		desc := optional(b.repo.Description)
		out = append(out, b.event("CreateEvent",
			map[string]any{"ref": short, "full_ref": u.Ref, "ref_type": refType(u), "master_branch": b.repo.DefaultBranch, "description": desc, "pusher_type": "user"},
			"create",
			map[string]any{"ref": short, "ref_type": refType(u), "master_branch": b.repo.DefaultBranch, "description": desc, "pusher_type": "user"}))
	}
	commits, err := b.pushedCommits(ctx, u)
	if err != nil {
		return nil, err
	}
	if u.IsBranch() && !u.IsDelete() {
		out = append(out, b.event("PushEvent", b.feedPayload(u, commits), "push", b.hookPayload(ctx, u, commits)))
	} else {
		out = append(out, b.event("", nil, "push", b.hookPayload(ctx, u, commits)))
	}
	if u.IsDelete() && (u.IsBranch() || u.IsTag()) {
		out = append(out, b.event("DeleteEvent",
			map[string]any{"ref": short, "full_ref": u.Ref, "ref_type": refType(u), "pusher_type": "user"},
			"delete",
			map[string]any{"ref": short, "ref_type": refType(u), "pusher_type": "user"}))
	}
	return out, nil
}

// pushed is the commits a reference update brings: the newest
// maxPayloadCommits of them, oldest first as payloads list them, how many
// there are, and which of them are new to the repository (distinct).
type pushed struct {
	commits   []gitread.Commit
	size      int
	distinct  map[string]bool
	nDistinct int
}

func (b *pushBuilder) pushedCommits(ctx context.Context, u githttp.RefUpdate) (pushed, error) {
	if u.IsDelete() {
		return pushed{}, nil
	}
	newIsCommit, err := b.isCommit(u.NewSHA)
	if err != nil || !newIsCommit {
		return pushed{}, err // a tag of a tree or a blob brings no commits
	}
	oldIsCommit, err := b.isCommit(u.OldSHA)
	if err != nil {
		return pushed{}, err
	}
	q := gitread.CommitQuery{Head: u.NewSHA, Limit: maxPayloadCommits}
	if u.IsCreate() || !oldIsCommit {
		q.Exclude = b.refsBefore
	} else {
		q.Exclude = []string{u.OldSHA}
	}
	list, err := b.git.Commits(ctx, q)
	if err != nil {
		return pushed{}, fmt.Errorf("list pushed commits of %s: %w", u.Ref, err)
	}
	fresh, err := b.freshCommits(ctx, u, q, list)
	if err != nil {
		return pushed{}, fmt.Errorf("list new commits of %s: %w", u.Ref, err)
	}
	p := pushed{size: list.Total, distinct: map[string]bool{}, nDistinct: fresh.Total}
	for _, c := range fresh.Commits {
		p.distinct[c.SHA] = true
	}
	p.commits = slices.Clone(list.Commits)
	slices.Reverse(p.commits)
	return p, nil
}

// freshCommits lists the commits of the update that no reference reached
// before the push (the distinct ones), given list, the update's commits
// selected by q. They are a subset of list (the old commit was a
// reference's), so when q already excluded every reference, or when there
// are as many of them as in list, they are list, and the commits are not
// read and diffed a second time.
func (b *pushBuilder) freshCommits(ctx context.Context, u githttp.RefUpdate, q gitread.CommitQuery, list gitread.CommitList) (gitread.CommitList, error) {
	if slices.Equal(q.Exclude, b.refsBefore) {
		return list, nil
	}
	count, err := b.git.Commits(ctx, gitread.CommitQuery{Head: u.NewSHA, Exclude: b.refsBefore, Limit: 0})
	if err != nil || count.Total == list.Total {
		return list, err
	}
	return b.git.Commits(ctx, gitread.CommitQuery{Head: u.NewSHA, Exclude: b.refsBefore, Limit: maxPayloadCommits})
}

// isCommit reports whether sha leads to a commit (annotated tags peeled);
// false for the zero SHA and for trees and blobs, which references outside
// refs/heads may name.
func (b *pushBuilder) isCommit(sha string) (bool, error) {
	if sha == zeroSHA {
		return false, nil
	}
	_, err := b.git.Resolve(sha)
	if errors.Is(err, gitread.ErrRevisionNotFound) {
		return false, nil
	}
	return err == nil, err
}

func (b *pushBuilder) feedPayload(u githttp.RefUpdate, p pushed) map[string]any {
	commits := make([]map[string]any, 0, len(p.commits))
	for _, c := range p.commits {
		commits = append(commits, map[string]any{
			"sha":      c.SHA,
			"author":   map[string]any{"email": c.AuthorEmail, "name": c.AuthorName},
			"message":  strings.TrimRight(c.Message, "\n"),
			"distinct": p.distinct[c.SHA],
			"url":      b.base + "/repos/" + b.repo.FullName() + "/commits/" + c.SHA,
		})
	}
	return map[string]any{
		"repository_id": b.repo.ID, "push_id": newPushID(), "size": p.size, "distinct_size": p.nDistinct,
		"ref": u.Ref, "head": u.NewSHA, "before": u.OldSHA, "commits": commits,
	}
}

func (b *pushBuilder) hookPayload(ctx context.Context, u githttp.RefUpdate, p pushed) map[string]any {
	web := accounts.WebBase(b.base) + "/" + b.repo.FullName()
	commits := make([]map[string]any, 0, len(p.commits))
	for _, c := range p.commits {
		commits = append(commits, hookCommit(web, c, p.distinct[c.SHA]))
	}
	var head any
	if len(commits) > 0 {
		head = commits[len(commits)-1]
	} else if !u.IsDelete() {
		if list, err := b.git.Commits(ctx, gitread.CommitQuery{Head: u.NewSHA, Limit: 1}); err == nil && len(list.Commits) > 0 {
			head = hookCommit(web, list.Commits[0], false)
		}
	}
	compare := web + "/compare/" + short(u.OldSHA) + "..." + short(u.NewSHA)
	if u.IsCreate() {
		compare = web + "/commit/" + short(u.NewSHA)
	} else if u.IsDelete() {
		compare = web + "/compare/" + short(u.OldSHA) + "...000000000000"
	}
	forced := false
	if !u.IsCreate() && !u.IsDelete() {
		if ok, err := b.git.IsAncestor(ctx, u.OldSHA, u.NewSHA); err == nil {
			forced = !ok
		}
	}
	return map[string]any{
		"ref": u.Ref, "before": u.OldSHA, "after": u.NewSHA,
		"created": u.IsCreate(), "deleted": u.IsDelete(), "forced": forced,
		"base_ref": b.baseRef(u), "compare": compare, "commits": commits, "head_commit": head,
		"pusher": map[string]any{"name": b.pusher.Login, "email": optional(b.pusher.Email)},
	}
}

// baseRef is the push payload's base_ref: for a tag pushed at the head
// of a branch, that branch (the default branch when it is one of them),
// as the platform names the branch a tag was made from; nil otherwise.
func (b *pushBuilder) baseRef(u githttp.RefUpdate) any {
	if !strings.HasPrefix(u.Ref, "refs/tags/") || u.IsDelete() {
		return nil
	}
	commit, err := b.git.Resolve(u.NewSHA)
	if err != nil {
		return nil // a tag of a tree or a blob
	}
	branches, err := b.git.BranchesAt(commit)
	if err != nil || len(branches) == 0 {
		return nil
	}
	if def := "refs/heads/" + b.repo.DefaultBranch; slices.Contains(branches, def) {
		return def
	}
	return branches[0]
}

func hookCommit(web string, c gitread.Commit, distinct bool) map[string]any {
	nonNil := func(s []string) []string {
		if s == nil {
			return []string{}
		}
		return s
	}
	return map[string]any{
		"id": c.SHA, "tree_id": c.TreeSHA, "distinct": distinct, "message": strings.TrimRight(c.Message, "\n"),
		"timestamp": c.CommitterDate.Format(time.RFC3339), "url": web + "/commit/" + c.SHA,
		"author":    map[string]any{"name": c.AuthorName, "email": c.AuthorEmail},
		"committer": map[string]any{"name": c.CommitterName, "email": c.CommitterEmail},
		"added":     nonNil(c.Added), "removed": nonNil(c.Removed), "modified": nonNil(c.Modified),
	}
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

func optional(s string) any {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	return s
}

// newPushID returns a random positive 53-bit id (safe in JavaScript).
func newPushID() int64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return int64(binary.BigEndian.Uint64(b[:]) >> 11)
}
