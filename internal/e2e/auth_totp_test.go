package e2e_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apptest"
	"forgeapi/internal/auth"
	"forgeapi/internal/secretbox"
)

const totpSeed = "JBSWY3DPEHPK3PXP"

// stepClock is a clock that tests move by whole TOTP steps, so that each
// login has a code not used before.
type stepClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *stepClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *stepClock) next() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(auth.TOTPPeriod * time.Second)
}

// storedTOTPSecret reads accounts.totp_secret as the database holds it.
func storedTOTPSecret(t *testing.T, env *apptest.Env, id int64) string {
	t.Helper()
	var s string
	apptest.Must(t, "read totp_secret", env.Q().QueryRowContext(context.Background(),
		`SELECT totp_secret FROM accounts WHERE id = $1`, id).Scan(&s))
	return s
}

// otpLogin creates an authorization (an endpoint that asks for the
// one-time password) with the password and the code of the next step,
// and returns the status.
func otpLogin(t *testing.T, env *apptest.Env, c *stepClock, login, password string) int {
	t.Helper()
	c.next()
	code, err := auth.TOTPCode(totpSeed, c.Now())
	apptest.Must(t, "code", err)
	return createAuthorization(env, login, password, code)
}

func createAuthorization(env *apptest.Env, login, password, code string) int {
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte(login+":"+password))
	resp, _ := env.DoJSON(http.MethodPost, "/authorizations", "", `{"scopes": ["repo"], "note": "`+apptest.Unique("otp")+`"}`,
		"Authorization", basic, "X-Service-OTP", code)
	return resp.StatusCode
}

// wantSealed checks that a stored TOTP secret is the seed sealed with the
// server's key, and not the seed.
func wantSealed(t *testing.T, env *apptest.Env, stored string) {
	t.Helper()
	if !secretbox.IsSealed(stored) || strings.Contains(strings.ToUpper(stored), totpSeed) {
		t.Fatalf("totp_secret stored as %q: want it sealed", stored)
	}
	if seed, err := env.App.Secrets.Open(stored); err != nil || seed != totpSeed {
		t.Fatalf("stored totp_secret opens to %q, %v; want the seed", seed, err)
	}
}

// TestTOTPSecretSealedAtRest: the database holds a user's TOTP seed
// sealed with the server key, and password+OTP logins work, after a
// restart too.
func TestTOTPSecretSealedAtRest(t *testing.T) {
	t.Parallel()
	c := &stepClock{t: time.Now()}
	env := apptest.Start(t, apptest.WithClock(c.Now))
	u := env.User("twofa", apptest.UserOpts{Password: "pw", TOTPSecret: strings.ToLower(totpSeed)})
	wantSealed(t, env, storedTOTPSecret(t, env, u.ID))
	if got, _ := accounts.ByID(context.Background(), env.App.DB, u.ID); !got.HasTOTP {
		t.Fatal("the user has no two-factor authentication")
	}
	if status := otpLogin(t, env, c, "twofa", "pw"); status != http.StatusCreated {
		t.Fatalf("OTP login: %d", status)
	}
	if status := createAuthorization(env, "twofa", "pw", "000000"); status != http.StatusUnauthorized {
		t.Fatalf("wrong code: %d, want 401", status)
	}

	env.Stop()
	restarted := apptest.StartConfig(t, env.Config)
	if status := otpLogin(t, restarted, c, "twofa", "pw"); status != http.StatusCreated {
		t.Fatalf("OTP login after a restart: %d", status)
	}
}

// TestPlainTOTPSecretSealedAtStart: a seed stored in plain text (before
// seeds were sealed) still works, and the next start seals it.
func TestPlainTOTPSecretSealedAtStart(t *testing.T) {
	t.Parallel()
	c := &stepClock{t: time.Now()}
	env := apptest.Start(t, apptest.WithClock(c.Now))
	u := env.User("legacy", apptest.UserOpts{Password: "pw", TOTPSecret: totpSeed})
	other := env.User("other", apptest.UserOpts{Password: "pw", TOTPSecret: totpSeed})
	sealedBefore := storedTOTPSecret(t, env, other.ID)
	_, err := env.Q().ExecContext(context.Background(), `UPDATE accounts SET totp_secret = $1 WHERE id = $2`, totpSeed, u.ID)
	apptest.Must(t, "store the seed in plain text", err)
	if status := otpLogin(t, env, c, "legacy", "pw"); status != http.StatusCreated {
		t.Fatalf("OTP login with a plain seed: %d", status)
	}

	env.Stop()
	restarted := apptest.StartConfig(t, env.Config)
	wantSealed(t, restarted, storedTOTPSecret(t, restarted, u.ID))
	if got := storedTOTPSecret(t, restarted, other.ID); got != sealedBefore {
		t.Errorf("an already sealed seed was sealed again: %q, was %q", got, sealedBefore)
	}
	if status := otpLogin(t, restarted, c, "legacy", "pw"); status != http.StatusCreated {
		t.Fatalf("OTP login after the seed was sealed: %d", status)
	}
	if n, err := auth.SealPlainTOTPSecrets(context.Background(), restarted.App.DB, restarted.App.Secrets); err != nil || n != 0 {
		t.Fatalf("sealing again sealed %d, %v; want none", n, err)
	}
}
