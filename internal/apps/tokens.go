package apps

import (
	"context"
	"slices"
	"time"

	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// TokenLifetime is how long an installation token lasts.
const TokenLifetime = time.Hour

// TokenRequest narrows an installation token: to repositories by name
// or id (of the installation's account, within its selection) and to
// permissions the installation holds. Empty fields narrow nothing.
type TokenRequest struct {
	Repositories  []string          `json:"repositories"`
	RepositoryIDs []int64           `json:"repository_ids"`
	Permissions   map[string]string `json:"permissions"`
}

// Minted is an installation token just minted.
type Minted struct {
	Token       string
	ExpiresAt   time.Time
	Permissions auth.Grant
	// Selection is SelectionAll, or SelectionSelected with Repositories.
	Selection    string
	Repositories []*repos.Repository
}

// Mint creates an installation token of the installation: it acts as the
// app's bot on the installation's account, with the installation's
// permissions and repositories narrowed by the request, for
// TokenLifetime. A suspended installation is a 403, a request for more
// than the installation holds a 422.
func (s *Service) Mint(ctx context.Context, app *App, inst *Installation, req TokenRequest) (*Minted, error) {
	if inst.Suspended() {
		return nil, auth.ErrInstallationSuspended()
	}
	grant, err := narrowPermissions(app.Permissions, req.Permissions)
	if err != nil {
		return nil, err
	}
	m := &Minted{Permissions: grant, Selection: inst.Selection, ExpiresAt: store.Now().Add(TokenLifetime)}
	spec := auth.TokenSpec{Kind: auth.KindInstallation, UserID: app.BotID, ResourceOwnerID: inst.AccountID,
		Grant: grant, InstallationID: inst.ID, ExpiresAt: &m.ExpiresAt}
	err = s.DB.Tx(ctx, func(tx *store.Tx) error {
		if err := m.selectRepositories(ctx, tx, inst, req, &spec); err != nil {
			return err
		}
		t, err := auth.CreateToken(ctx, tx, spec)
		m.Token = t.Value
		return err
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// selectRepositories fills the token's repositories: the installation's
// (every repository of the account, or its selection) narrowed to the
// requested ones, each of which it must reach.
func (m *Minted) selectRepositories(ctx context.Context, q store.Q, inst *Installation, req TokenRequest, spec *auth.TokenSpec) error {
	if len(req.Repositories) == 0 && len(req.RepositoryIDs) == 0 {
		if inst.Selection == SelectionAll {
			spec.AllRepositories = true
			return nil
		}
		var err error
		if m.Repositories, err = reposByID(ctx, q, inst.RepositoryIDs); err != nil {
			return err
		}
	} else {
		var err error
		if m.Repositories, err = requestedRepositories(ctx, q, inst, req); err != nil {
			return err
		}
	}
	m.Selection = SelectionSelected
	for _, r := range m.Repositories {
		spec.RepositoryIDs = append(spec.RepositoryIDs, r.ID)
	}
	return nil
}

// requestedRepositories resolves the request's repositories, by name and
// by id, refusing any the installation does not reach.
func requestedRepositories(ctx context.Context, q store.Q, inst *Installation, req TokenRequest) ([]*repos.Repository, error) {
	var out []*repos.Repository
	add := func(r *repos.Repository, err error) error {
		if err != nil || !inst.Selects(r) {
			if err != nil && !isNotFound(err) {
				return err
			}
			return apierr.Unprocessable("There is at least one repository that does not exist or is not accessible to the parent installation.")
		}
		if !slices.ContainsFunc(out, func(x *repos.Repository) bool { return x.ID == r.ID }) {
			out = append(out, r)
		}
		return nil
	}
	for _, id := range req.RepositoryIDs {
		if err := add(repos.ByID(ctx, q, id)); err != nil {
			return nil, err
		}
	}
	for _, name := range req.Repositories {
		if err := add(repoOfAccount(ctx, q, inst.AccountID, name)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// repoOfAccount returns the account's repository with the name.
func repoOfAccount(ctx context.Context, q store.Q, accountID int64, name string) (*repos.Repository, error) {
	var login string
	if err := q.QueryRowContext(ctx, `SELECT login FROM accounts WHERE id = $1`, accountID).Scan(&login); err != nil {
		return nil, store.Normalize(err)
	}
	return repos.ByOwnerAndName(ctx, q, login, name)
}

// narrowPermissions returns the app's grant narrowed to the requested
// permissions (all of it when none are requested), refusing a permission
// or level the app does not hold. metadata:read is always kept.
func narrowPermissions(held auth.Grant, want map[string]string) (auth.Grant, error) {
	if len(want) == 0 {
		return held, nil
	}
	out := auth.Grant{"metadata": auth.Read}
	for name, level := range want {
		l := auth.Level(level)
		if have, ok := held[name]; !ok || l != auth.Read && l != auth.Write || !have.Covers(l) {
			return nil, apierr.Unprocessable("The permissions requested are not granted to this installation.")
		}
		out[name] = l
	}
	return out, nil
}
