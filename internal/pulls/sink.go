package pulls

import (
	"context"
	"strings"

	"forgeapi/internal/events"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// PushSink is the events sink that follows pushes (git pushes and the
// API's server pushes alike, in the push's transaction): a push to the
// head branch of open pull requests moves their refs/pull/{n}/head,
// updates their head commit and counts, makes their mergeability stale
// and emits pull_request synchronize (before, after); a push to the base
// branch makes their mergeability stale, and records merged those whose
// head it brought into the branch (see mergedByPush). githost, below
// pulls, knows nothing of it.
type PushSink struct{ Service *Service }

// HandleEvent handles push events and ignores the others.
func (k PushSink) HandleEvent(ctx context.Context, tx *store.Tx, e *events.Event) error {
	if e.HookEvent != "push" || e.Repo == nil {
		return nil
	}
	ref, _ := e.HookPayload["ref"].(string)
	before, _ := e.HookPayload["before"].(string)
	after, _ := e.HookPayload["after"].(string)
	branch, ok := strings.CutPrefix(ref, "refs/heads/")
	if !ok {
		return nil
	}
	if err := k.baseMoved(ctx, tx, e.Repo, branch); err != nil {
		return err
	}
	if strings.Trim(after, "0") != "" {
		if err := k.Service.mergedByPush(ctx, tx, e, branch, before, after); err != nil {
			return err
		}
	}
	if strings.Trim(after, "0") == "" {
		return nil // a deleted head leaves its pull requests as they are
	}
	rows, err := tx.QueryContext(ctx, `SELECT p.repository_id, p.number FROM pull_requests p JOIN issues i ON i.id = p.issue_id
		WHERE p.head_repository_id = $1 AND p.head_ref = $2 AND i.state = 'open' AND p.head_sha <> $3 ORDER BY p.id`, e.Repo.ID, branch, after)
	if err != nil {
		return store.Normalize(err)
	}
	type target struct{ repoID, number int64 }
	var list []target
	for rows.Next() {
		var t target
		if err := rows.Scan(&t.repoID, &t.number); err != nil {
			rows.Close()
			return store.Normalize(err)
		}
		list = append(list, t)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return store.Normalize(err)
	}
	for _, t := range list {
		base := e.Repo
		if t.repoID != e.Repo.ID {
			if base, err = repos.ByID(ctx, tx, t.repoID); err != nil {
				return err
			}
		}
		if err := k.Service.synchronize(ctx, tx, e, base, t.number, before, after); err != nil {
			return err
		}
	}
	return nil
}

// baseMoved makes the mergeability of the open pull requests into the
// branch stale.
func (k PushSink) baseMoved(ctx context.Context, tx *store.Tx, repo *repos.Repository, branch string) error {
	res, err := tx.ExecContext(ctx, `UPDATE pull_requests SET mergeable = NULL, mergeable_state = 'unknown', check_due = TRUE,
		check_generation = check_generation + 1
		WHERE repository_id = $1 AND base_ref = $2 AND merged_at IS NULL
		AND issue_id IN (SELECT id FROM issues WHERE repository_id = $1 AND state = 'open')`, repo.ID, branch)
	if err != nil {
		return store.Normalize(err)
	}
	if n, _ := res.RowsAffected(); n > 0 {
		k.Service.wake(tx)
	}
	return nil
}

// synchronize moves a pull request's head to after: the commit is
// copied into the base repository (refs/pull/{n}/head), the counts are
// taken again, the check is due, and synchronize is emitted.
func (s *Service) synchronize(ctx context.Context, tx *store.Tx, e *events.Event, repo *repos.Repository, number int64, before, after string) error {
	p, err := byNumber(ctx, tx, repo, number)
	if err != nil {
		return err
	}
	git := gitDir(s.Repos.GitDir(repo.ID))
	if err := git.fetch(ctx, s.Repos.GitDir(e.Repo.ID), after, pullRef(number, "head")); err != nil {
		return err
	}
	base := p.BaseSHA
	if tip, ok, err := git.commit(ctx, "refs/heads/"+p.BaseRef); err != nil {
		return err
	} else if ok {
		base = tip
	}
	commits, adds, dels, files, err := git.stats(ctx, base, after)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE pull_requests SET head_sha = $1, base_sha = $2, commits = $3, additions = $4, deletions = $5,
		changed_files = $6, mergeable = NULL, mergeable_state = 'unknown', check_due = TRUE, check_generation = check_generation + 1
		WHERE id = $7`, after, base, commits, adds, dels, files, p.ID); err != nil {
		return store.Normalize(err)
	}
	if err := touch(ctx, tx, p); err != nil {
		return err
	}
	if p, err = byNumber(ctx, tx, repo, number); err != nil {
		return err
	}
	s.wake(tx)
	if err := s.emit(ctx, tx, e.Actor, "synchronize", p, map[string]any{"before": before, "after": after}); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE pull_requests SET head_pusher_id = $1 WHERE id = $2`, e.Actor.ID, p.ID); err != nil {
		return store.Normalize(err)
	}
	return s.dismissStale(ctx, tx, p, e.Actor)
}

// mergedByPush records as merged, in the push's transaction, the open
// pull requests into the branch whose head the push brought into it: the
// new commit contains the head and the old one did not (a merge pushed
// over git). The pusher merged them at after; base is the base commit
// before the push. A head the branch contained before the push was
// merged by an earlier push, whose recording (its own, or the push
// recovery's after a crash) records it with its own commit: a later push
// never claims it. The API's merges are recorded by their intent
// (RecordMerge), before the push's events: they are merged already here.
func (s *Service) mergedByPush(ctx context.Context, tx *store.Tx, e *events.Event, branch, before, after string) error {
	rows, err := tx.QueryContext(ctx, `SELECT p.number, p.head_sha FROM pull_requests p JOIN issues i ON i.id = p.issue_id
		WHERE p.repository_id = $1 AND p.base_ref = $2 AND i.state = 'open' AND p.merged_at IS NULL ORDER BY p.id`, e.Repo.ID, branch)
	if err != nil {
		return store.Normalize(err)
	}
	type open struct {
		number int64
		head   string
	}
	list, err := store.ScanAll(rows, nil, func(sc scanner) (open, error) { var o open; return o, sc.Scan(&o.number, &o.head) })
	if err != nil {
		return err
	}
	git := gitDir(s.Repos.GitDir(e.Repo.ID))
	created := strings.Trim(before, "0") == ""
	for _, o := range list {
		if in, err := git.isAncestor(ctx, o.head, after); err != nil {
			return err
		} else if !in {
			continue
		}
		base := before
		if created {
			base = after
		} else if merged, err := git.isAncestor(ctx, o.head, before); err != nil {
			return err
		} else if merged {
			continue
		}
		if err := s.markMerged(ctx, tx, e.Repo, e.Actor, o.number, after, base); err != nil {
			return err
		}
	}
	return nil
}
