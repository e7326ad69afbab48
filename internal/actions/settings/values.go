package settings

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auditlog"
	"forgeapi/internal/store"
)

// valueColumns are the columns scanValues reads.
const valueColumns = `id, kind, scope, scope_id, name, value, key_id, visibility, created_at, updated_at`

// Values returns a page of the place's values of the kind by name, and
// how many it has.
func (s *Service) Values(ctx context.Context, kind string, p Place, limit, offset int) ([]*Value, int, error) {
	var total int
	if err := s.DB.QueryRowContext(ctx, `SELECT count(*) FROM actions_values WHERE kind = $1 AND scope = $2 AND scope_id = $3`,
		kind, p.Scope, p.ID).Scan(&total); err != nil {
		return nil, 0, store.Normalize(err)
	}
	list, err := scanValues(ctx, s.DB, p, `SELECT `+valueColumns+` FROM actions_values WHERE kind = $1 AND scope = $2 AND scope_id = $3
		ORDER BY name LIMIT $4 OFFSET $5`, kind, p.Scope, p.ID, limit, offset)
	return list, total, err
}

// Value returns the place's value of the kind named name, in any case
// (store.ErrNotFound when there is none).
func (s *Service) Value(ctx context.Context, kind string, p Place, name string) (*Value, error) {
	return value(ctx, s.DB, kind, p, name)
}

// value is Value on q.
func value(ctx context.Context, q store.Q, kind string, p Place, name string) (*Value, error) {
	list, err := scanValues(ctx, q, p, `SELECT `+valueColumns+` FROM actions_values WHERE kind = $1 AND scope = $2 AND scope_id = $3
		AND name = $4`, kind, p.Scope, p.ID, strings.ToUpper(name))
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, store.ErrNotFound
	}
	return list[0], nil
}

// OrgValuesFor returns the values of the kind that the organization orgID
// makes visible to the repository (visibility all; private for a private
// repository; selected when the repository is selected), by name.
func (s *Service) OrgValuesFor(ctx context.Context, kind string, orgID, repoID int64, private bool) ([]*Value, error) {
	return orgValuesFor(ctx, s.DB, kind, orgID, repoID, private)
}

// orgValuesFor is OrgValuesFor on q.
func orgValuesFor(ctx context.Context, q store.Q, kind string, orgID, repoID int64, private bool) ([]*Value, error) {
	return scanValues(ctx, q, OrgPlace(orgID), `SELECT `+valueColumns+` FROM actions_values v
		WHERE kind = $1 AND scope = 'org' AND scope_id = $2 AND (visibility = 'all' OR (visibility = 'private' AND $3)
		   OR (visibility = 'selected' AND EXISTS (SELECT 1 FROM actions_value_repositories s WHERE s.value_id = v.id AND s.repository_id = $4)))
		ORDER BY name`, kind, orgID, private, repoID)
}

// scanValues runs a query of valueColumns; the values are of place p.
func scanValues(ctx context.Context, q store.Q, p Place, query string, args ...any) ([]*Value, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, store.Normalize(err)
	}
	defer rows.Close()
	out := []*Value{}
	for rows.Next() {
		v := &Value{Place: p}
		if err := rows.Scan(&v.ID, &v.Kind, &v.Place.Scope, &v.Place.ID, &v.Name, &v.Value, &v.KeyID, &v.Visibility,
			&v.CreatedAt, &v.UpdatedAt); err != nil {
			return nil, store.Normalize(err)
		}
		out = append(out, v)
	}
	return out, store.Normalize(rows.Err())
}

// Change is what a write sets on a value: a nil field is left as it is
// (or its default on creation).
type Change struct {
	Name       *string // a variable's new name
	Value      *string // a variable's value, or a secret's sealed box (base64)
	KeyID      *string // a secret's key
	Visibility *string // organizations
	Selected   *[]int64
}

// errVariableExists refuses a variable name the place already has.
var errVariableExists = apierr.Validation(apierr.FieldError{Resource: "Variable", Field: "name", Code: "already_exists",
	Message: "Already exists - Variable already exists"})

// errKeyID refuses a secret whose key_id is not the place's current key.
var errKeyID = apierr.Validation(apierr.FieldError{Resource: "Secret", Field: "key_id", Code: apierr.CodeInvalid,
	Message: "key_id does not name the current public key"})

// errCannotDecrypt is the refusal of an encrypted_value that is not a
// sealed box for the place's public key.
var errCannotDecrypt = apierr.Validation(apierr.FieldError{Resource: "Secret", Field: "encrypted_value", Code: apierr.CodeInvalid,
	Message: "encrypted_value could not be decrypted with the public key key_id names"})

// PutSecret creates or replaces the place's secret of the kind (KindSecret
// or KindDependabotSecret), and reports whether it was created. The sealed
// value must open with the place's key pair and c.KeyID must name it;
// otherwise it is a 422. An organization's new secret needs a visibility.
func (s *Service) PutSecret(ctx context.Context, kind string, p Place, name string, c Change, actor *accounts.Account) (bool, error) {
	created := false
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		k, err := s.keyPair(ctx, tx, p.keyPlace())
		if err != nil {
			return err
		}
		if c.KeyID == nil || *c.KeyID != k.KeyID {
			return errKeyID
		}
		if _, ok := k.open(*c.Value); !ok {
			return errCannotDecrypt
		}
		old, err := value(ctx, tx, kind, p, name)
		if errors.Is(err, store.ErrNotFound) {
			created = true
			_, err = s.insert(ctx, tx, kind, p, name, c)
		} else if err == nil {
			err = s.update(ctx, tx, old, c)
		}
		if err != nil {
			return err
		}
		return s.audit(ctx, tx, kind, p, name, created, false, actor)
	})
	return created, err
}

// CreateVariable creates the place's variable; a variable of the name is
// a 409.
func (s *Service) CreateVariable(ctx context.Context, p Place, name string, c Change, actor *accounts.Account) error {
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		if _, err := value(ctx, tx, KindVariable, p, name); err == nil {
			return errVariableExists
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if _, err := s.insert(ctx, tx, KindVariable, p, name, c); err != nil {
			return err
		}
		return s.audit(ctx, tx, KindVariable, p, name, true, false, actor)
	})
}

// UpdateVariable changes the place's variable name as c says (404 when
// there is none; a new name that another variable has is a 409).
func (s *Service) UpdateVariable(ctx context.Context, p Place, name string, c Change, actor *accounts.Account) error {
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		v, err := value(ctx, tx, KindVariable, p, name)
		if err != nil {
			return err
		}
		if c.Name != nil && !strings.EqualFold(*c.Name, v.Name) {
			if _, err := value(ctx, tx, KindVariable, p, *c.Name); err == nil {
				return errVariableExists
			} else if !errors.Is(err, store.ErrNotFound) {
				return err
			}
		}
		if err := s.update(ctx, tx, v, c); err != nil {
			return err
		}
		return s.audit(ctx, tx, KindVariable, p, v.Name, false, false, actor)
	})
}

// Delete removes the place's value of the kind (store.ErrNotFound when
// there is none).
func (s *Service) Delete(ctx context.Context, kind string, p Place, name string, actor *accounts.Account) error {
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		v, err := value(ctx, tx, kind, p, name)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM actions_values WHERE id = $1`, v.ID); err != nil {
			return store.Normalize(err)
		}
		return s.audit(ctx, tx, kind, p, v.Name, false, true, actor)
	})
}

// Limit is the most values of the kind the place may hold, as on the
// platform: secrets 100 per repository or environment and 1,000 per
// organization; variables 500 per repository, 100 per environment and
// 1,000 per organization.
func Limit(kind string, p Place) int {
	switch {
	case p.Scope == ScopeOrg:
		return 1000
	case kind == KindVariable && p.Scope == ScopeRepo:
		return 500
	}
	return 100
}

// checkLimit refuses a new value of the kind in a place that holds its
// limit already, with a 422.
func checkLimit(ctx context.Context, tx store.Q, kind string, p Place) error {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM actions_values WHERE kind = $1 AND scope = $2 AND scope_id = $3`,
		kind, p.Scope, p.ID).Scan(&n); err != nil {
		return store.Normalize(err)
	}
	if max := Limit(kind, p); n >= max {
		resource := "Secret"
		if kind == KindVariable {
			resource = "Variable"
		}
		return apierr.Validation(apierr.FieldError{Resource: resource, Field: "name", Code: apierr.CodeCustom,
			Message: fmt.Sprintf("This place already holds the most %ss it may (%d)", strings.ToLower(resource), max)})
	}
	return nil
}

// insert writes a new value and its selected repositories, within the
// place's limit.
func (s *Service) insert(ctx context.Context, tx store.Q, kind string, p Place, name string, c Change) (int64, error) {
	if err := checkLimit(ctx, tx, kind, p); err != nil {
		return 0, err
	}
	repo, org, env := p.foreignKeys()
	at := now()
	var id int64
	err := tx.QueryRowContext(ctx, `INSERT INTO actions_values (kind, scope, scope_id, repository_id, organization_id, environment_id,
		name, value, key_id, visibility, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING id`,
		kind, p.Scope, p.ID, repo, org, env, strings.ToUpper(name), deref(c.Value), deref(c.KeyID), deref(c.Visibility), at, at).Scan(&id)
	if err != nil {
		return 0, store.Normalize(err)
	}
	if c.Selected != nil {
		return id, setSelected(ctx, tx, id, *c.Selected)
	}
	return id, nil
}

// update writes the set fields of c to v.
func (s *Service) update(ctx context.Context, tx store.Q, v *Value, c Change) error {
	name, val, key, vis := v.Name, v.Value, v.KeyID, v.Visibility
	if c.Name != nil {
		name = strings.ToUpper(*c.Name)
	}
	if c.Value != nil {
		val = *c.Value
	}
	if c.KeyID != nil {
		key = *c.KeyID
	}
	if c.Visibility != nil {
		vis = *c.Visibility
	}
	if _, err := tx.ExecContext(ctx, `UPDATE actions_values SET name = $1, value = $2, key_id = $3, visibility = $4, updated_at = $5
		WHERE id = $6`, name, val, key, vis, now(), v.ID); err != nil {
		return store.Normalize(err)
	}
	if c.Selected != nil {
		return setSelected(ctx, tx, v.ID, *c.Selected)
	}
	if vis != VisibilitySelected {
		_, err := tx.ExecContext(ctx, `DELETE FROM actions_value_repositories WHERE value_id = $1`, v.ID)
		return store.Normalize(err)
	}
	return nil
}

// deref is *p, or "" for nil.
func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// audit records a change of an organization's value, or of a value of one
// of its repositories or their environments, in its audit log; a nil
// actor records the caller the context carries.
func (s *Service) audit(ctx context.Context, tx store.Q, kind string, p Place, name string, created, removed bool, actor *accounts.Account) error {
	if p.OrgID == 0 || kind == KindDependabotSecret {
		return nil
	}
	prefix := map[string]string{ScopeRepo: "repo", ScopeOrg: "org", ScopeEnv: "environment"}[p.Scope]
	verb := "update"
	if created {
		verb = "create"
	} else if removed {
		verb = "remove"
	}
	noun := "actions_secret"
	if kind == KindVariable {
		noun = "actions_variable"
	}
	e := auditlog.Entry{OrgID: p.OrgID, Action: prefix + "." + verb + "_" + noun, Actor: actor, Data: map[string]any{"name": name}}
	if p.RepoID != 0 {
		if full, err := repoFullName(ctx, tx, p.RepoID); err == nil {
			e.Repo = full
		}
	}
	return auditlog.Record(ctx, tx, e)
}

// repoFullName is the repository's owner/name.
func repoFullName(ctx context.Context, q store.Q, id int64) (string, error) {
	var full string
	err := q.QueryRowContext(ctx, `SELECT a.login || '/' || r.name FROM repositories r JOIN accounts a ON a.id = r.owner_id WHERE r.id = $1`,
		id).Scan(&full)
	return full, store.Normalize(err)
}
