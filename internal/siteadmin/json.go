package siteadmin

import (
	"forgeapi/internal/accounts"
	"forgeapi/internal/oauth"
	"forgeapi/internal/wire"
)

// appJSON is an authorization's app.
type appJSON struct {
	ClientID string `json:"client_id"`
	Name     string `json:"name"`
	URL      string `json:"url"`
}

// authorizationJSON is the platform's authorization object: an
// impersonation token, or a personal access token in /admin/tokens.
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
	Fingerprint    *string              `json:"fingerprint"`
	User           *accounts.SimpleUser `json:"user"`
	Installation   *struct{}            `json:"installation"`
	ExpiresAt      *wire.Time           `json:"expires_at"`
}

// toAuthorization renders the token z of user; its value only when z
// carries it (the response that created it).
func toAuthorization(base string, z *oauth.Authorization, user *accounts.Account) authorizationJSON {
	su := accounts.ToSimpleUser(base, user)
	scopes := []string(z.Scopes)
	if scopes == nil {
		scopes = []string{}
	}
	return authorizationJSON{
		ID:             z.ID,
		URL:            base + "/authorizations/" + wire.Itoa(z.ID),
		Scopes:         scopes,
		Token:          z.Token,
		TokenLastEight: z.LastEight,
		HashedToken:    z.TokenHash,
		App:            appJSON{ClientID: oauth.PersonalClientID, Name: z.Note, URL: oauth.PersonalAppURL(base)},
		Note:           optional(z.Note),
		NoteURL:        optional(z.NoteURL),
		UpdatedAt:      wire.T(z.UpdatedAt),
		CreatedAt:      wire.T(z.CreatedAt),
		Fingerprint:    optional(z.Fingerprint),
		User:           &su,
		ExpiresAt:      wire.TP(z.ExpiresAt),
	}
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
