// Package auth holds forgeapi's credentials: password hashing, TOTP,
// token kinds and their format, classic scopes, fine-grained permissions,
// the principal a request acts as, and the Rule every route declares.
package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"hash/crc32"
	"strings"
)

// Kind is the kind of a token.
type Kind string

// The token kinds.
const (
	KindClassic      Kind = "classic"      // classic personal access token (scopes)
	KindOAuth        Kind = "oauth"        // OAuth token from the authorizations API (scopes)
	KindFineGrained  Kind = "fine_grained" // fine-grained personal access token (permissions)
	KindInstallation Kind = "installation" // app installation token, acts as a bot (permissions)
	KindAppUser      Kind = "app_user"     // app user-to-server token (permissions)
	// KindClone is a migration's temp_clone_token: it clones one
	// repository over git HTTP and is good for nothing else (see
	// CloneTokens). It is derived, never stored.
	KindClone Kind = "clone"
)

// API reports whether tokens of the kind may call the REST API. Only
// the kinds listed here may: a kind added later is refused by every API
// route until it is added.
func (k Kind) API() bool {
	switch k {
	case KindClassic, KindOAuth, KindFineGrained, KindInstallation, KindAppUser:
		return true
	}
	return false
}

// tokenPrefixes gives each kind its prefix, so that a token's kind is seen
// at a glance and secret scanners can find leaked ones.
var tokenPrefixes = map[Kind]string{
	KindClassic:      "fap_",
	KindOAuth:        "fao_",
	KindFineGrained:  "fapat_",
	KindInstallation: "fas_",
	KindAppUser:      "fau_",
}

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// NewToken returns a new random token of the kind: prefix, 30 random
// base62 characters and a 6-character base62 CRC32 checksum of them.
func NewToken(kind Kind) string {
	body := randomBase62(30)
	return tokenPrefixes[kind] + body + checksum(body)
}

// LooksLikeToken reports whether s has a token prefix and a valid
// checksum. It lets Basic authentication tell a token used as a password
// from a real password without a database lookup or a slow hash.
func LooksLikeToken(s string) bool {
	for _, p := range tokenPrefixes {
		if rest, ok := strings.CutPrefix(s, p); ok && len(rest) == 36 {
			return checksum(rest[:30]) == rest[30:]
		}
	}
	return false
}

// HashToken returns the hex SHA-256 of a token: what the store keeps.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// RandomString returns n random base62 characters.
func RandomString(n int) string { return randomBase62(n) }

func randomBase62(n int) string {
	out := make([]byte, n)
	buf := make([]byte, n*2)
	i := 0
	for i < n {
		if _, err := rand.Read(buf); err != nil {
			panic("auth: crypto/rand failed: " + err.Error())
		}
		for _, b := range buf {
			if b >= 248 { // 248 = 4*62: reject to keep the distribution uniform
				continue
			}
			out[i] = base62[int(b)%62]
			i++
			if i == n {
				break
			}
		}
	}
	return string(out)
}

func checksum(s string) string {
	v := crc32.ChecksumIEEE([]byte(s))
	out := make([]byte, 6)
	for i := 5; i >= 0; i-- {
		out[i] = base62[v%62]
		v /= 62
	}
	return string(out)
}
