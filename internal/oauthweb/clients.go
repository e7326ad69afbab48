package oauthweb

import (
	"context"
	"crypto/subtle"
	"errors"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apps"
	"forgeapi/internal/auth"
	"forgeapi/internal/store"
)

// client is the application a flow runs for: an OAuth application or an
// app, found by its client id.
type client struct {
	ClientID    string
	Name        string
	OwnerLogin  string
	HomepageURL string
	CallbackURL string
	DeviceFlow  bool
	secretHash  string
	// OAuthApp is set for an OAuth application, App for an app.
	OAuthApp *accounts.App
	App      *apps.App
}

// IsApp reports whether the client is an app (not an OAuth application).
func (c *client) IsApp() bool { return c.App != nil }

// CheckSecret reports whether secret is the client's secret.
func (c *client) CheckSecret(secret string) bool {
	return secret != "" && subtle.ConstantTimeCompare([]byte(c.secretHash), []byte(auth.HashToken(secret))) == 1
}

// clientByID returns the OAuth application or app with the client id, or
// store.ErrNotFound.
func clientByID(ctx context.Context, q store.Q, clientID string) (*client, error) {
	if clientID == "" || len(clientID) > 100 {
		return nil, store.ErrNotFound
	}
	c := &client{ClientID: clientID}
	var oauthAppID int64
	err := q.QueryRowContext(ctx, `
		SELECT o.id, o.name, o.url, o.callback_url, o.device_flow, o.client_secret_hash, a.login
		FROM oauth_apps o JOIN accounts a ON a.id = o.owner_id WHERE o.client_id = $1`, clientID).
		Scan(&oauthAppID, &c.Name, &c.HomepageURL, &c.CallbackURL, &c.DeviceFlow, &c.secretHash, &c.OwnerLogin)
	if err == nil {
		c.OAuthApp, err = accounts.AppByID(ctx, q, oauthAppID)
		return c, err
	}
	if err = store.Normalize(err); !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	var appID int64
	err = q.QueryRowContext(ctx, `
		SELECT p.id, p.name, p.callback_url, p.device_flow, p.client_secret_hash, a.login
		FROM apps p JOIN accounts a ON a.id = p.owner_id WHERE p.client_id = $1`, clientID).
		Scan(&appID, &c.Name, &c.CallbackURL, &c.DeviceFlow, &c.secretHash, &c.OwnerLogin)
	if err != nil {
		return nil, store.Normalize(err)
	}
	c.App, err = apps.ByID(ctx, q, appID)
	return c, err
}

// ClientSettings are the flow settings of an OAuth application or app.
type ClientSettings struct {
	// CallbackURL is where the web flow redirects; redirect_uri must
	// match it (see RedirectAllowed). Empty refuses every web flow.
	CallbackURL string
	// DeviceFlow enables the device flow (enabled by default).
	DeviceFlow bool
}

// Configure sets the callback URL and the device flow switch of the OAuth
// application or app with the client id (store.ErrNotFound for none).
// The callback URL must be an absolute http or https URL without a
// fragment, or empty.
func (s *Service) Configure(ctx context.Context, clientID string, set ClientSettings) error {
	if set.CallbackURL != "" {
		if _, err := parseCallback(set.CallbackURL); err != nil {
			return err
		}
	}
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		for _, table := range []string{"oauth_apps", "apps"} {
			res, err := tx.ExecContext(ctx, `UPDATE `+table+` SET callback_url = $1, device_flow = $2, updated_at = $3
				WHERE client_id = $4`, set.CallbackURL, set.DeviceFlow, tx.Now(), clientID)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n > 0 {
				return nil
			}
		}
		return store.ErrNotFound
	})
}

// Settings returns the flow settings of the OAuth application or app
// with the client id (store.ErrNotFound for none).
func (s *Service) Settings(ctx context.Context, clientID string) (ClientSettings, error) {
	c, err := clientByID(ctx, s.DB, clientID)
	if err != nil {
		return ClientSettings{}, err
	}
	return ClientSettings{CallbackURL: c.CallbackURL, DeviceFlow: c.DeviceFlow}, nil
}
