// Package reactions keeps the reactions people leave on issues, issue
// comments, pull request review comments, commit comments and releases:
// one per user, subject and content, listed, created (201, or 200 for
// one the user has already left, as the platform) and deleted through
// the routes of routes.go, and counted for the `reactions` rollup object
// of the subjects' own responses and GraphQL's reactionGroups.
//
// The package sits below the areas whose objects it counts: they import
// it for the rollups (CountsFor) and to delete a subject's reactions with
// the subject (DeleteFor); the subjects themselves are resolved for its
// routes through the Subjects the wiring gives its Handler.
package reactions

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/store"
)

// Kind is the type of object a reaction is left on; its value is stored
// as the reaction's subject_type.
type Kind string

// The kinds of subject.
const (
	Issue         Kind = "Issue"
	IssueComment  Kind = "IssueComment"
	ReviewComment Kind = "PullRequestReviewComment"
	CommitComment Kind = "CommitComment"
	Release       Kind = "Release"
)

// Contents are the reaction contents, in the order of the rollup object
// and of Counts.
var contents = [...]string{"+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"}

// Contents returns the reaction contents in the platform's order.
func Contents() []string { return contents[:] }

// releaseContents are the contents a release accepts (no -1, no
// confused), as the platform.
var releaseContents = map[string]bool{"+1": true, "laugh": true, "heart": true, "hooray": true, "rocket": true, "eyes": true}

// Valid reports whether content may be left on a subject of kind.
func Valid(kind Kind, content string) bool {
	if kind == Release {
		return releaseContents[content]
	}
	return contentIndex(content) >= 0
}

func contentIndex(content string) int {
	for i, c := range contents {
		if c == content {
			return i
		}
	}
	return -1
}

// Counts are a subject's reactions by content, indexed as Contents.
type Counts [len(contents)]int

// Total is the number of reactions.
func (c Counts) Total() int {
	n := 0
	for _, v := range c {
		n += v
	}
	return n
}

// Of is the count of one content (0 for an unknown one).
func (c Counts) Of(content string) int {
	if i := contentIndex(content); i >= 0 {
		return c[i]
	}
	return 0
}

// Reaction is one user's reaction to one subject.
type Reaction struct {
	ID        int64
	User      *accounts.Account
	Content   string
	CreatedAt time.Time
}

// Service stores reactions.
type Service struct {
	DB *store.DB
}

// Subject is one object reactions are left on.
type Subject struct {
	Kind   Kind
	ID     int64
	RepoID int64
}

// Create leaves content on subject by user. created is false when the
// user had already left that content there; the reaction is then the
// existing one. The content must be Valid for the subject's kind (a 422
// otherwise).
func (s *Service) Create(ctx context.Context, subject Subject, user *accounts.Account, content string) (r *Reaction, created bool, err error) {
	if !Valid(subject.Kind, content) {
		return nil, false, apierr.Invalid("Reaction", "content", apierr.CodeInvalid)
	}
	now := store.Now()
	err = s.DB.Tx(ctx, func(tx *store.Tx) error {
		n, err := store.Affected(tx.ExecContext(ctx, `INSERT INTO reactions (repository_id, subject_type, subject_id, user_id, content, created_at)
			VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (subject_type, subject_id, user_id, content) DO NOTHING`,
			subject.RepoID, string(subject.Kind), subject.ID, user.ID, content, now))
		if err != nil {
			return err
		}
		created = n == 1
		r = &Reaction{User: user, Content: content}
		return store.Normalize(tx.QueryRowContext(ctx, `SELECT id, created_at FROM reactions
			WHERE subject_type = $1 AND subject_id = $2 AND user_id = $3 AND content = $4`,
			string(subject.Kind), subject.ID, user.ID, content).Scan(&r.ID, &r.CreatedAt))
	})
	if err != nil {
		return nil, false, err
	}
	return r, created, nil
}

// List returns a page of the subject's reactions, oldest first, of one
// content when content is not "", and whether more follow.
func (s *Service) List(ctx context.Context, subject Subject, content string, page httpapi.Page) ([]*Reaction, bool, error) {
	where, args := `subject_type = $1 AND subject_id = $2`, []any{string(subject.Kind), subject.ID}
	if content != "" {
		where, args = where+` AND content = $3`, append(args, content)
	}
	n := len(args)
	rows, err := s.DB.QueryContext(ctx, store.Dynamic+`SELECT id, user_id, content, created_at FROM reactions WHERE `+where+
		` ORDER BY id LIMIT $`+itoa(n+1)+` OFFSET $`+itoa(n+2), append(args, page.Limit()+1, page.Offset())...)
	type row struct {
		r      *Reaction
		userID int64
	}
	list, err := store.ScanAll(rows, err, func(sc store.Scanner) (x row, err error) {
		x.r = &Reaction{}
		return x, sc.Scan(&x.r.ID, &x.userID, &x.r.Content, &x.r.CreatedAt)
	})
	if err != nil {
		return nil, false, err
	}
	more := len(list) > page.Limit()
	if more {
		list = list[:page.Limit()]
	}
	ids := make([]int64, len(list))
	for i, x := range list {
		ids[i] = x.userID
	}
	users, err := accounts.ByIDs(ctx, s.DB, ids)
	if err != nil {
		return nil, false, err
	}
	out := make([]*Reaction, len(list))
	for i, x := range list {
		x.r.User = users[x.userID]
		out[i] = x.r
	}
	return out, more, nil
}

// Delete deletes the subject's reaction id. Its author deletes it; anyone
// else needs admin (mayDeleteOthers), or gets the platform's 403. A
// reaction of another subject is not found.
func (s *Service) Delete(ctx context.Context, subject Subject, id int64, actor *accounts.Account, mayDeleteOthers bool) error {
	var userID int64
	err := s.DB.QueryRowContext(ctx, `SELECT user_id FROM reactions WHERE id = $1 AND subject_type = $2 AND subject_id = $3`,
		id, string(subject.Kind), subject.ID).Scan(&userID)
	if err != nil {
		return store.Normalize(err)
	}
	if userID != actor.ID && !mayDeleteOthers {
		return apierr.Forbidden("Must have admin rights to Repository.")
	}
	_, err = s.DB.ExecContext(ctx, `DELETE FROM reactions WHERE id = $1`, id)
	return store.Normalize(err)
}

// Remove deletes user's reaction of content to subject and returns it;
// nil when there was none.
func (s *Service) Remove(ctx context.Context, subject Subject, user *accounts.Account, content string) (*Reaction, error) {
	r := &Reaction{User: user, Content: content}
	err := s.DB.QueryRowContext(ctx, `DELETE FROM reactions WHERE subject_type = $1 AND subject_id = $2 AND user_id = $3 AND content = $4
		RETURNING id, created_at`, string(subject.Kind), subject.ID, user.ID, content).Scan(&r.ID, &r.CreatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, store.Normalize(err)
	}
	return r, nil
}

// HasReacted reports whether the user userID left content on subject.
func HasReacted(ctx context.Context, q store.Q, subject Subject, userID int64, content string) (bool, error) {
	var n int
	err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM reactions WHERE subject_type = $1 AND subject_id = $2 AND user_id = $3 AND content = $4`,
		string(subject.Kind), subject.ID, userID, content).Scan(&n)
	return n > 0, store.Normalize(err)
}

// ByID returns the reaction id with its subject; store.ErrNotFound when
// there is none.
func ByID(ctx context.Context, q store.Q, id int64) (*Reaction, Subject, error) {
	r := &Reaction{ID: id}
	var subject Subject
	var kind string
	var userID int64
	err := q.QueryRowContext(ctx, `SELECT subject_type, subject_id, repository_id, user_id, content, created_at FROM reactions WHERE id = $1`,
		id).Scan(&kind, &subject.ID, &subject.RepoID, &userID, &r.Content, &r.CreatedAt)
	if err != nil {
		return nil, Subject{}, store.Normalize(err)
	}
	subject.Kind = Kind(kind)
	r.User, err = accounts.ByID(ctx, q, userID)
	return r, subject, err
}

// CountsFor counts the reactions of the subjects of kind with those ids,
// in one query; a subject without reactions is absent from the map.
func CountsFor(ctx context.Context, q store.Q, kind Kind, ids []int64) (map[int64]Counts, error) {
	out := map[int64]Counts{}
	if len(ids) == 0 {
		return out, nil
	}
	args := make([]any, 0, len(ids)+1)
	args = append(args, string(kind))
	for _, id := range ids {
		args = append(args, id)
	}
	rows, err := q.QueryContext(ctx, store.Dynamic+`SELECT subject_id, content, COUNT(*) FROM reactions
		WHERE subject_type = $1 AND subject_id IN `+store.In(2, len(ids))+` GROUP BY subject_id, content`, args...)
	type count struct {
		id      int64
		content string
		n       int
	}
	list, err := store.ScanAll(rows, err, func(sc store.Scanner) (c count, err error) {
		return c, sc.Scan(&c.id, &c.content, &c.n)
	})
	if err != nil {
		return nil, err
	}
	for _, c := range list {
		if i := contentIndex(c.content); i >= 0 {
			counts := out[c.id]
			counts[i] = c.n
			out[c.id] = counts
		}
	}
	return out, nil
}

// CountsOf counts one subject's reactions.
func CountsOf(ctx context.Context, q store.Q, kind Kind, id int64) (Counts, error) {
	m, err := CountsFor(ctx, q, kind, []int64{id})
	return m[id], err
}

// DeleteFor deletes the reactions of the subject of kind id, in the
// transaction (or on the handle) q that deletes the subject.
func DeleteFor(ctx context.Context, q store.Q, kind Kind, id int64) error {
	_, err := q.ExecContext(ctx, `DELETE FROM reactions WHERE subject_type = $1 AND subject_id = $2`, string(kind), id)
	return store.Normalize(err)
}

// ErrNoSubject is what a SubjectFunc returns for a subject the
// repository does not have (a 404).
var ErrNoSubject = errors.New("reactions: no such subject")
