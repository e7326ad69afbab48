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
// as minted). A private app installs only on its owner. In the same
// transaction the app's webhook is sent installation created, or
// installation_repositories for the repositories the change added or
// removed; actor is their sender (nil: the account).
func (s *Service) Install(ctx context.Context, app *App, account *accounts.Account, all bool, repoIDs []int64, actor *accounts.Account) (*Installation, error) {
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
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		before, err := s.reachedBefore(ctx, tx, app, account)
		if err != nil {
			return err
		}
		inst, err = scanInstallation(tx.QueryRowContext(ctx, `
			INSERT INTO app_installations (app_id, account_id, repository_selection, repository_ids, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $5)
			ON CONFLICT (app_id, account_id) DO UPDATE SET repository_selection = $3, repository_ids = $4, updated_at = $5
			RETURNING `+installationColumns, app.ID, account.ID, selection, string(b), now))
		if err != nil {
			return err
		}
		if before == nil {
			return s.emitInstallationAction(ctx, tx, "created", app, inst, actor)
		}
		return s.emitSelectionChange(ctx, tx, app, inst, before, actor)
	})
	return inst, err
}

// reachedBefore returns the repositories the app's installation on the
// account reaches, never nil; nil when the app is not installed there.
func (s *Service) reachedBefore(ctx context.Context, q store.Q, app *App, account *accounts.Account) ([]*repos.Repository, error) {
	old, err := InstallationOn(ctx, q, app.ID, account.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	rs, err := Repositories(ctx, q, old)
	if rs == nil {
		rs = []*repos.Repository{}
	}
	return rs, err
}

// Uninstall deletes the installation of the app and, in the same
// transaction, every token minted through it (they stop authenticating
// at once), and sends the app's webhook installation deleted, whose
// sender is actor (nil: the account).
func (s *Service) Uninstall(ctx context.Context, app *App, inst *Installation, actor *accounts.Account) error {
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		if err := s.emitInstallationAction(ctx, tx, "deleted", app, inst, actor); err != nil {
			return err
		}
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

// Suspend suspends the installation of the app, or lifts its
// suspension, and sends the app's webhook installation suspend or
// unsuspend in the same transaction. actor did it: a user is recorded as
// suspended_by; nil (an administrator) or the app's bot is not, and the
// sender is then the account or the bot. While it is suspended its tokens
// are refused, it mints none and its app receives no other event.
func (s *Service) Suspend(ctx context.Context, app *App, inst *Installation, suspend bool, actor *accounts.Account) error {
	var at *time.Time
	var by *int64
	if suspend {
		now := store.Now()
		at = &now
		if actor != nil && actor.Type == accounts.TypeUser {
			by = &actor.ID
		}
	}
	action := "unsuspend"
	if suspend {
		action = "suspend"
	}
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		res, err := tx.ExecContext(ctx,
			`UPDATE app_installations SET suspended_at = $1, suspended_by_id = $2, updated_at = $3 WHERE id = $4`,
			at, by, tx.Now(), inst.ID)
		if err != nil {
			return store.Normalize(err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return store.ErrNotFound
		}
		inst.SuspendedAt, inst.SuspendedByID = at, by
		return s.emitInstallationAction(ctx, tx, action, app, inst, actor)
	})
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
