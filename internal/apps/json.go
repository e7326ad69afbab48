package apps

import (
	"context"

	"forgeapi/internal/accounts"
	"forgeapi/internal/auth"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// integrationJSON is the platform's integration object.
type integrationJSON struct {
	ID                 int64               `json:"id"`
	Slug               string              `json:"slug"`
	NodeID             string              `json:"node_id"`
	ClientID           string              `json:"client_id"`
	Owner              accounts.SimpleUser `json:"owner"`
	Name               string              `json:"name"`
	Description        *string             `json:"description"`
	ExternalURL        string              `json:"external_url"`
	HTMLURL            string              `json:"html_url"`
	CreatedAt          wire.Time           `json:"created_at"`
	UpdatedAt          wire.Time           `json:"updated_at"`
	Permissions        auth.Grant          `json:"permissions"`
	Events             []string            `json:"events"`
	InstallationsCount *int64              `json:"installations_count,omitempty"`
}

// toIntegration renders the app; count, when not nil, is its
// installations_count (shown only to the app itself).
func toIntegration(base string, a *App, owner *accounts.Account, count *int64) integrationJSON {
	html := accounts.WebBase(base) + "/apps/" + a.Slug
	j := integrationJSON{
		ID: a.ID, Slug: a.Slug, NodeID: wire.NodeID("A", a.ID), ClientID: a.ClientID,
		Owner: accounts.ToSimpleUser(base, owner), Name: a.Name, ExternalURL: html, HTMLURL: html,
		CreatedAt: wire.T(a.CreatedAt), UpdatedAt: wire.T(a.UpdatedAt), Permissions: a.Permissions,
		Events: a.Events, InstallationsCount: count,
	}
	if a.Description != "" {
		j.Description = &a.Description
	}
	return j
}

// installationJSON is the platform's installation object.
type installationJSON struct {
	ID                     int64                `json:"id"`
	Account                accounts.SimpleUser  `json:"account"`
	RepositorySelection    string               `json:"repository_selection"`
	AccessTokensURL        string               `json:"access_tokens_url"`
	RepositoriesURL        string               `json:"repositories_url"`
	HTMLURL                string               `json:"html_url"`
	AppID                  int64                `json:"app_id"`
	AppSlug                string               `json:"app_slug"`
	ClientID               string               `json:"client_id"`
	TargetID               int64                `json:"target_id"`
	TargetType             string               `json:"target_type"`
	Permissions            auth.Grant           `json:"permissions"`
	Events                 []string             `json:"events"`
	CreatedAt              wire.Time            `json:"created_at"`
	UpdatedAt              wire.Time            `json:"updated_at"`
	SingleFileName         *string              `json:"single_file_name"`
	HasMultipleSingleFiles bool                 `json:"has_multiple_single_files"`
	SingleFilePaths        []string             `json:"single_file_paths"`
	SuspendedBy            *accounts.SimpleUser `json:"suspended_by"`
	SuspendedAt            *wire.Time           `json:"suspended_at"`
}

// toInstallation renders an installation of the app on the account;
// suspendedBy is the user who suspended it, when known.
func toInstallation(base string, a *App, inst *Installation, account, suspendedBy *accounts.Account) installationJSON {
	html := accounts.WebBase(base) + "/settings/installations/" + wire.Itoa(inst.ID)
	if account.IsOrg() {
		html = accounts.WebBase(base) + "/organizations/" + account.Login + "/settings/installations/" + wire.Itoa(inst.ID)
	}
	j := installationJSON{
		ID: inst.ID, Account: accounts.ToSimpleUser(base, account), RepositorySelection: inst.Selection,
		AccessTokensURL: base + "/app/installations/" + wire.Itoa(inst.ID) + "/access_tokens",
		RepositoriesURL: base + "/installation/repositories", HTMLURL: html,
		AppID: a.ID, AppSlug: a.Slug, ClientID: a.ClientID, TargetID: account.ID, TargetType: account.Type,
		Permissions: a.Permissions, Events: a.Events, CreatedAt: wire.T(inst.CreatedAt), UpdatedAt: wire.T(inst.UpdatedAt),
		SingleFilePaths: []string{}, SuspendedAt: wire.TP(inst.SuspendedAt),
	}
	if suspendedBy != nil {
		u := accounts.ToSimpleUser(base, suspendedBy)
		j.SuspendedBy = &u
	}
	return j
}

// tokenJSON is the platform's installation-token object.
type tokenJSON struct {
	Token               string       `json:"token"`
	ExpiresAt           wire.Time    `json:"expires_at"`
	Permissions         auth.Grant   `json:"permissions"`
	RepositorySelection string       `json:"repository_selection"`
	Repositories        []repos.JSON `json:"repositories,omitempty"`
}

// installationReposJSON is the body of GET /installation/repositories.
type installationReposJSON struct {
	TotalCount          int          `json:"total_count"`
	RepositorySelection string       `json:"repository_selection"`
	Repositories        []repos.JSON `json:"repositories"`
}

// IntegrationJSON renders the app as the platform's integration object
// seen by others (no installations_count), its owner read from q.
func IntegrationJSON(ctx context.Context, q store.Q, base string, a *App) (any, error) {
	owner, err := accounts.ByID(ctx, q, a.OwnerID)
	if err != nil {
		return nil, err
	}
	return toIntegration(base, a, owner, nil), nil
}
