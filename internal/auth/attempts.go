package auth

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"time"

	"forgeapi/internal/apierr"
)

// The default limits of failed login attempts (see LoginLimits).
const (
	DefaultLoginFailuresPerAddress = 10
	DefaultLoginFailuresPerAccount = 100
	DefaultLoginFailureWindow      = time.Hour
)

// LoginLimits bounds password guessing. A failed attempt is a wrong
// password given for an existing user (HTTP Basic, on the API and on git
// over HTTP alike) or a wrong one-time password given after the right
// password. Failures are counted in the database, so that the limits hold
// across the servers that share it, per account and client address and per
// account across all addresses, each in a fixed window that begins at the
// first failure. Once a count reaches its limit, password authentication of
// the account (from that address, or from any for the account-wide count)
// is refused with a 403 until the window ends, even with the right
// password; tokens are not affected. A success resets the count of its own
// account and address only.
type LoginLimits struct {
	// PerAddress is the failures allowed per account and client address
	// in a window: 0 means DefaultLoginFailuresPerAddress, a negative
	// value no limit.
	PerAddress int
	// PerAccount is the failures allowed per account across all
	// addresses in a window (an attacker rotating addresses): 0 means
	// DefaultLoginFailuresPerAccount, a negative value no limit.
	PerAccount int
	// Window is how long a count lasts from its first failure, and so the
	// longest a block lasts: 0 means DefaultLoginFailureWindow.
	Window time.Duration
}

func (l LoginLimits) perAddress() int { return orDefault(l.PerAddress, DefaultLoginFailuresPerAddress) }
func (l LoginLimits) perAccount() int { return orDefault(l.PerAccount, DefaultLoginFailuresPerAccount) }

func (l LoginLimits) window() time.Duration {
	if l.Window <= 0 {
		return DefaultLoginFailureWindow
	}
	return l.Window
}

// off reports whether no failure is limited, and so none is counted.
func (l LoginLimits) off() bool { return l.perAddress() < 0 && l.perAccount() < 0 }

func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// accountAddress is the address of the account-wide count's row.
const accountAddress = ""

// failureCount is one row of login_failures as the login lookup read it.
type failureCount struct {
	failures int
	resetAt  time.Time
}

// active reports whether the count's window is still open at now.
func (c failureCount) active(now time.Time) bool { return c.failures > 0 && now.Before(c.resetAt) }

// loginFailures are the two counts that concern a password attempt.
type loginFailures struct {
	pair, account failureCount
}

// blockedUntil returns when the block of the account (from the address)
// ends, or the zero time when the attempt may go ahead.
func (l LoginLimits) blockedUntil(f loginFailures, now time.Time) time.Time {
	var until time.Time
	if n := l.perAddress(); n > 0 && f.pair.active(now) && f.pair.failures >= n {
		until = f.pair.resetAt
	}
	if n := l.perAccount(); n > 0 && f.account.active(now) && f.account.failures >= n && f.account.resetAt.After(until) {
		until = f.account.resetAt
	}
	return until
}

// LoginBlockedMessage starts the message of the 403 refusing a blocked
// login, as the platform words it.
const LoginBlockedMessage = "Maximum number of login attempts exceeded."

// ErrLoginBlocked is the 403 refusing a login past the limit of failed
// attempts: it says when the block ends, in the message and in
// Retry-After (seconds).
func ErrLoginBlocked(until, now time.Time) *apierr.Error {
	wait := max(1, int(until.Sub(now).Seconds()+0.999))
	return apierr.Forbidden("%s Please try again later (after %s).", LoginBlockedMessage, until.UTC().Format(time.RFC3339)).
		WithHeader("Retry-After", strconv.Itoa(wait))
}

// recordLoginFailure counts a failed attempt on the account from addr:
// the account's expired counts are deleted, then the pair's and the
// account-wide counts are incremented (a new count's window ends after
// the limits' window) in one statement.
func (a *Authenticator) recordLoginFailure(ctx context.Context, accountID int64, addr string) error {
	if a.Limits.off() {
		return nil
	}
	now := a.now().UTC()
	if _, err := a.DB.ExecContext(ctx,
		`DELETE FROM login_failures WHERE account_id = $1 AND reset_at <= $2`, accountID, now); err != nil {
		return err
	}
	_, err := a.DB.ExecContext(ctx, `
		INSERT INTO login_failures (account_id, address, failures, reset_at)
		VALUES ($1, $2, 1, $3), ($1, $4, 1, $3)
		ON CONFLICT (account_id, address) DO UPDATE SET failures = login_failures.failures + 1`,
		accountID, addr, now.Add(a.Limits.window()).Truncate(time.Second), accountAddress)
	return err
}

// resetLoginFailures forgets the failures of the account from addr (not
// those from other addresses, nor the account-wide count).
func (a *Authenticator) resetLoginFailures(ctx context.Context, accountID int64, addr string) error {
	_, err := a.DB.ExecContext(ctx,
		`DELETE FROM login_failures WHERE account_id = $1 AND address = $2`, accountID, addr)
	return err
}

// ClientAddress returns the address of the request's client: the remote
// address without its port. Login failures and the anonymous rate limit
// are counted by it.
func ClientAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
