package repos

import (
	"context"
	"errors"
	"os"
	"strconv"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/auth"
	"forgeapi/internal/store"
)

// Delete deletes the repository and its bare git repository, acting as
// actor (BeforeDelete runs in its transaction). Its hooks
// and their deliveries, stars, watches, push log and maintenance state
// go with the row (foreign keys); forks keep existing without a parent;
// events stay in the feeds' history. Tokens forget it from their
// repository selection. A repository locked for a migration is refused.
//
// The git directory is moved aside before the transaction, so that a new
// repository given the same id never finds it, and put back when the
// transaction fails.
func (s *Service) Delete(ctx context.Context, r *Repository, actor *accounts.Account) error {
	if err := CheckNotLocked(r); err != nil {
		return err
	}
	dir := s.GitDir(r.ID)
	trash := dir + ".deleted-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	moved := true
	if err := os.Rename(dir, trash); errors.Is(err, os.ErrNotExist) {
		moved = false
	} else if err != nil {
		return err
	}
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		if s.BeforeDelete != nil {
			if err := s.BeforeDelete(ctx, tx, r, actor); err != nil {
				return err
			}
		}
		if err := auth.ForgetRepository(ctx, tx, r.Owner.ID, r.ID); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM repositories WHERE id = $1`, r.ID)
		if err != nil {
			return store.Normalize(err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return store.ErrNotFound
		}
		return nil
	})
	if err != nil {
		if moved {
			_ = os.Rename(trash, dir)
		}
		return err
	}
	return os.RemoveAll(trash)
}

// ListOwnedNames returns the full names of the account's repositories.
func ListOwnedNames(ctx context.Context, q store.Q, ownerID int64) ([]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT a.login, r.name FROM repositories r JOIN accounts a ON a.id = r.owner_id
		WHERE r.owner_id = $1 ORDER BY lower(r.name)`, ownerID)
	if err != nil {
		return nil, store.Normalize(err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var owner, name string
		if err := rows.Scan(&owner, &name); err != nil {
			return nil, store.Normalize(err)
		}
		names = append(names, owner+"/"+name)
	}
	return names, store.Normalize(rows.Err())
}
