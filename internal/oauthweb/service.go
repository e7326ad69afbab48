// Package oauthweb serves the web application flow and the device flow,
// the way clients obtain OAuth tokens now that the authorizations API is
// replaced: the service behind the consent page
// (GET /login/oauth/authorize, rendered by internal/console) and the
// device page (/login/device), and the two endpoints that are not pages,
// POST /login/oauth/access_token and POST /login/device/code, served at
// the host root (not under /api/v3), as the self-managed platform serves
// them.
//
// A client is an OAuth application (accounts.App, table oauth_apps) or an
// app (internal/apps). An OAuth application's token is an OAuth token
// made through oauth.Service, so that it is an authorization of the
// application's grant: it appears in GET /applications/grants and GET
// /authorizations, and deleting the grant revokes it. An app's token is a
// user access token (auth.KindAppUser) that expires after
// UserTokenLifetime, with a refresh token that lasts RefreshTokenLifetime
// and that grant_type=refresh_token rotates with the access token.
//
// Codes, device codes, tokens and refresh tokens are stored as SHA-256
// hashes only. Authorization codes are single use and last CodeLifetime.
package oauthweb

import (
	"context"
	"time"

	"forgeapi/internal/oauth"
	"forgeapi/internal/store"
)

// The lifetimes of what the flows hand out.
const (
	CodeLifetime         = 10 * time.Minute
	DeviceCodeLifetime   = 15 * time.Minute
	UserTokenLifetime    = 8 * time.Hour
	RefreshTokenLifetime = 184 * 24 * time.Hour // six months: the platform's refresh_token_expires_in 15897600
	// DefaultDeviceInterval is the polling interval the device flow asks
	// for, and slow_down adds to it.
	DefaultDeviceInterval = 5 * time.Second
)

// Config tunes the flows; the zero value is the platform's behaviour.
type Config struct {
	// DeviceInterval is the minimum interval between two polls of one
	// device code (0: DefaultDeviceInterval). Polling faster answers
	// slow_down and adds 5 seconds to the code's interval.
	DeviceInterval time.Duration
}

// Service runs the web application flow and the device flow.
type Service struct {
	DB    *store.DB
	OAuth *oauth.Service
	// Now is the clock of codes' and tokens' lifetimes; nil is time.Now.
	Now    func() time.Time
	Config Config
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC().Truncate(time.Microsecond)
	}
	return store.Now()
}

func (s *Service) deviceInterval() time.Duration {
	if s.Config.DeviceInterval > 0 {
		return s.Config.DeviceInterval
	}
	return DefaultDeviceInterval
}

// sweepAfter is how long expired codes are kept, so that a late poll of
// a device code still learns it expired (expired_token) rather than
// that it never existed.
const sweepAfter = time.Hour

// sweep deletes the codes, device codes and refresh tokens that expired
// over sweepAfter ago. The flows call it as they create rows, so that the
// tables hold about what is live.
func (s *Service) sweep(ctx context.Context) error {
	before := s.now().Add(-sweepAfter)
	for _, table := range []string{"oauth_codes", "oauth_device_codes", "app_refresh_tokens"} {
		if _, err := s.DB.ExecContext(ctx, `DELETE FROM `+table+` WHERE expires_at <= $1`, before); err != nil {
			return err
		}
	}
	return nil
}
