package accounts

import (
	"context"
	"errors"
	"strings"
	"time"

	"forgeapi/internal/apierr"
	"forgeapi/internal/store"
)

// Rename gives the account a new login in q and returns it renamed. A
// login that breaks the rules is a 422 `invalid`; one another account has
// is a 422 `already_exists` (a change of case alone is the account's own).
// The old login is kept in account_redirects, so that requests naming it
// in a repository path are redirected (repos.Renamed) until an account
// takes it; the new login's own redirect, if any, is dropped.
func Rename(ctx context.Context, q store.Q, a *Account, login string, now time.Time) (*Account, error) {
	if !ValidLogin(login) {
		return nil, apierr.Invalid(a.Type, "login", apierr.CodeInvalid)
	}
	_, err := q.ExecContext(ctx, `UPDATE accounts SET login = $1, updated_at = $2 WHERE id = $3`, login, now, a.ID)
	if err = store.Normalize(err); errors.Is(err, store.ErrConflict) {
		return nil, apierr.Validation(apierr.FieldError{Resource: a.Type, Field: "login", Code: apierr.CodeAlreadyExists,
			Message: "login " + login + " is already taken"})
	} else if err != nil {
		return nil, err
	}
	if err := setLoginRedirect(ctx, q, a, login, now); err != nil {
		return nil, err
	}
	return ByID(ctx, q, a.ID)
}

// setLoginRedirect records a's old login as leading to it and forgets the
// new login as a redirect.
func setLoginRedirect(ctx context.Context, q store.Q, a *Account, login string, now time.Time) error {
	if _, err := q.ExecContext(ctx, `DELETE FROM account_redirects WHERE login_lower = lower($1)`, login); err != nil {
		return store.Normalize(err)
	}
	if strings.EqualFold(a.Login, login) {
		return nil
	}
	_, err := q.ExecContext(ctx, `
		INSERT INTO account_redirects (login_lower, account_id, created_at) VALUES (lower($1), $2, $3)
		ON CONFLICT (login_lower) DO UPDATE SET account_id = excluded.account_id, created_at = excluded.created_at`,
		a.Login, a.ID, now)
	return store.Normalize(err)
}
