package issues

import (
	"context"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/events"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/reactions"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// Comments lists an issue's comments, oldest first, with one more than
// limit when more follow.
func (s *Service) Comments(ctx context.Context, repo *repos.Repository, number int64, limit, offset int) ([]*Comment, error) {
	is, err := issueByNumber(ctx, s.DB, repo, number)
	if err != nil {
		return nil, err
	}
	list, err := collect(scanComment)(s.DB.QueryContext(ctx, `SELECT `+commentColumns+` FROM issue_comments c JOIN issues i ON i.id = c.issue_id
		WHERE c.issue_id = $1 ORDER BY c.id LIMIT $2 OFFSET $3`, is.ID, limit+1, offset))
	if err != nil {
		return nil, err
	}
	return list, newLoader(s.DB, repo).comments(ctx, list)
}

// RepoComments lists the comments on all of the repository's issues, by
// id (created) ascending or descending, with one more than limit when
// more follow.
func (s *Service) RepoComments(ctx context.Context, repo *repos.Repository, desc bool, limit, offset int) ([]*Comment, error) {
	query := `SELECT ` + commentColumns + ` FROM issue_comments c JOIN issues i ON i.id = c.issue_id
		WHERE c.repository_id = $1 ORDER BY c.id LIMIT $2 OFFSET $3`
	if desc {
		query = `SELECT ` + commentColumns + ` FROM issue_comments c JOIN issues i ON i.id = c.issue_id
		WHERE c.repository_id = $1 ORDER BY c.id DESC LIMIT $2 OFFSET $3`
	}
	list, err := collect(scanComment)(s.DB.QueryContext(ctx, query, repo.ID, limit+1, offset))
	if err != nil {
		return nil, err
	}
	return list, newLoader(s.DB, repo).comments(ctx, list)
}

// Comment returns the repository's comment.
func (s *Service) Comment(ctx context.Context, repo *repos.Repository, id int64) (*Comment, error) {
	return commentByID(ctx, s.DB, repo, id)
}

// CreateComment comments on an issue and emits issue_comment created and
// IssueCommentEvent. A locked issue takes comments from triagers only
// (403 for others).
func (s *Service) CreateComment(ctx context.Context, repo *repos.Repository, actor *accounts.Account, number int64, body string, triage bool) (*Comment, error) {
	var out *Comment
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		if err := accounts.CheckNotBlocked(ctx, tx, repo.Owner, actor.ID); err != nil {
			return err
		}
		is, err := issueByNumber(ctx, tx, repo, number)
		if err != nil {
			return err
		}
		if is.Locked && !triage {
			return apierr.Forbidden("Unable to create comment because issue is locked.")
		}
		now := tx.Now()
		var id int64
		if err := tx.QueryRowContext(ctx, `INSERT INTO issue_comments (repository_id, issue_id, user_id, body, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $5) RETURNING id`, repo.ID, is.ID, actor.ID, body, now).Scan(&id); err != nil {
			return store.Normalize(err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE issues SET comments = comments + 1, updated_at = $1 WHERE id = $2`, now, is.ID); err != nil {
			return store.Normalize(err)
		}
		if out, err = commentByID(ctx, tx, repo, id); err != nil {
			return err
		}
		return s.emitComment(ctx, tx, repo, actor, "created", number, out, nil)
	})
	return out, err
}

// UpdateComment changes a comment's body (its author, or a triager) and
// emits issue_comment edited with the body it had.
func (s *Service) UpdateComment(ctx context.Context, repo *repos.Repository, actor *accounts.Account, id int64, body string, triage bool) (*Comment, error) {
	var out *Comment
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		before, err := commentByID(ctx, tx, repo, id)
		if err != nil {
			return err
		}
		if !triage && (before.User == nil || before.User.ID != actor.ID) {
			return apierr.Forbidden("Must have push access to repository.")
		}
		if _, err := tx.ExecContext(ctx, `UPDATE issue_comments SET body = $1, updated_at = $2 WHERE id = $3`, body, tx.Now(), id); err != nil {
			return store.Normalize(err)
		}
		if out, err = commentByID(ctx, tx, repo, id); err != nil {
			return err
		}
		return s.emitComment(ctx, tx, repo, actor, "edited", out.IssueNumber, out,
			map[string]any{"changes": map[string]any{"body": map[string]any{"from": before.Body}}})
	})
	return out, err
}

// DeleteComment deletes a comment (its author, or a triager) and emits
// issue_comment deleted.
func (s *Service) DeleteComment(ctx context.Context, repo *repos.Repository, actor *accounts.Account, id int64, triage bool) error {
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		c, err := commentByID(ctx, tx, repo, id)
		if err != nil {
			return err
		}
		if !triage && (c.User == nil || c.User.ID != actor.ID) {
			return apierr.Forbidden("Must have push access to repository.")
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM issue_comments WHERE id = $1`, id); err != nil {
			return store.Normalize(err)
		}
		if err := reactions.DeleteFor(ctx, tx, reactions.IssueComment, id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE issues SET comments = comments - 1 WHERE id = $1`, c.IssueID); err != nil {
			return store.Normalize(err)
		}
		return s.emitComment(ctx, tx, repo, actor, "deleted", c.IssueNumber, c, nil)
	})
}

// emitComment emits issue_comment (and IssueCommentEvent for created)
// with the issue as it is now.
func (s *Service) emitComment(ctx context.Context, tx *store.Tx, repo *repos.Repository, actor *accounts.Account, action string, number int64, c *Comment, extra map[string]any) error {
	is, err := issueByNumber(ctx, tx, repo, number)
	if err != nil {
		return err
	}
	u := urlsOf(httpapi.BaseURL(ctx), repo)
	payload := map[string]any{"action": action, "issue": toIssueJSON(u, is), "comment": toCommentJSON(u, c)}
	for k, v := range extra {
		payload[k] = v
	}
	e := &events.Event{HookEvent: "issue_comment", HookPayload: payload, Actor: actor, Repo: repo, Public: !repo.Private}
	if action == "created" {
		e.FeedType, e.FeedPayload = "IssueCommentEvent", payload
	}
	return s.Events.Emit(ctx, tx, e)
}
