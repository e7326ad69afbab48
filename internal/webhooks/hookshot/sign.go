package hookshot

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"sync"
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

// signature is prefix followed by the hex HMAC of body made with mac,
// in one string (the digest and its hex on the stack). mac is left reset.
func signature(prefix string, mac hash.Hash, body []byte) string {
	mac.Write(body)
	var sum [sha256.Size]byte
	var out [len("sha256=") + 2*sha256.Size]byte
	n := copy(out[:], prefix)
	n += hex.Encode(out[n:], mac.Sum(sum[:0]))
	mac.Reset()
	return string(out[:n])
}

// maxSignerKeys bounds the secrets a signer keeps HMACs of; a full
// signer starts over.
const maxSignerKeys = 4096

// signer makes the signature header values of a body, with HMACs kept
// per secret and reused: making the two HMACs of every delivery anew
// (their hashes, pads and the hashed inner pad) was 1.5% of the CPU a
// delivery costs in the webhooks bench. It is safe for concurrent use.
type signer struct {
	mu       sync.RWMutex
	bySecret map[string]*keyedMACs
}

// keyedMACs holds reset HMACs keyed with one secret.
type keyedMACs struct{ sha256, sha1 sync.Pool }

// sign returns the signature header values for body keyed with secret.
// It reports ok false, and no signatures, when secret is empty: a hook
// without a secret sends no signature headers.
func (s *signer) sign(body []byte, secret string) (sigs Signatures, ok bool) {
	if secret == "" {
		return Signatures{}, false
	}
	k := s.keyed(secret)
	return Signatures{SHA256: k.signature(&k.sha256, "sha256=", body), SHA1: k.signature(&k.sha1, "sha1=", body)}, true
}

// keyed returns the HMACs of secret, made on first use.
func (s *signer) keyed(secret string) *keyedMACs {
	s.mu.RLock()
	k := s.bySecret[secret]
	s.mu.RUnlock()
	if k != nil {
		return k
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if k = s.bySecret[secret]; k != nil {
		return k
	}
	if s.bySecret == nil || len(s.bySecret) >= maxSignerKeys {
		s.bySecret = map[string]*keyedMACs{}
	}
	key := []byte(secret)
	k = &keyedMACs{}
	k.sha256.New = func() any { return hmac.New(sha256.New, key) }
	k.sha1.New = func() any { return hmac.New(sha1.New, key) }
	s.bySecret[secret] = k
	return k
}

// signature is signature(prefix, mac, body) with a mac of pool.
func (k *keyedMACs) signature(pool *sync.Pool, prefix string, body []byte) string {
	mac := pool.Get().(hash.Hash)
	defer pool.Put(mac)
	return signature(prefix, mac, body)
}
