// Package gists serves the gists API (/gists/...) and the gists' git
// repositories. Each gist is a bare git repository under Service.Root,
// named by the gist's hex id: its files are the files of the default
// branch's tip, its history is that branch's log, and every change made
// through the API (create, edit, rename, delete of files) is a commit
// written in process (gitwrite). The gists clone, fetch and push over
// git's smart HTTP at {web}/gist/{id}.git through githost's
// authentication; only the owner pushes. The database holds what git
// does not: the owner, description, visibility, the gist a fork came
// from, stars and comments.
//
// A secret gist is readable by anyone who knows its id (as the
// platform's), listed only to its owner, and changed only by its owner.
// Creating and editing a public gist through the API records the
// platform's historical GistEvent (action create or update, the gist as
// lists show it) in the feeds, in the transaction of the change; secret
// gists make no event, and no gist sends a webhook (the platform has no
// gist webhook).
package gists

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/events"
	"forgeapi/internal/git/gitwrite"
	"forgeapi/internal/store"
)

// Gist is a gist's row.
type Gist struct {
	ID          int64
	Name        string // the hex id the API and git show
	Owner       *accounts.Account
	Description *string
	Public      bool
	ForkOfID    int64 // 0 when the gist is no fork
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// Service creates, changes and reads gists.
type Service struct {
	DB *store.DB
	// Root is the directory of the gists' bare repositories.
	Root string
	// Now is the clock; nil means store.Now.
	Now func() time.Time
	// Events records the GistEvents of the feeds; nil records none.
	Events *events.Bus
	// Sign, when set, signs the commits the API writes (the server's
	// web-flow key), as the platform signs its web-flow commits.
	Sign gitwrite.Signer
}

func (s *Service) now() time.Time {
	if s.Now == nil {
		return store.Now()
	}
	return s.Now().UTC().Truncate(time.Microsecond)
}

// Dir is the bare repository of the gist named name.
func (s *Service) Dir(name string) string {
	return filepath.Join(s.Root, name+".git")
}

// newName returns a new gist id: 32 random hex digits, as the platform's.
func newName() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

const gistColumns = `g.id, g.name, g.owner_id, g.description, g.public, COALESCE(g.fork_of_id, 0), g.created_at, g.updated_at`

type scanner interface{ Scan(dest ...any) error }

func scanGist(sc scanner) (*Gist, int64, error) {
	var g Gist
	var ownerID int64
	err := sc.Scan(&g.ID, &g.Name, &ownerID, &g.Description, &g.Public, &g.ForkOfID, &g.CreatedAt, &g.UpdatedAt)
	return &g, ownerID, err
}

// ByName returns the gist with the hex id, store.ErrNotFound when there
// is none.
func ByName(ctx context.Context, q store.Q, name string) (*Gist, error) {
	list, err := query(ctx, q, `SELECT `+gistColumns+` FROM gists g WHERE g.name = $1`, name)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, store.ErrNotFound
	}
	return list[0], nil
}

// ByID returns the gist with the row id, store.ErrNotFound when there is
// none.
func ByID(ctx context.Context, q store.Q, id int64) (*Gist, error) {
	list, err := query(ctx, q, `SELECT `+gistColumns+` FROM gists g WHERE g.id = $1`, id)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, store.ErrNotFound
	}
	return list[0], nil
}

// query runs a select of gistColumns and loads the gists' owners in one
// more query.
func query(ctx context.Context, q store.Q, sql string, args ...any) ([]*Gist, error) {
	rows, err := q.QueryContext(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var list []*Gist
	var owners []int64
	for rows.Next() {
		g, owner, err := scanGist(rows)
		if err != nil {
			return nil, err
		}
		list = append(list, g)
		owners = append(owners, owner)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, nil
	}
	byID, err := accounts.ByIDs(ctx, q, owners)
	if err != nil {
		return nil, err
	}
	for i, g := range list {
		if g.Owner = byID[owners[i]]; g.Owner == nil {
			return nil, errors.New("gists: owner of gist " + g.Name + " not found")
		}
	}
	return list, nil
}

// ListFilter selects gists for a list: Owner's (all of them with Secret,
// else the public ones), every public gist (Owner 0), or those StarredBy
// a user; updated at or after Since when set; newest first.
type ListFilter struct {
	Owner     int64
	Secret    bool
	StarredBy int64
	Since     *time.Time
	Offset    int
	Limit     int
}

// List returns a page of the gists f selects and whether more follow.
func List(ctx context.Context, q store.Q, f ListFilter) ([]*Gist, bool, error) {
	sql := `SELECT ` + gistColumns + ` FROM gists g`
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	where := " WHERE 1 = 1"
	if f.StarredBy != 0 {
		sql += ` JOIN gist_stars s ON s.gist_id = g.id AND s.user_id = ` + arg(f.StarredBy)
	}
	if f.Owner != 0 {
		where += ` AND g.owner_id = ` + arg(f.Owner)
	}
	if !f.Secret {
		where += ` AND g.public = ` + arg(true)
	}
	if f.Since != nil {
		where += ` AND g.updated_at >= ` + arg(f.Since.UTC())
	}
	sql += where + ` ORDER BY g.updated_at DESC, g.id DESC LIMIT ` + arg(f.Limit+1) + ` OFFSET ` + arg(f.Offset)
	list, err := query(ctx, q, sql, args...)
	if err != nil {
		return nil, false, err
	}
	more := len(list) > f.Limit
	if more {
		list = list[:f.Limit]
	}
	return list, more, nil
}

// Names returns the hex ids of every gist (a backup's list of the gists'
// repositories).
func Names(ctx context.Context, q store.Q) ([]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT name FROM gists ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		out = append(out, name)
	}
	return out, rows.Err()
}

// StarCount counts the users who star the gist.
func StarCount(ctx context.Context, q store.Q, g *Gist) (int, error) {
	var n int
	err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM gist_stars WHERE gist_id = $1`, g.ID).Scan(&n)
	return n, err
}

// Forks returns a page of the gist's forks, oldest first, and whether
// more follow.
func Forks(ctx context.Context, q store.Q, g *Gist, offset, limit int) ([]*Gist, bool, error) {
	list, err := query(ctx, q, `SELECT `+gistColumns+` FROM gists g WHERE g.fork_of_id = $1 ORDER BY g.id LIMIT $2 OFFSET $3`,
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

// CommentCounts returns the number of comments of each of the gists, by
// row id (absent: none), in one query.
func CommentCounts(ctx context.Context, q store.Q, list []*Gist) (map[int64]int, error) {
	out := map[int64]int{}
	if len(list) == 0 {
		return out, nil
	}
	args := make([]any, len(list))
	for i, g := range list {
		args[i] = g.ID
	}
	rows, err := q.QueryContext(ctx, store.Dynamic+`SELECT gist_id, COUNT(*) FROM gist_comments WHERE gist_id IN `+
		store.In(1, len(args))+` GROUP BY gist_id`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			return nil, err
		}
		out[id] = n
	}
	return out, rows.Err()
}

// insert adds the gist's row and sets its ID.
func insert(ctx context.Context, tx *store.Tx, g *Gist) error {
	var forkOf any
	if g.ForkOfID != 0 {
		forkOf = g.ForkOfID
	}
	return tx.QueryRowContext(ctx, `INSERT INTO gists (name, owner_id, description, public, fork_of_id, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
		g.Name, g.Owner.ID, g.Description, g.Public, forkOf, g.CreatedAt, g.UpdatedAt).Scan(&g.ID)
}

// Delete removes the gist, its stars and comments, and its repository.
// Only its owner may: the handler checks.
func (s *Service) Delete(ctx context.Context, g *Gist) error {
	if err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM gists WHERE id = $1`, g.ID)
		return err
	}); err != nil {
		return err
	}
	return os.RemoveAll(s.Dir(g.Name))
}

// Touch records that the gist changed now (a push), and counts the
// change for maintenance.
func (s *Service) Touch(ctx context.Context, g *Gist) error {
	_, err := s.DB.ExecContext(ctx, `UPDATE gists SET updated_at = $1, changes_since = changes_since + 1 WHERE id = $2`, s.now(), g.ID)
	return err
}
