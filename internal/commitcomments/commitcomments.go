// Package commitcomments serves commit comments: comments on a whole
// commit, on a file of its diff, or on a line of that file's diff (placed
// by its diff position, or by its line in the new file, as on the
// platform), listed for a repository or a commit, read, edited and
// deleted. Creating one sends the commit_comment webhook event (created)
// and the feeds' CommitCommentEvent in the comment's transaction.
package commitcomments

import (
	"context"
	"errors"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/events"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/issues"
	"forgeapi/internal/reactions"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// MaxBody is the longest comment body in characters, as the platform's
// comments (issues.MaxBody).
const MaxBody = issues.MaxBody

// Comment is one commit comment. Path is "" for a comment on the whole
// commit; Position and Line are 0 unless it is on a line.
type Comment struct {
	ID        int64
	RepoID    int64
	CommitID  string
	User      *accounts.Account // nil once the account is gone
	Body      string
	Path      string
	Position  int
	Line      int
	CreatedAt time.Time
	UpdatedAt time.Time
	// Association is the author's author_association with the
	// repository.
	Association string
	// Reactions are the comment's reactions by content.
	Reactions reactions.Counts
}

// Service stores commit comments and emits their events.
type Service struct {
	DB     *store.DB
	Events *events.Bus
}

// Create stores the comment c (its commit, path and spot checked by the
// caller) by actor and emits commit_comment created and
// CommitCommentEvent.
func (s *Service) Create(ctx context.Context, repo *repos.Repository, actor *accounts.Account, c Comment) (*Comment, error) {
	now := store.Now()
	c.RepoID, c.User, c.CreatedAt, c.UpdatedAt = repo.ID, actor, now, now
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		err := tx.QueryRowContext(ctx, `INSERT INTO commit_comments (repository_id, commit_id, user_id, body, path,
			diff_position, file_line, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8) RETURNING id`,
			repo.ID, c.CommitID, actor.ID, c.Body, nullString(c.Path), nullInt(c.Position), nullInt(c.Line), now).Scan(&c.ID)
		if err != nil {
			return store.Normalize(err)
		}
		if c.Association, err = issues.Association(ctx, tx, repo, actor); err != nil {
			return err
		}
		payload := map[string]any{"action": "created", "comment": toJSON(httpapi.BaseURL(ctx), repo, &c)}
		return s.Events.Emit(ctx, tx, &events.Event{HookEvent: "commit_comment", HookPayload: payload,
			FeedType: "CommitCommentEvent", FeedPayload: payload, Actor: actor, Repo: repo, Public: !repo.Private, CreatedAt: now})
	})
	if err != nil {
		return nil, err
	}
	return &c, nil
}

// Get returns the repository's comment id; store.ErrNotFound when there
// is none.
func (s *Service) Get(ctx context.Context, repo *repos.Repository, id int64) (*Comment, error) {
	list, err := s.query(ctx, repo, `WHERE repository_id = $1 AND id = $2`, repo.ID, id)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, store.ErrNotFound
	}
	return list[0], nil
}

// List returns a page of the repository's comments, or of one commit's
// when commit is not "", oldest first, and whether more follow.
func (s *Service) List(ctx context.Context, repo *repos.Repository, commit string, page httpapi.Page) ([]*Comment, bool, error) {
	where, args := `WHERE repository_id = $1`, []any{repo.ID}
	if commit != "" {
		where, args = where+` AND commit_id = $2`, append(args, commit)
	}
	n := len(args)
	list, err := s.query(ctx, repo, where+` ORDER BY id LIMIT $`+itoa(n+1)+` OFFSET $`+itoa(n+2),
		append(args, page.Limit()+1, page.Offset())...)
	if err != nil {
		return nil, false, err
	}
	more := len(list) > page.Limit()
	if more {
		list = list[:page.Limit()]
	}
	return list, more, nil
}

// Update changes the body of the comment id, by its author or a caller
// with push access (canPush); another caller gets the platform's 403.
func (s *Service) Update(ctx context.Context, repo *repos.Repository, actor *accounts.Account, id int64, body string, canPush bool) (*Comment, error) {
	c, err := s.editable(ctx, repo, actor, id, canPush)
	if err != nil {
		return nil, err
	}
	c.Body, c.UpdatedAt = body, store.Now()
	_, err = s.DB.ExecContext(ctx, `UPDATE commit_comments SET body = $1, updated_at = $2 WHERE id = $3`, c.Body, c.UpdatedAt, c.ID)
	return c, store.Normalize(err)
}

// Delete deletes the comment id, by its author or a caller with push
// access (canPush).
func (s *Service) Delete(ctx context.Context, repo *repos.Repository, actor *accounts.Account, id int64, canPush bool) error {
	c, err := s.editable(ctx, repo, actor, id, canPush)
	if err != nil {
		return err
	}
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM commit_comments WHERE id = $1`, c.ID); err != nil {
			return store.Normalize(err)
		}
		return reactions.DeleteFor(ctx, tx, reactions.CommitComment, c.ID)
	})
}

// editable is the comment id when actor may change it.
func (s *Service) editable(ctx context.Context, repo *repos.Repository, actor *accounts.Account, id int64, canPush bool) (*Comment, error) {
	c, err := s.Get(ctx, repo, id)
	if err != nil {
		return nil, err
	}
	if !canPush && (c.User == nil || c.User.ID != actor.ID) {
		return nil, apierr.Forbidden("Must have push access to repository.")
	}
	return c, nil
}

const columns = `id, repository_id, commit_id, user_id, body, COALESCE(path, ''), COALESCE(diff_position, 0),
	COALESCE(file_line, 0), created_at, updated_at`

// query reads the comments of the repository the clause selects, with
// their authors and their associations.
func (s *Service) query(ctx context.Context, repo *repos.Repository, clause string, args ...any) ([]*Comment, error) {
	rows, err := s.DB.QueryContext(ctx, `SELECT `+columns+` FROM commit_comments `+clause, args...)
	if err != nil {
		return nil, store.Normalize(err)
	}
	var list []*Comment
	var users []*int64
	for rows.Next() {
		c := &Comment{}
		var user *int64
		if err := rows.Scan(&c.ID, &c.RepoID, &c.CommitID, &user, &c.Body, &c.Path, &c.Position, &c.Line, &c.CreatedAt, &c.UpdatedAt); err != nil {
			rows.Close()
			return nil, store.Normalize(err)
		}
		list, users = append(list, c), append(users, user)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, store.Normalize(err)
	}
	if err := s.loadUsers(ctx, repo, list, users); err != nil {
		return nil, err
	}
	ids := make([]int64, len(list))
	for i, c := range list {
		ids[i] = c.ID
	}
	counts, err := reactions.CountsFor(ctx, s.DB, reactions.CommitComment, ids)
	for _, c := range list {
		c.Reactions = counts[c.ID]
	}
	return list, err
}

// loadUsers sets each comment's author and association, each account
// read once.
func (s *Service) loadUsers(ctx context.Context, repo *repos.Repository, list []*Comment, users []*int64) error {
	type user struct {
		a     *accounts.Account
		assoc string
	}
	seen := map[int64]user{}
	for i, c := range list {
		c.Association = "NONE"
		if users[i] == nil {
			continue
		}
		u, ok := seen[*users[i]]
		if !ok {
			a, err := accounts.ByID(ctx, s.DB, *users[i])
			if errors.Is(err, store.ErrNotFound) {
				a, err = nil, nil
			}
			if err != nil {
				return err
			}
			assoc, err := issues.Association(ctx, s.DB, repo, a)
			if err != nil {
				return err
			}
			u = user{a, assoc}
			seen[*users[i]] = u
		}
		c.User, c.Association = u.a, u.assoc
	}
	return nil
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func nullInt(n int) any {
	if n == 0 {
		return nil
	}
	return n
}
