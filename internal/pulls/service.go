package pulls

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/events"
	"forgeapi/internal/git/gitref"
	"forgeapi/internal/issues"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// NewPull is what creating a pull request asks for: Head is "branch" (of
// the base repository) or "owner:branch" (of the owner's fork in the
// network); Issue, when set, turns that open issue into the pull request
// (its title and body are kept).
type NewPull struct {
	Title, Body string
	Head, Base  string
	Issue       *int64
	Draft       bool
}

// head is a resolved head: its repository, branch and commit.
type head struct {
	repo      *repos.Repository
	ref, sha  string
	stagedRef string // where a fork's commit was copied in the base repository
}

// resolveHead finds the head's repository and commit; 422 when the head
// names no branch of the repository or of a fork of it.
func (s *Service) resolveHead(ctx context.Context, repo *repos.Repository, spec string) (*head, error) {
	owner, ref, found := strings.Cut(spec, ":")
	if !found {
		owner, ref = repo.Owner.Login, spec
	}
	invalid := apierr.Invalid("PullRequest", "head", apierr.CodeInvalid)
	h := &head{ref: strings.TrimPrefix(ref, "refs/heads/")}
	if !gitref.ValidBranch(h.ref) {
		return nil, invalid
	}
	if strings.EqualFold(owner, repo.Owner.Login) {
		h.repo = repo
	} else {
		forks, err := repos.Forks(ctx, s.DB, repo.ID)
		if err != nil {
			return nil, err
		}
		i := slices.IndexFunc(forks, func(f *repos.Repository) bool { return strings.EqualFold(f.Owner.Login, owner) })
		if i < 0 {
			return nil, invalid
		}
		h.repo = forks[i]
	}
	sha, ok, err := gitDir(s.Repos.GitDir(h.repo.ID)).commit(ctx, "refs/heads/"+h.ref)
	if err != nil {
		return nil, err
	} else if !ok {
		return nil, invalid
	}
	h.sha = sha
	if h.repo.ID != repo.ID {
		h.stagedRef = "refs/forgeapi/incoming/" + wire.NewGUID()
		if err := gitDir(s.Repos.GitDir(repo.ID)).fetch(ctx, s.Repos.GitDir(h.repo.ID), sha, h.stagedRef); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// Create opens a pull request of the head into the base branch and emits
// pull_request opened (PullRequestEvent). 422 when the base is no branch,
// the head is not found, they have no commits between them, or a pull
// request of that head into that base is open already.
func (s *Service) Create(ctx context.Context, repo *repos.Repository, actor *accounts.Account, n NewPull) (*PullRequest, error) {
	git := gitDir(s.Repos.GitDir(repo.ID))
	if !gitref.ValidBranch(n.Base) {
		return nil, apierr.Invalid("PullRequest", "base", apierr.CodeInvalid)
	}
	baseSHA, ok, err := git.commit(ctx, "refs/heads/"+n.Base)
	if err != nil {
		return nil, err
	} else if !ok {
		return nil, apierr.Invalid("PullRequest", "base", apierr.CodeInvalid)
	}
	h, err := s.resolveHead(ctx, repo, n.Head)
	if err != nil {
		return nil, err
	}
	if h.stagedRef != "" {
		defer func() { _ = git.deleteRef(context.WithoutCancel(ctx), h.stagedRef) }()
	}
	commits, adds, dels, files, err := git.stats(ctx, baseSHA, h.sha)
	if err != nil {
		return nil, err
	}
	if commits == 0 {
		return nil, apierr.Custom("PullRequest", "", "No commits between %s and %s", n.Base, n.Head)
	}
	var out *PullRequest
	err = s.DB.Tx(ctx, func(tx *store.Tx) error {
		// Two creations for one head and base at once would each find none open.
		if err := tx.LockKey(ctx, fmt.Sprintf("pull request %d %d %s %s", repo.ID, h.repo.ID, h.ref, n.Base)); err != nil {
			return err
		}
		if open, err := openFor(ctx, tx, repo, h.repo.ID, h.ref, n.Base); err != nil {
			return err
		} else if open != 0 {
			return apierr.Custom("PullRequest", "", "A pull request already exists for %s:%s.", h.repo.Owner.Login, h.ref)
		}
		is, err := s.issueRow(ctx, tx, repo, actor, n)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO pull_requests (issue_id, repository_id, number, head_repository_id, head_ref, head_sha,
			base_ref, base_sha, draft, commits, additions, deletions, changed_files)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`, is.ID, repo.ID, is.Number, h.repo.ID, h.ref, h.sha,
			n.Base, baseSHA, n.Draft, commits, adds, dels, files); err != nil {
			return store.Normalize(err)
		}
		if err := git.setRef(ctx, pullRef(is.Number, "head"), h.sha); err != nil {
			return err
		}
		if out, err = byNumber(ctx, tx, repo, is.Number); err != nil {
			return err
		}
		s.wake(tx)
		return s.emit(ctx, tx, actor, "opened", out, nil)
	})
	return out, err
}

// issueRow inserts the pull request's issue row, or marks the issue the
// request names (422 when it is not an open issue of the repository).
func (s *Service) issueRow(ctx context.Context, tx store.Q, repo *repos.Repository, actor *accounts.Account, n NewPull) (*issues.Issue, error) {
	if n.Issue == nil {
		return issues.InsertPullRequest(ctx, tx, repo, actor, n.Title, n.Body)
	}
	is, err := issues.MarkPullRequest(ctx, tx, repo, *n.Issue)
	if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrConflict) {
		return nil, apierr.Invalid("PullRequest", "issue", apierr.CodeInvalid)
	}
	return is, err
}

// pullRef is refs/pull/{number}/{kind}.
func pullRef(number int64, kind string) string {
	return "refs/pull/" + itoa(number) + "/" + kind
}

// Get returns the repository's pull request; store.ErrNotFound when none.
// An open one's clean mergeable_state is refined by the base's branch
// protection and the head's checks (blocked, behind, unstable).
func (s *Service) Get(ctx context.Context, repo *repos.Repository, number int64) (*PullRequest, error) {
	p, err := byNumber(ctx, s.DB, repo, number)
	if err != nil || !p.Open() {
		return p, err
	}
	p.MergeableState, err = s.protectedState(ctx, p)
	return p, err
}

// Changes is what an update asks for; nil fields are left as they are.
type Changes struct {
	Title, Body, State, Base *string
}

// Update changes a pull request's title, body, state and base branch and
// emits pull_request edited (with changes.title/body/base.ref.from),
// closed or reopened. Reopening needs the head branch to exist and no
// other open pull request of it into the base (422); a merged pull
// request cannot be reopened (422). A new base makes the mergeability
// stale.
func (s *Service) Update(ctx context.Context, repo *repos.Repository, actor *accounts.Account, number int64, c Changes, mayPush bool) (*PullRequest, error) {
	git := gitDir(s.Repos.GitDir(repo.ID))
	var newBaseSHA string
	if c.Base != nil {
		if !gitref.ValidBranch(*c.Base) {
			return nil, apierr.Invalid("PullRequest", "base", apierr.CodeInvalid)
		}
		sha, ok, err := git.commit(ctx, "refs/heads/"+*c.Base)
		if err != nil {
			return nil, err
		} else if !ok {
			return nil, apierr.Invalid("PullRequest", "base", apierr.CodeInvalid)
		}
		newBaseSHA = sha
	}
	var out *PullRequest
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		before, err := byNumber(ctx, tx, repo, number)
		if err != nil {
			return err
		}
		if !mayPush && (before.Issue.User == nil || before.Issue.User.ID != actor.ID) {
			return apierr.Forbidden("Must have push access to repository.")
		}
		if err := s.checkReopen(ctx, tx, before, c); err != nil {
			return err
		}
		if c.Base != nil && *c.Base != before.BaseRef {
			if _, err := tx.ExecContext(ctx, `UPDATE pull_requests SET base_ref = $1, base_sha = $2, mergeable = NULL,
				mergeable_state = 'unknown', check_due = TRUE, check_generation = check_generation + 1 WHERE id = $3`,
				*c.Base, newBaseSHA, before.ID); err != nil {
				return store.Normalize(err)
			}
			s.wake(tx)
		}
		if _, _, err := issues.SetFields(ctx, tx, repo, actor, number, issues.Changes{Title: c.Title, Body: c.Body, State: c.State}); err != nil {
			return err
		}
		if out, err = byNumber(ctx, tx, repo, number); err != nil {
			return err
		}
		return s.emitUpdate(ctx, tx, actor, before, out)
	})
	return out, err
}

// checkReopen refuses to reopen a merged pull request or one whose head
// is gone or has another open pull request into the base.
func (s *Service) checkReopen(ctx context.Context, tx store.Q, before *PullRequest, c Changes) error {
	if c.State == nil || *c.State != issues.StateOpen || before.Open() {
		return nil
	}
	if before.MergedAt != nil || before.HeadRepo == nil {
		return apierr.Custom("PullRequest", "state", "state cannot be changed. The pull request cannot be reopened.")
	}
	base := before.BaseRef
	if c.Base != nil {
		base = *c.Base
	}
	if open, err := openFor(ctx, tx, before.Repo, before.HeadRepo.ID, before.HeadRef, base); err != nil {
		return err
	} else if open != 0 {
		return apierr.Custom("PullRequest", "state", "state cannot be changed. There is already an open pull request from %s:%s to %s.",
			before.HeadRepo.Owner.Login, before.HeadRef, base)
	}
	return nil
}

// emitUpdate emits edited (when the title, body or base changed), then
// closed or reopened, and records renamed, closed and reopened in the
// pull request's history.
func (s *Service) emitUpdate(ctx context.Context, tx *store.Tx, actor *accounts.Account, before, after *PullRequest) error {
	changes := map[string]any{}
	if before.Issue.Title != after.Issue.Title {
		changes["title"] = map[string]any{"from": before.Issue.Title}
	}
	if before.Issue.Body != after.Issue.Body {
		changes["body"] = map[string]any{"from": before.Issue.Body}
	}
	if before.BaseRef != after.BaseRef {
		changes["base"] = map[string]any{"ref": map[string]any{"from": before.BaseRef}, "sha": map[string]any{"from": before.BaseSHA}}
	}
	if len(changes) > 0 {
		if err := s.emit(ctx, tx, actor, "edited", after, map[string]any{"changes": changes}); err != nil {
			return err
		}
	}
	if before.Issue.Title != after.Issue.Title {
		rename := issues.EventRecord{Event: "renamed", RenameFrom: before.Issue.Title, RenameTo: after.Issue.Title}
		if err := issues.RecordEvent(ctx, tx, after.Issue, actor, rename); err != nil {
			return err
		}
	}
	if before.Issue.State == after.Issue.State {
		return nil
	}
	action := "closed"
	if after.Open() {
		action = "reopened"
		if _, err := tx.ExecContext(ctx, `UPDATE pull_requests SET check_due = TRUE, check_generation = check_generation + 1 WHERE id = $1`, after.ID); err != nil {
			return store.Normalize(err)
		}
		s.wake(tx)
	}
	if err := issues.RecordEvent(ctx, tx, after.Issue, actor, issues.EventRecord{Event: action}); err != nil {
		return err
	}
	return s.emit(ctx, tx, actor, action, after, nil)
}

// EmitForIssue sends the pull_request event of a change made to the
// repository's pull request number through the issues endpoints (labeled,
// assigned, milestoned, edited, closed, locked and their opposites), in
// that change's transaction; it implements issues.PullRequestEvents.
func (s *Service) EmitForIssue(ctx context.Context, tx *store.Tx, repo *repos.Repository, actor *accounts.Account, action string, number int64, extra map[string]any) error {
	p, err := byNumber(ctx, tx, repo, number)
	if err != nil {
		return err
	}
	return s.emit(ctx, tx, actor, action, p, extra)
}

// feedActions are the pull_request actions the feeds show as
// PullRequestEvent.
var feedActions = []string{"opened", "edited", "closed", "reopened", "synchronize"}

// emit emits the pull_request webhook event (and PullRequestEvent for
// the actions the feeds show) with the pull request as it is now.
func (s *Service) emit(ctx context.Context, tx *store.Tx, actor *accounts.Account, action string, p *PullRequest, extra map[string]any) error {
	j, err := newRenderer(ctx, tx, s.urls(ctx)).pull(ctx, p, true)
	if err != nil {
		return err
	}
	payload := map[string]any{"action": action, "number": p.Number(), "pull_request": j}
	maps.Copy(payload, extra)
	e := &events.Event{HookEvent: "pull_request", HookPayload: payload, Actor: actor, Repo: p.Repo, Public: !p.Repo.Private}
	if slices.Contains(feedActions, action) {
		e.FeedType, e.FeedPayload = "PullRequestEvent", maps.Clone(payload)
	}
	return s.Events.Emit(ctx, tx, e)
}
