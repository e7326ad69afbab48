package oauthweb

import (
	"net/http"

	"forgeapi/internal/accounts"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/wire"
)

// scopeToken serves POST /applications/{client_id}/token/scoped.
func (h *Handler) scopeToken(w http.ResponseWriter, r *http.Request) error {
	clientID := r.PathValue("client_id")
	login, secret, ok := r.BasicAuth()
	if !ok || login != clientID {
		return ErrClientCredentials()
	}
	var req ScopeRequest
	if err := httpapi.DecodeJSON(r, &req); err != nil {
		return err
	}
	sc, err := h.Service.ScopeToken(r.Context(), clientID, secret, req)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, toScopedJSON(httpapi.BaseURL(r.Context()), sc))
	return nil
}

// scopedJSON is the platform's authorization object of a scoped token.
type scopedJSON struct {
	ID             int64               `json:"id"`
	URL            string              `json:"url"`
	Scopes         []string            `json:"scopes"`
	Token          string              `json:"token"`
	TokenLastEight string              `json:"token_last_eight"`
	HashedToken    string              `json:"hashed_token"`
	App            scopedAppJSON       `json:"app"`
	Note           *string             `json:"note"`
	NoteURL        *string             `json:"note_url"`
	UpdatedAt      wire.Time           `json:"updated_at"`
	CreatedAt      wire.Time           `json:"created_at"`
	Fingerprint    *string             `json:"fingerprint"`
	User           accounts.SimpleUser `json:"user"`
	Installation   scopedInstallation  `json:"installation"`
	ExpiresAt      wire.Time           `json:"expires_at"`
}

type scopedAppJSON struct {
	ClientID string `json:"client_id"`
	Name     string `json:"name"`
	URL      string `json:"url"`
}

// scopedInstallation is the platform's scoped-installation object.
type scopedInstallation struct {
	Permissions            auth.Grant          `json:"permissions"`
	RepositorySelection    string              `json:"repository_selection"`
	SingleFileName         *string             `json:"single_file_name"`
	HasMultipleSingleFiles bool                `json:"has_multiple_single_files"`
	SingleFilePaths        []string            `json:"single_file_paths"`
	RepositoriesURL        string              `json:"repositories_url"`
	Account                accounts.SimpleUser `json:"account"`
}

func toScopedJSON(base string, sc *Scoped) scopedJSON {
	selection := "selected"
	if sc.AllRepositories {
		selection = "all"
	}
	return scopedJSON{
		ID: sc.ID, URL: base + "/authorizations/" + wire.Itoa(sc.ID), Scopes: []string{},
		Token: sc.Token, TokenLastEight: sc.Token[len(sc.Token)-8:], HashedToken: sc.TokenHash,
		App:       scopedAppJSON{ClientID: sc.App.ClientID, Name: sc.App.Name, URL: httpapi.WebBase(base) + "/apps/" + sc.App.Slug},
		UpdatedAt: wire.T(sc.CreatedAt), CreatedAt: wire.T(sc.CreatedAt),
		User: accounts.ToSimpleUser(base, sc.User),
		Installation: scopedInstallation{Permissions: sc.Grant, RepositorySelection: selection, SingleFilePaths: []string{},
			RepositoriesURL: base + "/user/repos", Account: accounts.ToSimpleUser(base, sc.Target)},
		ExpiresAt: wire.T(sc.ExpiresAt),
	}
}
