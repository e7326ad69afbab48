package auth

import (
	"crypto/subtle"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"
	"golang.org/x/crypto/bcrypt"
)

// HashPassword returns a bcrypt hash of the password at the default cost.
func HashPassword(password string) (string, error) {
	return HashPasswordCost(password, bcrypt.DefaultCost)
}

// HashPasswordCost returns a bcrypt hash at the given cost (tests use the
// minimum; CheckPassword reads the cost from the hash).
func HashPasswordCost(password string, cost int) (string, error) {
	h, err := bcrypt.GenerateFromPassword([]byte(password), cost)
	return string(h), err
}

// CheckPassword reports whether password matches the bcrypt hash. An empty
// hash (an account without a password) never matches.
func CheckPassword(hash, password string) bool {
	if hash == "" {
		return false
	}
	return bcrypt.CompareHashAndPassword([]byte(hash), []byte(password)) == nil
}

// TOTPPeriod is the step length of the time-based one-time passwords.
const TOTPPeriod = 30

// ValidateTOTP checks a six-digit code against the base32 secret at time
// now, allowing one step of clock skew either way. It returns the step the
// code belongs to, so that the caller can refuse a step used before
// (replay); ok is false when the code matches no step.
func ValidateTOTP(secret, code string, now time.Time) (step int64, ok bool) {
	if secret == "" || len(code) != 6 {
		return 0, false
	}
	current := now.Unix() / TOTPPeriod
	for _, s := range []int64{current, current - 1, current + 1} {
		want, err := totp.GenerateCodeCustom(secret, time.Unix(s*TOTPPeriod, 0), totp.ValidateOpts{
			Period: TOTPPeriod, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1,
		})
		if err != nil {
			return 0, false
		}
		if subtle.ConstantTimeCompare([]byte(want), []byte(code)) == 1 {
			return s, true
		}
	}
	return 0, false
}

// TOTPCode returns the code of the secret at time t (for tests and tools).
func TOTPCode(secret string, t time.Time) (string, error) {
	return totp.GenerateCodeCustom(secret, t, totp.ValidateOpts{
		Period: TOTPPeriod, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1,
	})
}
