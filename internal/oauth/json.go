package oauth

import (
	"forgeapi/docs"
	"forgeapi/internal/accounts"
	"forgeapi/internal/wire"
)

// PersonalClientID is the client id shown for personal authorizations
// (those made without an application), as the platform shows it.
const PersonalClientID = "00000000000000000000"

// PersonalAppURL is the app url shown for personal authorizations under
// the API base URL base: the server's documentation of this API, on the
// web root (the documentation is not served under /api/v3).
func PersonalAppURL(base string) string { return accounts.WebBase(base) + "/docs/" + docs.OAuth }

// appJSON is the app object of a grant or an authorization.
type appJSON struct {
	ClientID string `json:"client_id"`
	Name     string `json:"name"`
	URL      string `json:"url"`
}

// authorizationJSON is an authorization as lists show it.
type authorizationJSON struct {
	ID             int64                `json:"id"`
	URL            string               `json:"url"`
	Scopes         []string             `json:"scopes"`
	Token          string               `json:"token"`
	TokenLastEight string               `json:"token_last_eight"`
	HashedToken    string               `json:"hashed_token"`
	App            appJSON              `json:"app"`
	Note           *string              `json:"note"`
	NoteURL        *string              `json:"note_url"`
	UpdatedAt      wire.Time            `json:"updated_at"`
	CreatedAt      wire.Time            `json:"created_at"`
	Fingerprint    string               `json:"fingerprint"`
	User           *accounts.SimpleUser `json:"user"`
	Installation   *struct{}            `json:"installation"`
}

// singleAuthorizationJSON is an authorization as single responses show
// it: with expires_at.
type singleAuthorizationJSON struct {
	authorizationJSON
	ExpiresAt *wire.Time `json:"expires_at"`
}

// toAuthorizationJSON renders z for its owner user. The token value is
// rendered only when z carries it (the response that created it).
func toAuthorizationJSON(base string, z *Authorization, user *accounts.Account) authorizationJSON {
	app := appJSON{ClientID: PersonalClientID, Name: z.Note, URL: PersonalAppURL(base)}
	if z.App != nil {
		app = appJSON{ClientID: z.App.ClientID, Name: z.App.Name, URL: z.App.URL}
	}
	su := accounts.ToSimpleUser(base, user)
	return authorizationJSON{
		ID:             z.ID,
		URL:            base + "/authorizations/" + wire.Itoa(z.ID),
		Scopes:         scopesJSON(z.Scopes),
		Token:          z.Token,
		TokenLastEight: z.LastEight,
		HashedToken:    z.TokenHash,
		App:            app,
		Note:           optional(z.Note),
		NoteURL:        optional(z.NoteURL),
		UpdatedAt:      wire.T(z.UpdatedAt),
		CreatedAt:      wire.T(z.CreatedAt),
		Fingerprint:    z.Fingerprint,
		User:           &su,
	}
}

func toSingleAuthorizationJSON(base string, z *Authorization, user *accounts.Account) singleAuthorizationJSON {
	return singleAuthorizationJSON{authorizationJSON: toAuthorizationJSON(base, z, user), ExpiresAt: wire.TP(z.ExpiresAt)}
}

// grantJSON is the platform's application-grant object.
type grantJSON struct {
	ID        int64                `json:"id"`
	URL       string               `json:"url"`
	App       appJSON              `json:"app"`
	CreatedAt wire.Time            `json:"created_at"`
	UpdatedAt wire.Time            `json:"updated_at"`
	Scopes    []string             `json:"scopes"`
	User      *accounts.SimpleUser `json:"user"`
}

func toGrantJSON(base string, g *Grant, user *accounts.Account) grantJSON {
	su := accounts.ToSimpleUser(base, user)
	return grantJSON{
		ID:        g.ID,
		URL:       base + "/applications/grants/" + wire.Itoa(g.ID),
		App:       appJSON{ClientID: g.App.ClientID, Name: g.App.Name, URL: g.App.URL},
		CreatedAt: wire.T(g.CreatedAt),
		UpdatedAt: wire.T(g.UpdatedAt),
		Scopes:    scopesJSON(g.Scopes),
		User:      &su,
	}
}

func scopesJSON(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
