package apps

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// The repository selections of an installation.
const (
	SelectionAll      = "all"
	SelectionSelected = "selected"
)

// Installation is an app installed on a user or an organization.
type Installation struct {
	ID        int64
	AppID     int64
	AccountID int64
	// Selection is SelectionAll or SelectionSelected (RepositoryIDs).
	Selection     string
	RepositoryIDs []int64
	SuspendedAt   *time.Time
	SuspendedByID *int64
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// Suspended reports whether the installation is suspended.
func (i *Installation) Suspended() bool { return i.SuspendedAt != nil }

// Selects reports whether the installation reaches the repository of
// its account.
func (i *Installation) Selects(repo *repos.Repository) bool {
	return repo.Owner.ID == i.AccountID && (i.Selection == SelectionAll || slices.Contains(i.RepositoryIDs, repo.ID))
}

const installationColumns = `id, app_id, account_id, repository_selection, repository_ids, suspended_at,
	suspended_by_id, created_at, updated_at`

func scanInstallation(row interface{ Scan(...any) error }) (*Installation, error) {
	var i Installation
	var ids string
	err := row.Scan(&i.ID, &i.AppID, &i.AccountID, &i.Selection, &ids, &i.SuspendedAt, &i.SuspendedByID,
		&i.CreatedAt, &i.UpdatedAt)
	if err != nil {
		return nil, store.Normalize(err)
	}
	if err := json.Unmarshal([]byte(ids), &i.RepositoryIDs); err != nil {
		return nil, err
	}
	return &i, nil
}

// InstallationByID returns the app's installation with the id;
// store.ErrNotFound when the app has none with it.
func InstallationByID(ctx context.Context, q store.Q, appID, id int64) (*Installation, error) {
	return scanInstallation(q.QueryRowContext(ctx,
		`SELECT `+installationColumns+` FROM app_installations WHERE id = $1 AND app_id = $2`, id, appID))
}

// InstallationOn returns the app's installation on the account;
// store.ErrNotFound when it is not installed there.
func InstallationOn(ctx context.Context, q store.Q, appID, accountID int64) (*Installation, error) {
	return scanInstallation(q.QueryRowContext(ctx,
		`SELECT `+installationColumns+` FROM app_installations WHERE app_id = $1 AND account_id = $2`, appID, accountID))
}

// Installations returns the app's installations, oldest first.
func Installations(ctx context.Context, q store.Q, appID int64) ([]*Installation, error) {
	rows, err := q.QueryContext(ctx,
		`SELECT `+installationColumns+` FROM app_installations WHERE app_id = $1 ORDER BY id`, appID)
	if err != nil {
		return nil, store.Normalize(err)
	}
	defer rows.Close()
	var out []*Installation
	for rows.Next() {
		i, err := scanInstallation(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, i)
	}
	return out, store.Normalize(rows.Err())
}

// Install installs the app on the account, on every repository of it
// (repoIDs nil and all set) or on the repositories with the ids, which
// must be the account's. Installing again changes the selection of the
// existing installation (and keeps its id, suspension and tokens' grants
// as minted). A private app installs only on its owner.
func (s *Service) Install(ctx context.Context, app *App, account *accounts.Account, all bool, repoIDs []int64) (*Installation, error) {
	if account.Type == accounts.TypeBot {
		return nil, fmt.Errorf("%w: an app is installed on a user or an organization", ErrInvalid)
	}
	if !app.Public && account.ID != app.OwnerID {
		return nil, fmt.Errorf("%w: app %s is private: only its owner can install it", ErrInvalid, app.Slug)
	}
	selection := SelectionAll
	if !all {
		selection = SelectionSelected
	}
	ids := repoIDs
	if all || ids == nil {
		ids = []int64{}
	}
	b, _ := json.Marshal(ids)
	now := store.Now()
	var inst *Installation
	err := s.DB.Tx(ctx, func(tx store.Q) error {
		var err error
		inst, err = scanInstallation(tx.QueryRowContext(ctx, `
			INSERT INTO app_installations (app_id, account_id, repository_selection, repository_ids, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $5)
			ON CONFLICT (app_id, account_id) DO UPDATE SET repository_selection = $3, repository_ids = $4, updated_at = $5
			RETURNING `+installationColumns, app.ID, account.ID, selection, string(b), now))
		return err
	})
	return inst, err
}

// Uninstall deletes the installation and, in the same transaction, every
// token minted through it: they stop authenticating at once.
func (s *Service) Uninstall(ctx context.Context, inst *Installation) error {
	return s.DB.Tx(ctx, func(tx store.Q) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM tokens WHERE installation_id = $1`, inst.ID); err != nil {
			return store.Normalize(err)
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM app_installations WHERE id = $1`, inst.ID)
		if err != nil {
			return store.Normalize(err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return store.ErrNotFound
		}
		return nil
	})
}

// Suspend suspends the installation (by the user with the id, 0 for an
// administrator or the app itself), or lifts its suspension. While it is
// suspended its tokens are refused and it mints none.
func (s *Service) Suspend(ctx context.Context, inst *Installation, suspend bool, byID int64) error {
	var at *time.Time
	var by *int64
	if suspend {
		now := store.Now()
		at = &now
		if byID != 0 {
			by = &byID
		}
	}
	res, err := s.DB.ExecContext(ctx,
		`UPDATE app_installations SET suspended_at = $1, suspended_by_id = $2, updated_at = $3 WHERE id = $4`,
		at, by, store.Now(), inst.ID)
	if err != nil {
		return store.Normalize(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return store.ErrNotFound
	}
	inst.SuspendedAt, inst.SuspendedByID = at, by
	return nil
}

// Repositories returns the repositories the installation reaches, by
// name: every repository of its account, or the selected ones that still
// exist.
func Repositories(ctx context.Context, q store.Q, inst *Installation) ([]*repos.Repository, error) {
	if inst.Selection == SelectionAll {
		return repos.ByOwner(ctx, q, inst.AccountID)
	}
	return reposByID(ctx, q, inst.RepositoryIDs)
}

// reposByID returns the repositories with the ids that exist, by name.
func reposByID(ctx context.Context, q store.Q, ids []int64) ([]*repos.Repository, error) {
	out := make([]*repos.Repository, 0, len(ids))
	for _, id := range ids {
		r, err := repos.ByID(ctx, q, id)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b *repos.Repository) int {
		return strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name))
	})
	return out, nil
}
