package accounts

import (
	"context"
	"errors"
	"strings"

	"forgeapi/internal/apierr"
	"forgeapi/internal/store"
)

// Email is one of a user's email addresses. forgeapi sends no mail:
// every address counts as verified.
type Email struct {
	Address    string
	Primary    bool
	Visibility string // EmailPublic or EmailPrivate; meaningful for the primary address
}

// The visibilities of a primary email address.
const (
	EmailPublic  = "public"
	EmailPrivate = "private"
)

// MaxEmailLength is the longest email address accepted, in characters.
const MaxEmailLength = 255

// Emails returns the user's addresses, the primary one first
// (publicOnly: only a primary address that is public).
func Emails(ctx context.Context, q store.Q, userID int64, publicOnly bool) ([]Email, error) {
	rows, err := q.QueryContext(ctx, `SELECT email, is_primary, visibility FROM user_emails
		WHERE user_id = $1 AND (NOT $2 OR (is_primary AND visibility = 'public'))
		ORDER BY is_primary DESC, created_at, email`, userID, publicOnly)
	if err != nil {
		return nil, store.Normalize(err)
	}
	defer rows.Close()
	out := []Email{}
	for rows.Next() {
		var e Email
		if err := rows.Scan(&e.Address, &e.Primary, &e.Visibility); err != nil {
			return nil, store.Normalize(err)
		}
		out = append(out, e)
	}
	return out, store.Normalize(rows.Err())
}

// HasEmail reports whether the address is one of the user's.
func HasEmail(ctx context.Context, q store.Q, userID int64, address string) (bool, error) {
	var one int
	err := store.Normalize(q.QueryRowContext(ctx, `SELECT 1 FROM user_emails WHERE user_id = $1 AND lower(email) = lower($2)`,
		userID, address).Scan(&one))
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// ValidEmail reports whether s looks like an email address: one @ with
// text on both sides, no spaces, within MaxEmailLength.
func ValidEmail(s string) bool {
	local, domain, ok := strings.Cut(s, "@")
	return ok && local != "" && domain != "" && !strings.ContainsAny(s, " \t\r\n") &&
		!strings.Contains(domain, "@") && !apierr.TooLongFor(s, MaxEmailLength)
}

// AddEmails adds the addresses to the user (the first one the user gets
// becomes primary); an address another account has is a 422
// already_exists, and one the user has already is left as it is.
func AddEmails(ctx context.Context, q store.Q, userID int64, addresses []string) error {
	for _, a := range addresses {
		mine, err := HasEmail(ctx, q, userID, a)
		if err != nil || mine {
			if err != nil {
				return err
			}
			continue
		}
		_, err = q.ExecContext(ctx, `
			INSERT INTO user_emails (user_id, email, is_primary, visibility, created_at)
			VALUES ($1, $2, NOT EXISTS (SELECT 1 FROM user_emails WHERE user_id = $1), $3, $4)`,
			userID, a, EmailPublic, store.Now())
		if err = store.Normalize(err); errors.Is(err, store.ErrConflict) {
			return apierr.Validation(apierr.FieldError{Resource: "UserEmail", Field: "email", Code: apierr.CodeAlreadyExists,
				Message: "email " + a + " is already in use"})
		} else if err != nil {
			return err
		}
	}
	return nil
}

// DeleteEmails removes the addresses from the user; the primary address
// cannot be removed (422), and one the user does not have is a 404.
func DeleteEmails(ctx context.Context, q store.Q, userID int64, addresses []string) error {
	for _, a := range addresses {
		var primary bool
		err := q.QueryRowContext(ctx, `DELETE FROM user_emails WHERE user_id = $1 AND lower(email) = lower($2) AND NOT is_primary
			RETURNING is_primary`, userID, a).Scan(&primary)
		if err = store.Normalize(err); errors.Is(err, store.ErrNotFound) {
			mine, herr := HasEmail(ctx, q, userID, a)
			if herr != nil {
				return herr
			}
			if mine {
				return apierr.Custom("UserEmail", "email", "%s is your primary email address and cannot be deleted.", a)
			}
			return apierr.NotFound()
		} else if err != nil {
			return err
		}
	}
	return nil
}

// SetPrimaryEmailVisibility sets the visibility of the user's primary
// address; store.ErrNotFound when the user has none.
func SetPrimaryEmailVisibility(ctx context.Context, q store.Q, userID int64, visibility string) error {
	res, err := q.ExecContext(ctx, `UPDATE user_emails SET visibility = $1 WHERE user_id = $2 AND is_primary`, visibility, userID)
	if err != nil {
		return store.Normalize(err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return store.ErrNotFound
	}
	return nil
}

// ByEmail returns the user who has the address (case-insensitive), or
// store.ErrNotFound: how a commit's author email names an account.
func ByEmail(ctx context.Context, q store.Q, address string) (*Account, error) {
	return scanAccount(q.QueryRowContext(ctx, `SELECT `+accountColumns+` FROM accounts
		WHERE id = (SELECT user_id FROM user_emails WHERE lower(email) = lower($1))`, address))
}
