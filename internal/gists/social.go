package gists

import (
	"context"
	"errors"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/store"
)

// Star makes the user star the gist; starring again changes nothing.
func (s *Service) Star(ctx context.Context, g *Gist, userID int64) error {
	_, err := s.DB.ExecContext(ctx, `INSERT INTO gist_stars (user_id, gist_id, created_at) VALUES ($1, $2, $3)
		ON CONFLICT (user_id, gist_id) DO NOTHING`, userID, g.ID, s.now())
	return store.Normalize(err)
}

// Unstar removes the user's star, if any.
func (s *Service) Unstar(ctx context.Context, g *Gist, userID int64) error {
	_, err := s.DB.ExecContext(ctx, `DELETE FROM gist_stars WHERE user_id = $1 AND gist_id = $2`, userID, g.ID)
	return err
}

// Starred reports whether the user stars the gist.
func Starred(ctx context.Context, q store.Q, g *Gist, userID int64) (bool, error) {
	var one int
	err := store.Normalize(q.QueryRowContext(ctx, `SELECT 1 FROM gist_stars WHERE user_id = $1 AND gist_id = $2`, userID, g.ID).Scan(&one))
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// Comment is a comment on a gist.
type Comment struct {
	ID        int64
	GistID    int64
	User      *accounts.Account // nil for a deleted account
	Body      string
	CreatedAt time.Time
	UpdatedAt time.Time
}

const commentColumns = `id, gist_id, COALESCE(user_id, 0), body, created_at, updated_at`

// Comments returns a page of the gist's comments, oldest first, and
// whether more follow.
func Comments(ctx context.Context, q store.Q, g *Gist, offset, limit int) ([]*Comment, bool, error) {
	list, err := queryComments(ctx, q, `SELECT `+commentColumns+` FROM gist_comments WHERE gist_id = $1 ORDER BY id LIMIT $2 OFFSET $3`,
		g.ID, limit+1, offset)
	if err != nil {
		return nil, false, err
	}
	more := len(list) > limit
	if more {
		list = list[:limit]
	}
	return list, more, nil
}

// CommentByID returns the gist's comment, store.ErrNotFound when the
// gist has none with that id.
func CommentByID(ctx context.Context, q store.Q, g *Gist, id int64) (*Comment, error) {
	list, err := queryComments(ctx, q, `SELECT `+commentColumns+` FROM gist_comments WHERE gist_id = $1 AND id = $2`, g.ID, id)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, store.ErrNotFound
	}
	return list[0], nil
}

func queryComments(ctx context.Context, q store.Q, sql string, args ...any) ([]*Comment, error) {
	rows, err := q.QueryContext(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var list []*Comment
	var users []int64
	for rows.Next() {
		var c Comment
		var userID int64
		if err := rows.Scan(&c.ID, &c.GistID, &userID, &c.Body, &c.CreatedAt, &c.UpdatedAt); err != nil {
			return nil, err
		}
		list = append(list, &c)
		users = append(users, userID)
	}
	if err := rows.Err(); err != nil || len(list) == 0 {
		return nil, err
	}
	byID, err := accounts.ByIDs(ctx, q, users)
	if err != nil {
		return nil, err
	}
	for i, c := range list {
		c.User = byID[users[i]]
	}
	return list, nil
}

// AddComment comments on the gist as the user.
func (s *Service) AddComment(ctx context.Context, g *Gist, user *accounts.Account, body string) (*Comment, error) {
	now := s.now()
	c := &Comment{GistID: g.ID, User: user, Body: body, CreatedAt: now, UpdatedAt: now}
	err := s.DB.QueryRowContext(ctx, `INSERT INTO gist_comments (gist_id, user_id, body, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $4) RETURNING id`, g.ID, user.ID, body, now).Scan(&c.ID)
	return c, err
}

// EditComment changes the comment's body.
func (s *Service) EditComment(ctx context.Context, c *Comment, body string) error {
	c.Body, c.UpdatedAt = body, s.now()
	_, err := s.DB.ExecContext(ctx, `UPDATE gist_comments SET body = $1, updated_at = $2 WHERE id = $3`, c.Body, c.UpdatedAt, c.ID)
	return err
}

// DeleteComment removes the comment.
func (s *Service) DeleteComment(ctx context.Context, c *Comment) error {
	_, err := s.DB.ExecContext(ctx, `DELETE FROM gist_comments WHERE id = $1`, c.ID)
	return err
}
