package pulls

import (
	"context"
	"errors"
	"strings"

	"forgeapi/internal/access"
	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/reactions"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// CreateComment adds a standalone review comment (a one-comment review
// submitted as COMMENTED, as on the platform) or, with InReplyTo, a reply
// on the same line, and emits pull_request_review_comment created and
// pull_request_review submitted. 404 when the replied comment is not of
// the pull request; 422 when the line is not in the diff.
func (s *Service) CreateComment(ctx context.Context, repo *repos.Repository, actor *accounts.Account, number int64, c NewComment) (*ReviewComment, error) {
	p, err := byNumber(ctx, s.DB, repo, number)
	if err != nil {
		return nil, err
	}
	var sp spot
	if c.InReplyTo != nil {
		parent, err := commentByID(ctx, s.DB, repo, *c.InReplyTo)
		if err != nil || parent.PullID != p.ID {
			return nil, store.ErrNotFound
		}
		if parent.InReplyTo != nil {
			c.InReplyTo = parent.InReplyTo // replies thread on the first comment
		}
		c.Path, c.CommitID = parent.Path, parent.CommitID
		sp = spot{Side: parent.Side, Hunk: parent.DiffHunk}
		if parent.Line != nil {
			sp.Line = *parent.Line
		}
		if parent.Position != nil {
			sp.Position = *parent.Position
		}
	} else {
		if c.CommitID == "" {
			c.CommitID = p.HeadSHA
		} else if err := s.checkCommitID(p, "PullRequestReviewComment", c.CommitID); err != nil {
			return nil, err
		}
		list, err := s.placeComments(ctx, p, c.CommitID, []NewComment{c})
		if err != nil {
			return nil, err
		}
		sp = list[0].spot
	}
	var out *ReviewComment
	err = s.DB.Tx(ctx, func(tx *store.Tx) error {
		if err := accounts.CheckNotBlocked(ctx, tx, repo.Owner, actor.ID); err != nil {
			return err
		}
		r, err := s.insertReview(ctx, tx, p, actor, ReviewCommented, "", c.CommitID)
		if err != nil {
			return err
		}
		if out, err = s.insertComment(ctx, tx, p, actor, r.ID, placed{c, sp}); err != nil {
			return err
		}
		return s.submitted(ctx, tx, p, actor, r, []*ReviewComment{out})
	})
	return out, err
}

// Comments lists the pull request's review comments, oldest first.
func (s *Service) Comments(ctx context.Context, p *PullRequest) ([]*ReviewComment, error) {
	return s.comments(ctx, s.DB, p.Repo, `c.pull_request_id = $2`, p.ID)
}

// RepoComments lists the repository's review comments, oldest first.
func (s *Service) RepoComments(ctx context.Context, repo *repos.Repository) ([]*ReviewComment, error) {
	return s.comments(ctx, s.DB, repo, `c.repository_id = $2`, repo.ID)
}

// Comment returns one of the repository's review comments with its pull
// request's number; store.ErrNotFound when none.
func (s *Service) Comment(ctx context.Context, repo *repos.Repository, id int64) (*ReviewComment, int64, error) {
	c, err := commentByID(ctx, s.DB, repo, id)
	if err != nil {
		return nil, 0, err
	}
	n, err := numberOf(ctx, s.DB, c.PullID)
	return c, n, err
}

func numberOf(ctx context.Context, q store.Q, pullID int64) (int64, error) {
	var n int64
	err := q.QueryRowContext(ctx, `SELECT number FROM pull_requests WHERE id = $1`, pullID).Scan(&n)
	return n, store.Normalize(err)
}

// UpdateComment changes a review comment's body (its author, or push
// access) and emits pull_request_review_comment edited
// (changes.body.from); DeleteComment (body nil) deletes it and emits
// deleted.
func (s *Service) UpdateComment(ctx context.Context, repo *repos.Repository, actor *accounts.Account, id int64, body *string, mayPush bool) (*ReviewComment, int64, error) {
	var out *ReviewComment
	var number int64
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		c, err := commentByID(ctx, tx, repo, id)
		if err != nil {
			return err
		}
		if !mayPush && (c.User == nil || c.User.ID != actor.ID) {
			return apierr.Forbidden("Must have push access to repository.")
		}
		if number, err = numberOf(ctx, tx, c.PullID); err != nil {
			return err
		}
		p, err := byNumber(ctx, tx, repo, number)
		if err != nil {
			return err
		}
		if body == nil {
			if _, err := tx.ExecContext(ctx, `DELETE FROM pull_request_review_comments WHERE id = $1`, c.ID); err != nil {
				return store.Normalize(err)
			}
			if err := reactions.DeleteFor(ctx, tx, reactions.ReviewComment, c.ID); err != nil {
				return err
			}
			out = c
			return s.emitComment(ctx, tx, p, actor, "deleted", c, nil)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE pull_request_review_comments SET body = $1, updated_at = $2 WHERE id = $3`,
			*body, tx.Now(), c.ID); err != nil {
			return store.Normalize(err)
		}
		if out, err = commentByID(ctx, tx, repo, id); err != nil {
			return err
		}
		return s.emitComment(ctx, tx, p, actor, "edited", out, map[string]any{"changes": map[string]any{"body": map[string]any{"from": c.Body}}})
	})
	return out, number, err
}

// requestedReviewers lists the users asked to review, by login.
func requestedReviewers(ctx context.Context, q store.Q, p *PullRequest) ([]*accounts.Account, error) {
	rows, err := q.QueryContext(ctx, `SELECT a.login FROM pull_request_review_requests rr JOIN accounts a ON a.id = rr.user_id
		WHERE rr.pull_request_id = $1 ORDER BY lower(a.login)`, p.ID)
	if err != nil {
		return nil, store.Normalize(err)
	}
	logins, err := store.ScanAll(rows, nil, func(s scanner) (string, error) { var l string; return l, s.Scan(&l) })
	if err != nil {
		return nil, err
	}
	out := make([]*accounts.Account, 0, len(logins))
	for _, l := range logins {
		a, err := accounts.ByLogin(ctx, q, l)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// RequestReviewers asks the users to review (remove: no longer) and
// emits pull_request review_requested (review_request_removed) for each
// change. 422 when a login is not a collaborator who can read the
// repository, or is the pull request's author; team reviewers are a 422
// (forgeapi does not request teams' reviews).
func (s *Service) RequestReviewers(ctx context.Context, repo *repos.Repository, actor *accounts.Account, number int64, logins, teams []string, remove bool) (*PullRequest, error) {
	if len(teams) > 0 {
		return nil, apierr.Custom("PullRequest", "team_reviewers", "Team review requests are not supported")
	}
	var out *PullRequest
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		p, err := byNumber(ctx, tx, repo, number)
		if err != nil {
			return err
		}
		var changed []*accounts.Account
		for _, login := range logins {
			a, err := s.reviewer(ctx, tx, p, login, remove)
			if err != nil {
				return err
			}
			if a == nil {
				continue
			}
			query := `INSERT INTO pull_request_review_requests (pull_request_id, user_id, created_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`
			args := []any{p.ID, a.ID, tx.Now()}
			if remove {
				query, args = `DELETE FROM pull_request_review_requests WHERE pull_request_id = $1 AND user_id = $2`, args[:2]
			}
			res, err := tx.ExecContext(ctx, query, args...)
			if err != nil {
				return store.Normalize(err)
			}
			if n, _ := res.RowsAffected(); n > 0 {
				changed = append(changed, a)
			}
		}
		if len(changed) > 0 {
			if err := touch(ctx, tx, p); err != nil {
				return err
			}
		}
		if out, err = byNumber(ctx, tx, repo, number); err != nil {
			return err
		}
		action := "review_requested"
		if remove {
			action = "review_request_removed"
		}
		for _, a := range changed {
			if err := s.emit(ctx, tx, actor, action, out, map[string]any{"requested_reviewer": accounts.ToSimpleUser(s.base(ctx), a)}); err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}

// reviewer resolves a login to request: nil to skip (removing someone
// unknown); 422 for someone who cannot be asked.
func (s *Service) reviewer(ctx context.Context, tx store.Q, p *PullRequest, login string, remove bool) (*accounts.Account, error) {
	a, err := accounts.ByLogin(ctx, tx, login)
	if errors.Is(err, store.ErrNotFound) {
		if remove {
			return nil, nil
		}
		return nil, apierr.Unprocessable("Reviews may only be requested from collaborators. One or more of the users or teams you specified is not a collaborator of the %s repository.", p.Repo.FullName())
	} else if err != nil || remove {
		return a, err
	}
	if p.Issue.User != nil && p.Issue.User.ID == a.ID {
		return nil, apierr.Unprocessable("Review cannot be requested from pull request author.")
	}
	ok, err := collaborates(ctx, tx, p.Repo, a)
	if err == nil && !ok {
		err = apierr.Unprocessable("Reviews may only be requested from collaborators. One or more of the users or teams you specified is not a collaborator of the %s repository.", p.Repo.FullName())
	}
	return a, err
}

// collaborates reports whether the user has push access or is a
// collaborator or member of the owning organization.
func collaborates(ctx context.Context, q store.Q, repo *repos.Repository, a *accounts.Account) (bool, error) {
	role, err := access.UserRepoRole(ctx, q, a, repo)
	if err != nil || role >= auth.RoleWrite {
		return err == nil, err
	}
	perm, err := repos.CollaboratorPermission(ctx, q, repo.ID, a.ID)
	if err != nil || perm != "" {
		return perm != "", err
	}
	if repo.Owner.IsOrg() {
		r, err := accounts.MemberRole(ctx, q, repo.Owner.ID, a.ID)
		return r != "", err
	}
	return strings.EqualFold(repo.Owner.Login, a.Login), nil
}
