package auth

import (
	"context"
	"encoding/json"
	"time"

	"forgeapi/internal/store"
)

// TokenSpec describes a token to create.
type TokenSpec struct {
	Kind            Kind
	UserID          int64 // the account the token acts as (a bot for installations)
	Scopes          Scopes
	Grant           Grant
	ResourceOwnerID int64 // fine-grained kinds
	AllRepositories bool
	RepositoryIDs   []int64
	AppID           int64 // OAuth tokens
	InstallationID  int64 // installation tokens minted through an app's installation
	Note            string
	NoteURL         string
	Fingerprint     string
	ExpiresAt       *time.Time
}

// CreatedToken is a token just created: its secret value is known only now.
type CreatedToken struct {
	ID        int64
	Value     string
	CreatedAt time.Time
}

// CreateToken stores a new token of the spec's kind (as its hash) and
// returns its value.
func CreateToken(ctx context.Context, q store.Q, spec TokenSpec) (CreatedToken, error) {
	value := NewToken(spec.Kind)
	now := store.Now()
	ids := spec.RepositoryIDs
	if ids == nil {
		ids = []int64{}
	}
	idsJSON, _ := json.Marshal(ids)
	grant := spec.Grant
	if grant == nil {
		grant = Grant{}
	}
	owner, app, inst := nullID(spec.ResourceOwnerID), nullID(spec.AppID), nullID(spec.InstallationID)
	var id int64
	err := q.QueryRowContext(ctx, `
		INSERT INTO tokens (kind, token_hash, last_eight, user_id, scopes, permissions, resource_owner_id,
		                    all_repositories, repository_ids, app_id, note, note_url, fingerprint,
		                    expires_at, created_at, updated_at, installation_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $15, $16)
		RETURNING id`,
		string(spec.Kind), HashToken(value), value[len(value)-8:], spec.UserID,
		joinScopes(spec.Scopes), grant.JSON(), owner, spec.AllRepositories, string(idsJSON), app,
		spec.Note, spec.NoteURL, spec.Fingerprint, spec.ExpiresAt, now, inst).Scan(&id)
	if err != nil {
		return CreatedToken{}, store.Normalize(err)
	}
	return CreatedToken{ID: id, Value: value, CreatedAt: now}, nil
}

// nullID is id as a nullable column value: nil for 0.
func nullID(id int64) *int64 {
	if id == 0 {
		return nil
	}
	return &id
}

func joinScopes(s Scopes) string {
	out := ""
	for i, v := range s.Normalize() {
		if i > 0 {
			out += " "
		}
		out += v
	}
	return out
}

// ResetToken gives the token with the id a new value of its kind and
// returns it: the old value stops authenticating when q commits (the
// token cache drops it with the write). Everything else about the token
// stays. An unknown id is store.ErrNotFound.
func ResetToken(ctx context.Context, q store.Q, id int64) (string, error) {
	var kind string
	if err := q.QueryRowContext(ctx, `SELECT kind FROM tokens WHERE id = $1`, id).Scan(&kind); err != nil {
		return "", store.Normalize(err)
	}
	value := NewToken(Kind(kind))
	_, err := q.ExecContext(ctx, `UPDATE tokens SET token_hash = $1, last_eight = $2, updated_at = $3 WHERE id = $4`,
		HashToken(value), value[len(value)-8:], store.Now(), id)
	if err != nil {
		return "", store.Normalize(err)
	}
	return value, nil
}
