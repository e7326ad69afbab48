package oauthweb

import (
	"context"
	"errors"
	"strings"
	"time"

	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/store"
)

// The states of a device code.
const (
	devicePending  = "pending"
	deviceApproved = "approved"
	deviceDenied   = "denied"
	deviceUsed     = "used"
)

// userCodeAlphabet has no vowels (no words) and no digits that read as
// letters: what a person types from another screen.
const userCodeAlphabet = "BCDFGHJKLMNPQRSTVWXZ"

// DeviceCode is what POST /login/device/code answers.
type DeviceCode struct {
	DeviceCode      string
	UserCode        string // XXXX-XXXX
	VerificationURI string
	ExpiresIn       int64 // seconds
	Interval        int64 // seconds
}

// DeviceRequest is a pending device code as the /login/device page
// shows it before the user approves or denies it.
type DeviceRequest struct {
	UserCode    string
	AppName     string
	OwnerLogin  string
	IsApp       bool
	Scopes      []string
	Permissions auth.Grant // an app's
	ExpiresAt   time.Time
}

// StartDevice begins the device flow for the client with the scopes
// (space or comma separated; unknown ones dropped; ignored for apps). An
// unknown client is a *TokenError incorrect_client_credentials, a client
// whose device flow is off device_flow_disabled. verificationURI is
// where the user enters the code (https://HOST/login/device).
func (s *Service) StartDevice(ctx context.Context, clientID, scope, verificationURI string) (*DeviceCode, error) {
	c, err := clientByID(ctx, s.DB, clientID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, tokenError(ctx, "incorrect_client_credentials", "The client_id passed is incorrect.")
	}
	if err != nil {
		return nil, err
	}
	if !c.DeviceFlow {
		return nil, tokenError(ctx, "device_flow_disabled", "Device Flow must be explicitly enabled for this App")
	}
	var scopes auth.Scopes
	if !c.IsApp() {
		for _, sc := range auth.ParseScopes(scope) {
			if auth.ValidScope(sc) {
				scopes = append(scopes, sc)
			}
		}
	}
	interval := int64(s.deviceInterval() / time.Second)
	if interval < 1 {
		interval = 1
	}
	d := &DeviceCode{DeviceCode: auth.RandomString(40), VerificationURI: verificationURI,
		ExpiresIn: int64(DeviceCodeLifetime / time.Second), Interval: interval}
	if err := s.sweep(ctx); err != nil {
		return nil, err
	}
	now := s.now()
	oauthAppID, appID := c.ids()
	for range 5 { // a user code taken by another pending code: draw again
		d.UserCode = newUserCode()
		_, err = s.DB.ExecContext(ctx, `
			INSERT INTO oauth_device_codes (device_code_hash, user_code, oauth_app_id, app_id, scopes, interval_seconds,
			                                expires_at, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
			auth.HashToken(d.DeviceCode), d.UserCode, oauthAppID, appID, joinScopes(scopes), interval,
			now.Add(DeviceCodeLifetime), now)
		if err = store.Normalize(err); !errors.Is(err, store.ErrConflict) {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	return d, nil
}

func newUserCode() string {
	var b strings.Builder
	for i, r := range auth.RandomString(8) {
		if i == 4 {
			b.WriteByte('-')
		}
		b.WriteByte(userCodeAlphabet[int(r)%len(userCodeAlphabet)])
	}
	return b.String()
}

// NormalizeUserCode returns a user code as typed (any case, with or
// without the dash, spaces around) in the XXXX-XXXX form.
func NormalizeUserCode(code string) string {
	c := strings.ToUpper(strings.NewReplacer("-", "", " ", "").Replace(code))
	if len(c) != 8 {
		return c
	}
	return c[:4] + "-" + c[4:]
}

// errDeviceNotFound is the 404 of a user code that is unknown, expired,
// or no longer pending.
func errDeviceNotFound() error {
	return apierr.New(404, "The code you entered is not valid or has expired.")
}

// LookupDevice returns the pending device request with the user code (as
// typed: see NormalizeUserCode), or a 404 *apierr.Error when the code is
// unknown, expired or already approved or denied.
func (s *Service) LookupDevice(ctx context.Context, userCode string) (*DeviceRequest, error) {
	d, _, err := s.pendingDevice(ctx, s.DB, userCode)
	return d, err
}

// pendingDevice reads the pending device code with the user code and its id.
func (s *Service) pendingDevice(ctx context.Context, q store.Q, userCode string) (*DeviceRequest, int64, error) {
	var (
		id                int64
		oauthAppID, appID *int64
		scopes            string
		d                 = &DeviceRequest{UserCode: NormalizeUserCode(userCode)}
	)
	err := q.QueryRowContext(ctx, `SELECT id, oauth_app_id, app_id, scopes, expires_at FROM oauth_device_codes
		WHERE user_code = $1 AND state = $2 AND expires_at > $3`, d.UserCode, devicePending, s.now()).
		Scan(&id, &oauthAppID, &appID, &scopes, &d.ExpiresAt)
	if err = store.Normalize(err); errors.Is(err, store.ErrNotFound) {
		return nil, 0, errDeviceNotFound()
	} else if err != nil {
		return nil, 0, err
	}
	c, err := clientOfRow(ctx, q, oauthAppID, appID)
	if err != nil {
		return nil, 0, err
	}
	d.AppName, d.OwnerLogin, d.IsApp = c.Name, c.OwnerLogin, c.IsApp()
	d.Scopes = auth.ParseScopes(scopes).Normalize()
	if d.Scopes == nil {
		d.Scopes = []string{}
	}
	if c.IsApp() {
		d.Permissions = c.App.Permissions
	}
	return d, id, nil
}

// clientOfRow returns the client a code row names by its ids.
func clientOfRow(ctx context.Context, q store.Q, oauthAppID, appID *int64) (*client, error) {
	var clientID string
	var err error
	if oauthAppID != nil {
		err = q.QueryRowContext(ctx, `SELECT client_id FROM oauth_apps WHERE id = $1`, *oauthAppID).Scan(&clientID)
	} else if appID != nil {
		err = q.QueryRowContext(ctx, `SELECT client_id FROM apps WHERE id = $1`, *appID).Scan(&clientID)
	} else {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, store.Normalize(err)
	}
	return clientByID(ctx, q, clientID)
}

// ApproveDevice approves the pending device code with the user code for
// the user: the client's next poll gets a token acting as the user. An
// unknown, expired or no longer pending code is a 404 *apierr.Error.
func (s *Service) ApproveDevice(ctx context.Context, userID int64, userCode string) error {
	return s.decideDevice(ctx, userID, userCode, deviceApproved)
}

// DenyDevice denies the pending device code with the user code: the
// client's next poll gets access_denied. Errors as ApproveDevice's.
func (s *Service) DenyDevice(ctx context.Context, userID int64, userCode string) error {
	return s.decideDevice(ctx, userID, userCode, deviceDenied)
}

func (s *Service) decideDevice(ctx context.Context, userID int64, userCode, state string) error {
	res, err := s.DB.ExecContext(ctx, `UPDATE oauth_device_codes SET state = $1, user_id = $2
		WHERE user_code = $3 AND state = $4 AND expires_at > $5`,
		state, userID, NormalizeUserCode(userCode), devicePending, s.now())
	if err != nil {
		return store.Normalize(err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return errDeviceNotFound()
	}
	return nil
}
