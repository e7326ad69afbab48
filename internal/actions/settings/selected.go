package settings

import (
	"context"
	"net/http"

	"forgeapi/internal/apierr"
	"forgeapi/internal/store"
)

// errNotSelected is the platform's 409 for changing the selected
// repositories of a value whose visibility is not selected.
var errNotSelected = apierr.New(http.StatusConflict, "Visibility must be set to selected to change the selected repositories")

// Selected returns a page of the repository ids selected for the
// organization's value v, by id, and how many there are.
func (s *Service) Selected(ctx context.Context, v *Value, limit, offset int) ([]int64, int, error) {
	var total int
	if err := s.DB.QueryRowContext(ctx, `SELECT count(*) FROM actions_value_repositories WHERE value_id = $1`, v.ID).Scan(&total); err != nil {
		return nil, 0, store.Normalize(err)
	}
	rows, err := s.DB.QueryContext(ctx, `SELECT repository_id FROM actions_value_repositories WHERE value_id = $1
		ORDER BY repository_id LIMIT $2 OFFSET $3`, v.ID, limit, offset)
	if err != nil {
		return nil, 0, store.Normalize(err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, 0, err
		}
		ids = append(ids, id)
	}
	return ids, total, store.Normalize(rows.Err())
}

// SetSelected replaces the repositories selected for v (the caller checked
// that they are the organization's); a v whose visibility is not selected
// is a 409.
func (s *Service) SetSelected(ctx context.Context, v *Value, ids []int64) error {
	if v.Visibility != VisibilitySelected {
		return errNotSelected
	}
	return s.DB.Tx(ctx, func(tx *store.Tx) error { return setSelected(ctx, tx, v.ID, ids) })
}

// AddSelected selects one more repository for v (409 unless v's
// visibility is selected); selecting it twice is no change.
func (s *Service) AddSelected(ctx context.Context, v *Value, repoID int64) error {
	if v.Visibility != VisibilitySelected {
		return errNotSelected
	}
	_, err := s.DB.ExecContext(ctx, `INSERT INTO actions_value_repositories (value_id, repository_id) VALUES ($1, $2)
		ON CONFLICT DO NOTHING`, v.ID, repoID)
	return store.Normalize(err)
}

// RemoveSelected unselects a repository for v (409 unless v's visibility
// is selected).
func (s *Service) RemoveSelected(ctx context.Context, v *Value, repoID int64) error {
	if v.Visibility != VisibilitySelected {
		return errNotSelected
	}
	_, err := s.DB.ExecContext(ctx, `DELETE FROM actions_value_repositories WHERE value_id = $1 AND repository_id = $2`, v.ID, repoID)
	return store.Normalize(err)
}

// setSelected replaces the value's selected repositories.
func setSelected(ctx context.Context, tx store.Q, valueID int64, ids []int64) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM actions_value_repositories WHERE value_id = $1`, valueID); err != nil {
		return store.Normalize(err)
	}
	for _, id := range ids {
		if _, err := tx.ExecContext(ctx, `INSERT INTO actions_value_repositories (value_id, repository_id) VALUES ($1, $2)
			ON CONFLICT DO NOTHING`, valueID, id); err != nil {
			return store.Normalize(err)
		}
	}
	return nil
}

// notOrgRepositories returns the ids that are not repositories of the
// organization.
func (s *Service) notOrgRepositories(ctx context.Context, orgID int64, ids []int64) ([]int64, error) {
	var missing []int64
	for _, id := range ids {
		var n int
		if err := s.DB.QueryRowContext(ctx, `SELECT count(*) FROM repositories WHERE id = $1 AND owner_id = $2`, id, orgID).Scan(&n); err != nil {
			return nil, store.Normalize(err)
		}
		if n == 0 {
			missing = append(missing, id)
		}
	}
	return missing, nil
}
