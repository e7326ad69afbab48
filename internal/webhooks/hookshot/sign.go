package hookshot

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"hash"
)

// Signature header names. Both carry an HMAC hex digest of the exact request
// body, keyed with the hook's secret.
const (
	HeaderSignature256 = "X-Hub-Signature-256" // "sha256=<hex>"
	HeaderSignature    = "X-Hub-Signature"     // "sha1=<hex>"
)

// Signatures holds the values of the two signature headers.
type Signatures struct {
	SHA256 string // "sha256=<hex hmac-sha256>"
	SHA1   string // "sha1=<hex hmac-sha1>"
}

// Sign returns the signature header values for body keyed with secret.
// It reports ok false, and no signatures, when secret is empty: a hook
// without a secret sends no signature headers.
func Sign(body []byte, secret string) (sigs Signatures, ok bool) {
	if secret == "" {
		return Signatures{}, false
	}
	return Signatures{
		SHA256: signature("sha256=", sha256.New, secret, body),
		SHA1:   signature("sha1=", sha1.New, secret, body),
	}, true
}

// signature is prefix followed by the hex HMAC of body keyed with key,
// made in one string (the digest and its hex on the stack).
func signature(prefix string, h func() hash.Hash, key string, body []byte) string {
	mac := hmac.New(h, []byte(key))
	mac.Write(body)
	var sum [sha256.Size]byte
	var out [len("sha256=") + 2*sha256.Size]byte
	n := copy(out[:], prefix)
	n += hex.Encode(out[n:], mac.Sum(sum[:0]))
	return string(out[:n])
}
