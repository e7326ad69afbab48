package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"time"
)

// CloneTokenTTL is the longest a clone token lives. A token is derived
// from the half-hour window in which it is shown and expires at the end
// of the next window, so it works for at least CloneTokenTTL/2 and at
// most CloneTokenTTL after it is shown, and every response within one
// window shows the same token.
const CloneTokenTTL = time.Hour

// clonePrefix marks a clone token (KindClone).
const clonePrefix = "fac_"

// CloneTokens mints and verifies clone tokens: the temp_clone_token of
// the repositories of a migration. A clone token lets one user clone
// one repository over git HTTP (upload-pack only) until it expires; it
// is refused by every API route and by pushes. A token is
// "fac_<repo>_<user>_<expiry>_<mac>" (ids and Unix expiry in base 36, mac
// the hex HMAC-SHA256 of the rest under a key derived from the server's
// secret key), so nothing is stored: the database holds no secret that
// clones a repository, and a token is revoked by its expiry (or by its
// user losing admin rights on the repository, which git checks at every
// use).
type CloneTokens struct {
	key []byte
	Now func() time.Time // clock; nil means time.Now
}

// NewCloneTokens returns the clone tokens keyed by a key derived from
// the server's secret key (the secretbox key), so that servers sharing
// that key accept each other's tokens.
func NewCloneTokens(serverKey []byte, now func() time.Time) *CloneTokens {
	m := hmac.New(sha256.New, serverKey)
	m.Write([]byte("forgeapi clone tokens v1"))
	return &CloneTokens{key: m.Sum(nil), Now: now}
}

func (c *CloneTokens) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// Mint returns the clone token of the user for the repository in the
// current window, and when it expires.
func (c *CloneTokens) Mint(repoID, userID int64) (string, time.Time) {
	window := CloneTokenTTL / 2
	expires := c.now().Truncate(window).Add(2 * window)
	body := clonePrefix + strconv.FormatInt(repoID, 36) + "_" + strconv.FormatInt(userID, 36) + "_" +
		strconv.FormatInt(expires.Unix(), 36)
	return body + "_" + c.mac(body), expires
}

func (c *CloneTokens) mac(body string) string {
	m := hmac.New(sha256.New, c.key)
	m.Write([]byte(body))
	return hex.EncodeToString(m.Sum(nil)[:20])
}

// cloneClaims is what a clone token grants.
type cloneClaims struct {
	repoID, userID int64
	expires        time.Time
}

// parseCloneToken splits a token of the clone token format; ok is false
// for anything else.
func parseCloneToken(token string) (claims cloneClaims, body, mac string, ok bool) {
	rest, found := strings.CutPrefix(token, clonePrefix)
	if !found {
		return claims, "", "", false
	}
	parts := strings.Split(rest, "_")
	if len(parts) != 4 || len(parts[3]) != 40 {
		return claims, "", "", false
	}
	var nums [3]int64
	for i := range nums {
		v, err := strconv.ParseInt(parts[i], 36, 64)
		if err != nil || v <= 0 {
			return claims, "", "", false
		}
		nums[i] = v
	}
	claims = cloneClaims{repoID: nums[0], userID: nums[1], expires: time.Unix(nums[2], 0)}
	return claims, token[:len(token)-41], parts[3], true
}

// looksLikeCloneToken reports whether s has the clone token format.
func looksLikeCloneToken(s string) bool {
	_, _, _, ok := parseCloneToken(s)
	return ok
}

// verify returns the claims of a genuine, unexpired clone token.
func (c *CloneTokens) verify(token string) (cloneClaims, bool) {
	claims, body, mac, ok := parseCloneToken(token)
	if !ok || c == nil || !hmac.Equal([]byte(mac), []byte(c.mac(body))) {
		return cloneClaims{}, false
	}
	if !c.now().Before(claims.expires) {
		return cloneClaims{}, false
	}
	return claims, true
}
