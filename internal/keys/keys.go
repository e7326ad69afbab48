// Package keys holds SSH public keys: a user's keys (GET/POST
// /user/keys, GET/DELETE /user/keys/{key_id}, GET /users/{username}/keys
// and the plain-text {web}/{username}.keys) and a repository's deploy
// keys (/repos/{owner}/{repo}/keys). A key is in use once, by anyone:
// its SHA256 fingerprint is unique, and ByFingerprint finds the key an
// SSH connection authenticated with in one query. Adding and removing a
// deploy key emits the deploy_key event in the change's transaction and,
// for an organization's repository, writes the audit log.
package keys

import (
	"context"
	"crypto/rsa"
	"database/sql"
	"errors"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auditlog"
	"forgeapi/internal/events"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// MinRSABits is the smallest RSA key accepted, as the platform's.
const MinRSABits = 1024

// MaxTitle bounds a key's title, in characters.
const MaxTitle = 255

// Key is a user's SSH key (UserID set) or a repository's deploy key
// (RepoID set).
type Key struct {
	ID     int64
	UserID int64
	RepoID int64
	Title  string
	// Text is the key as OpenSSH writes it, without a comment:
	// "ssh-ed25519 AAAA...".
	Text string
	// Fingerprint is the SHA256 fingerprint ("SHA256:..."), as
	// ssh-keygen -l prints it.
	Fingerprint string
	// ReadOnly is a deploy key's: it fetches and never pushes.
	ReadOnly bool
	// AddedBy is the login of who added a deploy key ("" when unknown).
	AddedBy   string
	CreatedAt time.Time
	// LastUsed is when the key last authenticated an SSH connection
	// (zero: never).
	LastUsed time.Time
}

// Deploy reports whether the key is a repository's deploy key.
func (k *Key) Deploy() bool { return k.RepoID != 0 }

// Parsed is a public key as a client sent it, checked.
type Parsed struct {
	Text        string
	Fingerprint string
	Comment     string
}

// The messages of a refused key, as the platform's.
const (
	invalidMessage = "key is invalid. It must begin with 'ssh-ed25519', 'ssh-rsa', 'ecdsa-sha2-nistp256', " +
		"'ecdsa-sha2-nistp384', 'ecdsa-sha2-nistp521', 'sk-ssh-ed25519@openssh.com' or " +
		"'sk-ecdsa-sha2-nistp256@openssh.com'. Check that you're copying the public half of the key"
	weakMessage  = "key is weak. It must be an RSA key of at least 1024 bits, or an Ed25519 or ECDSA key"
	inUseMessage = "key is already in use"
)

// Parse checks one public key in OpenSSH's authorized_keys format (with
// an optional comment): a 422 for anything else, for a private key, for
// a DSA key and for an RSA key under MinRSABits.
func Parse(text string) (*Parsed, error) {
	text = strings.TrimSpace(text)
	if strings.Contains(text, "\n") || strings.Contains(text, "PRIVATE KEY") {
		return nil, apierr.Custom("PublicKey", "key", invalidMessage)
	}
	pub, comment, options, _, err := ssh.ParseAuthorizedKey([]byte(text))
	if err != nil || len(options) > 0 {
		return nil, apierr.Custom("PublicKey", "key", invalidMessage)
	}
	if pub.Type() == ssh.KeyAlgoDSA {
		return nil, apierr.Custom("PublicKey", "key", weakMessage)
	}
	if c, ok := pub.(ssh.CryptoPublicKey); ok {
		if r, ok := c.CryptoPublicKey().(*rsa.PublicKey); ok && r.N.BitLen() < MinRSABits {
			return nil, apierr.Custom("PublicKey", "key", weakMessage)
		}
	}
	return &Parsed{Text: strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pub))),
		Fingerprint: ssh.FingerprintSHA256(pub), Comment: comment}, nil
}

// Service stores SSH keys and emits their events.
type Service struct {
	DB     *store.DB
	Events *events.Bus
}

// keyColumns are the columns scan reads, in its order.
const keyColumns = `id, COALESCE(user_id, 0), COALESCE(repository_id, 0), title, key_text, fingerprint, read_only,
	COALESCE(added_by, ''), created_at, last_used_at`

func scan(rows *sql.Rows) ([]*Key, error) {
	defer rows.Close()
	var out []*Key
	for rows.Next() {
		k := &Key{}
		var used sql.NullTime
		if err := rows.Scan(&k.ID, &k.UserID, &k.RepoID, &k.Title, &k.Text, &k.Fingerprint, &k.ReadOnly,
			&k.AddedBy, &k.CreatedAt, &used); err != nil {
			return nil, err
		}
		if used.Valid {
			k.LastUsed = used.Time.UTC()
		}
		k.CreatedAt = k.CreatedAt.UTC()
		out = append(out, k)
	}
	return out, rows.Err()
}

func (s *Service) query(ctx context.Context, q store.Q, where string, args ...any) ([]*Key, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+keyColumns+` FROM ssh_keys `+where, args...)
	if err != nil {
		return nil, err
	}
	return scan(rows)
}

// list returns a page of the keys of owner (column = id), oldest first,
// and whether more follow.
func (s *Service) list(ctx context.Context, column string, id int64, page httpapi.Page) ([]*Key, bool, error) {
	list, err := s.query(ctx, s.DB, `WHERE `+column+` = $1 ORDER BY id LIMIT $2 OFFSET $3`, id, page.Limit()+1, page.Offset())
	if err != nil {
		return nil, false, err
	}
	more := len(list) > page.Limit()
	if more {
		list = list[:page.Limit()]
	}
	return list, more, nil
}

// get returns the key id of owner (column = ownerID); store.ErrNotFound
// when it has none of that id.
func (s *Service) get(ctx context.Context, q store.Q, column string, ownerID, id int64) (*Key, error) {
	list, err := s.query(ctx, q, `WHERE `+column+` = $1 AND id = $2`, ownerID, id)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, store.ErrNotFound
	}
	return list[0], nil
}

// ListUser returns a page of the user's keys, oldest first.
func (s *Service) ListUser(ctx context.Context, userID int64, page httpapi.Page) ([]*Key, bool, error) {
	return s.list(ctx, "user_id", userID, page)
}

// AllUser returns every key of the user, oldest first (the .keys file).
func (s *Service) AllUser(ctx context.Context, userID int64) ([]*Key, error) {
	return s.query(ctx, s.DB, `WHERE user_id = $1 ORDER BY id`, userID)
}

// GetUser returns the user's key id.
func (s *Service) GetUser(ctx context.Context, userID, id int64) (*Key, error) {
	return s.get(ctx, s.DB, "user_id", userID, id)
}

// ListRepo returns a page of the repository's deploy keys, oldest first.
func (s *Service) ListRepo(ctx context.Context, repoID int64, page httpapi.Page) ([]*Key, bool, error) {
	return s.list(ctx, "repository_id", repoID, page)
}

// GetRepo returns the repository's deploy key id.
func (s *Service) GetRepo(ctx context.Context, repoID, id int64) (*Key, error) {
	return s.get(ctx, s.DB, "repository_id", repoID, id)
}

// insert stores k; a key in use anywhere is the platform's 422.
func insert(ctx context.Context, q store.Q, k *Key) error {
	var userID, repoID, addedBy any
	if k.UserID != 0 {
		userID = k.UserID
	}
	if k.RepoID != 0 {
		repoID = k.RepoID
	}
	if k.AddedBy != "" {
		addedBy = k.AddedBy
	}
	err := q.QueryRowContext(ctx, `INSERT INTO ssh_keys (user_id, repository_id, title, key_text, fingerprint, read_only,
		added_by, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
		userID, repoID, k.Title, k.Text, k.Fingerprint, k.ReadOnly, addedBy, k.CreatedAt).Scan(&k.ID)
	if err = store.Normalize(err); errors.Is(err, store.ErrConflict) {
		return apierr.Custom("PublicKey", "key", inUseMessage)
	}
	return err
}

// NewKey is what a client asks to add.
type NewKey struct {
	Title    string
	Key      string
	ReadOnly bool
}

// build checks the new key and makes its Key, titled by its comment when
// the request names no title.
func build(n NewKey) (*Key, error) {
	p, err := Parse(n.Key)
	if err != nil {
		return nil, err
	}
	title := strings.TrimSpace(n.Title)
	if title == "" {
		title = p.Comment
	}
	var f apierr.Fields
	f.MaxLength("PublicKey", "title", title, MaxTitle)
	if err := f.Err(); err != nil {
		return nil, err
	}
	return &Key{Title: title, Text: p.Text, Fingerprint: p.Fingerprint, ReadOnly: n.ReadOnly, CreatedAt: store.Now()}, nil
}

// CreateUser adds a key to the user's account.
func (s *Service) CreateUser(ctx context.Context, user *accounts.Account, n NewKey) (*Key, error) {
	k, err := build(n)
	if err != nil {
		return nil, err
	}
	k.UserID, k.ReadOnly = user.ID, false
	return k, insert(ctx, s.DB, k)
}

// DeleteUser removes the user's key id.
func (s *Service) DeleteUser(ctx context.Context, userID, id int64) error {
	res, err := s.DB.ExecContext(ctx, `DELETE FROM ssh_keys WHERE user_id = $1 AND id = $2`, userID, id)
	return deleted(res, err)
}

func deleted(res sql.Result, err error) error {
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return store.ErrNotFound
	}
	return nil
}

// CreateDeploy adds a deploy key to the repository, by actor, and emits
// deploy_key created (and the audit log's public_key.create) in the same
// transaction.
func (s *Service) CreateDeploy(ctx context.Context, repo *repos.Repository, actor *accounts.Account, n NewKey) (*Key, error) {
	k, err := build(n)
	if err != nil {
		return nil, err
	}
	k.RepoID, k.AddedBy = repo.ID, actor.Login
	err = s.DB.Tx(ctx, func(tx *store.Tx) error {
		if err := insert(ctx, tx, k); err != nil {
			return err
		}
		return s.emit(ctx, tx, repo, actor, k, "created")
	})
	if err != nil {
		return nil, err
	}
	return k, nil
}

// DeleteDeploy removes the repository's deploy key id, by actor, and
// emits deploy_key deleted.
func (s *Service) DeleteDeploy(ctx context.Context, repo *repos.Repository, actor *accounts.Account, id int64) error {
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		k, err := s.get(ctx, tx, "repository_id", repo.ID, id)
		if err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM ssh_keys WHERE id = $1`, k.ID)
		if err := deleted(res, err); err != nil {
			return err
		}
		return s.emit(ctx, tx, repo, actor, k, "deleted")
	})
}

// emit sends deploy_key to the repository's hooks and, for an
// organization's repository, writes public_key.create or .delete.
func (s *Service) emit(ctx context.Context, tx *store.Tx, repo *repos.Repository, actor *accounts.Account, k *Key, action string) error {
	payload := map[string]any{"action": action, "key": deployJSON(httpapi.BaseURL(ctx), repo, k)}
	if err := s.Events.Emit(ctx, tx, &events.Event{HookEvent: "deploy_key", HookPayload: payload,
		Actor: actor, Repo: repo, Public: !repo.Private, CreatedAt: tx.Now()}); err != nil {
		return err
	}
	if !repo.Owner.IsOrg() {
		return nil
	}
	name := map[string]string{"created": "public_key.create", "deleted": "public_key.delete"}[action]
	return auditlog.Record(ctx, tx, auditlog.Entry{OrgID: repo.Owner.ID, Action: name, Actor: actor,
		Repo: repo.FullName(), Data: map[string]any{"key_id": k.ID, "title": k.Title, "fingerprint": k.Fingerprint,
			"read_only": k.ReadOnly, "deploy_key": true}})
}

// ByFingerprint returns the key with the SHA256 fingerprint (one
// query); store.ErrNotFound when no key has it.
func (s *Service) ByFingerprint(ctx context.Context, fingerprint string) (*Key, error) {
	list, err := s.query(ctx, s.DB, `WHERE fingerprint = $1`, fingerprint)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, store.ErrNotFound
	}
	return list[0], nil
}

// MarkUsed notes that the key authenticated a git command now (its
// last_used), at most once a minute.
func (s *Service) MarkUsed(ctx context.Context, k *Key) error {
	now := store.Now()
	if now.Sub(k.LastUsed) < time.Minute {
		return nil
	}
	_, err := s.DB.ExecContext(ctx, `UPDATE ssh_keys SET last_used_at = $1 WHERE id = $2`, now, k.ID)
	return err
}
