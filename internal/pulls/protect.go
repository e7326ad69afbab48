package pulls

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"forgeapi/internal/access"
	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/protection"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// The mergeable states that the base's branch protection and the head's
// checks make of a clean pull request, as the platform reports them.
const (
	StateBlocked  = "blocked"  // the protection's reviews or required checks are unmet
	StateBehind   = "behind"   // strict checks and the head is not up to date with the base
	StateUnstable = "unstable" // merges, but a check that is not required fails
)

// The platform's messages of a merge the base's protection refuses: 405,
// but 409 for a head behind the base.
const (
	msgBehind       = "Head branch is out of date. Review and try the merge again."
	msgMergeCommits = "Merge commits are not allowed on this protected branch."
	msgLastPush     = "The most recent push must be approved by someone other than the last pusher."
)

// verdict is what the base's protection says of a pull request.
type verdict struct {
	prot     *protection.Protection // nil: the base is not protected
	reasons  []string               // unmet reviews, unresolved conversations and required checks
	behind   bool                   // strict checks, and the head lacks the base's tip
	unstable bool                   // a check that is not required failed
}

// judge evaluates the base's protection on the pull request.
func (s *Service) judge(ctx context.Context, p *PullRequest) (*verdict, error) {
	v := &verdict{}
	if s.Protection == nil {
		return v, nil
	}
	prot, err := protection.Of(ctx, s.DB, p.Repo.ID, p.BaseRef)
	if err != nil && !errors.Is(err, protection.ErrNotProtected) {
		return nil, err
	}
	outcomes, err := s.Protection.OutcomesOf(ctx, s.DB, p.Repo.ID, p.HeadSHA)
	if err != nil {
		return nil, err
	}
	required := map[string]bool{}
	if prot != nil {
		v.prot = prot
		if rv := prot.Settings.Reviews; rv != nil {
			msg, err := s.reviewReason(ctx, p, rv)
			if err != nil {
				return nil, err
			}
			if msg != "" {
				v.reasons = append(v.reasons, msg)
			}
		}
		if prot.Settings.ConversationResolution {
			n, err := unresolvedThreads(ctx, s.DB, p.Repo, p.ID)
			if err != nil {
				return nil, err
			}
			if n > 0 {
				v.reasons = append(v.reasons, msgUnresolved)
			}
		}
		if sc := prot.Settings.StatusChecks; sc != nil {
			v.reasons = append(v.reasons, protection.CheckReasons(sc, outcomes)...)
			for _, c := range sc.Checks {
				required[c.Context] = true
			}
			if sc.Strict {
				if v.behind, err = s.behind(ctx, p); err != nil {
					return nil, err
				}
			}
		}
	}
	for name, o := range outcomes {
		if !required[name] && o.State == "failure" {
			v.unstable = true
		}
	}
	return v, nil
}

// behind reports whether the base's tip is not in the head.
func (s *Service) behind(ctx context.Context, p *PullRequest) (bool, error) {
	git := gitDir(s.Repos.GitDir(p.Repo.ID))
	tip, ok, err := git.commit(ctx, "refs/heads/"+p.BaseRef)
	if err != nil || !ok {
		return false, err
	}
	in, err := git.isAncestor(ctx, tip, p.HeadSHA)
	return !in, err
}

// reviewReason is the platform's complaint about the reviews, or "": the
// latest review of each reviewer with write access but the author counts,
// an approval of an older head only without dismiss_stale_reviews.
func (s *Service) reviewReason(ctx context.Context, p *PullRequest, rv *protection.Reviews) (string, error) {
	approvers, changes, err := s.reviewCounts(ctx, p, rv.DismissStale)
	if err != nil {
		return "", err
	}
	if rv.LastPush && len(approvers) >= rv.Count && changes == 0 {
		ok, err := s.approvedByOther(ctx, p)
		if err != nil || !ok {
			return msgLastPush, err
		}
	}
	switch {
	case changes > 0:
		return "Changes have been requested by a reviewer with write access.", nil
	case len(approvers) < rv.Count && rv.Count == 1:
		return "At least 1 approving review is required by reviewers with write access.", nil
	case len(approvers) < rv.Count:
		return fmt.Sprintf("At least %d approving reviews are required by reviewers with write access.", rv.Count), nil
	case rv.CodeOwners:
		return s.codeOwnerReason(ctx, p, approvers)
	}
	return "", nil
}

// reviewCounts returns who approves and how many ask for changes in the
// latest reviews of the reviewers with write access, the author left out.
func (s *Service) reviewCounts(ctx context.Context, p *PullRequest, dismissStale bool) (approvers []int64, changes int, err error) {
	rows, err := s.DB.QueryContext(ctx, `SELECT user_id, state, commit_id FROM pull_request_reviews
		WHERE pull_request_id = $1 AND user_id IS NOT NULL AND state IN ('APPROVED', 'CHANGES_REQUESTED', 'DISMISSED')
		ORDER BY id`, p.ID)
	if err != nil {
		return nil, 0, err
	}
	type latest struct{ state, commit string }
	last := map[int64]latest{}
	var order []int64
	for rows.Next() {
		var id int64
		var l latest
		if err := rows.Scan(&id, &l.state, &l.commit); err != nil {
			rows.Close()
			return nil, 0, err
		}
		if _, seen := last[id]; !seen {
			order = append(order, id)
		}
		last[id] = l
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, 0, err
	}
	for _, id := range order {
		l := last[id]
		if p.Issue.User != nil && id == p.Issue.User.ID {
			continue
		}
		if l.state == "DISMISSED" || (l.state == "APPROVED" && dismissStale && l.commit != p.HeadSHA) {
			continue
		}
		if ok, err := canWrite(ctx, s.DB, p.Repo, id); err != nil || !ok {
			if err != nil {
				return nil, 0, err
			}
			continue
		}
		if l.state == "APPROVED" {
			approvers = append(approvers, id)
		} else {
			changes++
		}
	}
	return approvers, changes, nil
}

// canWrite reports whether the user may push to the repository.
func canWrite(ctx context.Context, q store.Q, repo *repos.Repository, userID int64) (bool, error) {
	u, err := accounts.ByID(ctx, q, userID)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	role, err := access.UserRepoRole(ctx, q, u, repo)
	return role >= auth.RoleWrite, err
}

// checkProtection refuses (405; 409 when behind) a merge that the base's protection
// forbids: merge commits on a linear history, unmet reviews, unresolved
// review threads (conversation resolution) or required checks, a head
// behind the base with strict checks. An administrator merges past
// reviews, threads and checks unless admins are enforced.
func (s *Service) checkProtection(ctx context.Context, repo *repos.Repository, merger *accounts.Account, p *PullRequest, method string) error {
	v, err := s.judge(ctx, p)
	if err != nil || v.prot == nil {
		return err
	}
	if v.prot.Settings.LinearHistory && (method == MethodMerge || method == "") {
		return notMergeable(msgMergeCommits)
	}
	if !v.prot.Settings.EnforceAdmins {
		admin, err := protection.IsAdmin(ctx, s.DB, repo, merger)
		if err != nil || admin {
			return err
		}
	}
	if len(v.reasons) > 0 {
		return notMergeable(v.reasons[0])
	}
	if v.behind {
		return apierr.New(http.StatusConflict, "%s", msgBehind) // the platform's 409, not 405
	}
	return nil
}

// protectedState is the mergeable_state of a pull request whose test
// merge is clean, with the base's protection and the head's checks:
// blocked, behind, unstable or clean.
func (s *Service) protectedState(ctx context.Context, p *PullRequest) (string, error) {
	if p.MergeableState != StateClean {
		return p.MergeableState, nil
	}
	v, err := s.judge(ctx, p)
	switch {
	case err != nil:
		return "", err
	case len(v.reasons) > 0:
		return StateBlocked, nil
	case v.behind:
		return StateBehind, nil
	case v.unstable:
		return StateUnstable, nil
	}
	return StateClean, nil
}

// ReviewRequired reports whether the base's protection requires more
// approvals than the pull request has (GraphQL's REVIEW_REQUIRED).
func (s *Service) ReviewRequired(ctx context.Context, p *PullRequest) (bool, error) {
	if s.Protection == nil {
		return false, nil
	}
	prot, err := protection.Of(ctx, s.DB, p.Repo.ID, p.BaseRef)
	if errors.Is(err, protection.ErrNotProtected) || (err == nil && prot.Settings.Reviews == nil) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	approvers, _, err := s.reviewCounts(ctx, p, prot.Settings.Reviews.DismissStale)
	return len(approvers) < prot.Settings.Reviews.Count, err
}

// dismissStale dismisses, when the base's protection dismisses stale
// reviews, the approvals of an older head than the pull request's, in
// tx, each with pull_request_review dismissed by actor (the pusher).
func (s *Service) dismissStale(ctx context.Context, tx *store.Tx, p *PullRequest, actor *accounts.Account) error {
	if s.Protection == nil {
		return nil
	}
	prot, err := protection.Of(ctx, tx, p.Repo.ID, p.BaseRef)
	if errors.Is(err, protection.ErrNotProtected) || (err == nil && (prot.Settings.Reviews == nil || !prot.Settings.Reviews.DismissStale)) {
		return nil
	} else if err != nil {
		return err
	}
	rows, err := tx.QueryContext(ctx, `SELECT id FROM pull_request_reviews WHERE pull_request_id = $1 AND state = 'APPROVED' AND commit_id <> $2`,
		p.ID, p.HeadSHA)
	ids, err := store.ScanAll(rows, err, func(sc store.Scanner) (int64, error) {
		var id int64
		return id, sc.Scan(&id)
	})
	if err != nil {
		return err
	}
	for _, id := range ids {
		if _, err := tx.ExecContext(ctx, `UPDATE pull_request_reviews SET state = 'DISMISSED', updated_at = $1 WHERE id = $2`, tx.Now(), id); err != nil {
			return store.Normalize(err)
		}
		r, err := reviewByID(ctx, tx, p, id)
		if err != nil {
			return err
		}
		if err := s.emitReview(ctx, tx, p, actor, "dismissed", r, nil); err != nil {
			return err
		}
	}
	return nil
}

// approvedByOther reports whether someone with write access other than
// the head's last pusher (the author until a push moved it) approved the
// head itself.
func (s *Service) approvedByOther(ctx context.Context, p *PullRequest) (bool, error) {
	var pusher int64
	if err := s.DB.QueryRowContext(ctx, `SELECT COALESCE(head_pusher_id, 0) FROM pull_requests WHERE id = $1`, p.ID).Scan(&pusher); err != nil {
		return false, store.Normalize(err)
	}
	if pusher == 0 && p.Issue.User != nil {
		pusher = p.Issue.User.ID
	}
	approvers, _, err := s.reviewCounts(ctx, p, true) // approvals of the head only
	if err != nil {
		return false, err
	}
	for _, id := range approvers {
		if id != pusher {
			return true, nil
		}
	}
	return false, nil
}
