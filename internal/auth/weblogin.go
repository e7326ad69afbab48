package auth

import (
	"context"
	"errors"

	"forgeapi/internal/store"
)

// Sign-in through web pages (the console) in two steps: the password,
// then, for an account with two-factor authentication, the one-time
// password. Both steps count failures and honour blocks exactly as HTTP
// Basic does (see LoginLimits), so a guesser gains nothing by using the
// pages instead of the API.

// PasswordLogin checks a login and password from the client address
// addr. It returns the account and whether it still needs a one-time
// password (CompleteOTPLogin); an unknown login or a wrong password is
// ErrBadCredentials (counted for an existing user), a blocked account
// the *apierr.Error of ErrLoginBlocked.
func (a *Authenticator) PasswordLogin(ctx context.Context, login, password, addr string) (acct *Account, needOTP bool, err error) {
	p, err := a.byPassword(ctx, login, password, addr)
	if err != nil {
		return nil, false, err
	}
	var stored string
	if err := a.DB.QueryRowContext(ctx, `SELECT totp_secret FROM accounts WHERE id = $1`, p.Account.ID).Scan(&stored); err != nil {
		return nil, false, store.Normalize(err)
	}
	return p.Account, stored != "", nil
}

// CompleteOTPLogin checks the one-time password of a user whose password
// PasswordLogin accepted from addr. A blocked account is refused before
// the code is checked; a wrong or replayed code is the 401 of CheckOTP and
// counts as a failed attempt; the right one resets the address's count.
func (a *Authenticator) CompleteOTPLogin(ctx context.Context, accountID int64, addr, code string) error {
	var login string
	if err := a.DB.QueryRowContext(ctx, `SELECT login FROM accounts WHERE id = $1`, accountID).Scan(&login); err != nil {
		if err = store.Normalize(err); errors.Is(err, store.ErrNotFound) {
			return ErrBadCredentials()
		}
		return err
	}
	acct, _, _, _, failures, err := a.lookUpLogin(ctx, login, addr)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return ErrBadCredentials()
		}
		return err
	}
	now := a.now()
	if until := a.Limits.blockedUntil(failures, now); !until.IsZero() {
		return ErrLoginBlocked(until, now)
	}
	p := &Principal{Account: &acct, Method: MethodPassword, loginAddr: addr, loginFailures: failures.pair.failures}
	if code == "" {
		code = " " // an empty code is a wrong one here, not a challenge
	}
	return a.CheckOTP(ctx, p, code)
}
