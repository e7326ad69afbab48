package auth

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"forgeapi/internal/secretbox"
	"forgeapi/internal/store"
)

// TOTP seeds are stored sealed in accounts.totp_secret, with the server's
// secret box (the key of webhook secrets): SealTOTPSecret makes the
// stored value, the Authenticator opens it to check a code. A value
// without the sealed prefix is a seed stored in plain text before seeds
// were sealed; it is still read, and SealPlainTOTPSecrets, run at every
// start, seals it.

// ErrInvalidTOTPSecret means a TOTP seed that is not base32.
var ErrInvalidTOTPSecret = errors.New("TOTP secret must be base32")

// SealTOTPSecret returns the value accounts.totp_secret stores for a
// base32 TOTP seed: the seed, upper-cased, sealed with box. It fails with
// ErrInvalidTOTPSecret for a seed that cannot make codes. The empty seed
// (no two-factor authentication) stays empty.
func SealTOTPSecret(box *secretbox.Box, seed string) (string, error) {
	if seed == "" {
		return "", nil
	}
	seed = strings.ToUpper(seed)
	if _, err := TOTPCode(seed, time.Unix(0, 0)); err != nil {
		return "", ErrInvalidTOTPSecret
	}
	return box.Seal(seed)
}

// openTOTPSecret returns the seed of a stored accounts.totp_secret value:
// a sealed value opened with box, a plain one (not converted yet) as is.
func openTOTPSecret(box *secretbox.Box, stored string) (string, error) {
	if !secretbox.IsSealed(stored) {
		return stored, nil
	}
	if box == nil {
		return "", errors.New("auth: no secret box to open TOTP secrets")
	}
	seed, err := box.Open(stored)
	if err != nil {
		return "", fmt.Errorf("open TOTP secret: %w", err)
	}
	return seed, nil
}

// SealPlainTOTPSecrets seals the TOTP seeds that accounts.totp_secret
// still holds in plain text (rows written before seeds were sealed) and
// returns how many it sealed. It is idempotent, and safe to run from
// several processes at once: a row is replaced only while it holds the
// plain value read.
func SealPlainTOTPSecrets(ctx context.Context, db *store.DB, box *secretbox.Box) (int, error) {
	type plain struct {
		id   int64
		seed string
	}
	rows, err := db.QueryContext(ctx, `SELECT id, totp_secret FROM accounts WHERE totp_secret <> '' AND totp_secret NOT LIKE $1`,
		secretbox.SealedPrefix+"%")
	if err != nil {
		return 0, fmt.Errorf("seal TOTP secrets: %w", err)
	}
	var todo []plain
	for rows.Next() {
		var p plain
		if err := rows.Scan(&p.id, &p.seed); err != nil {
			rows.Close()
			return 0, fmt.Errorf("seal TOTP secrets: %w", err)
		}
		todo = append(todo, p)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return 0, fmt.Errorf("seal TOTP secrets: %w", err)
	}
	n := 0
	for _, p := range todo {
		sealed, err := box.Seal(strings.ToUpper(p.seed))
		if err != nil {
			return n, err
		}
		res, err := db.ExecContext(ctx, `UPDATE accounts SET totp_secret = $1 WHERE id = $2 AND totp_secret = $3`, sealed, p.id, p.seed)
		if err != nil {
			return n, fmt.Errorf("seal TOTP secret of account %d: %w", p.id, err)
		}
		if k, _ := res.RowsAffected(); k > 0 {
			n++
		}
	}
	return n, nil
}
