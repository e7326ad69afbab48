package settings

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"strconv"

	"golang.org/x/crypto/nacl/box"

	"forgeapi/internal/store"
)

// PublicKey is a place's key for sealing secrets: KeyID names it in a
// secret's key_id, Key is the base64 Curve25519 public key.
type PublicKey struct {
	KeyID string
	Key   string
}

// keyPair is a place's key pair, its private key open.
type keyPair struct {
	PublicKey
	public, private *[32]byte
}

// PublicKey returns the key secrets of the place are sealed with,
// making the place's key pair on first use.
func (s *Service) PublicKey(ctx context.Context, p Place) (PublicKey, error) {
	k, err := s.keyPair(ctx, s.DB, p.keyPlace())
	if err != nil {
		return PublicKey{}, err
	}
	return k.PublicKey, nil
}

// keyPair loads the place's key pair, creating it when it has none (a
// concurrent creation wins, and this one reads the winner's).
func (s *Service) keyPair(ctx context.Context, q store.Q, p Place) (*keyPair, error) {
	k, err := s.loadKey(ctx, q, p)
	if !errors.Is(err, store.ErrNotFound) {
		return k, err
	}
	pub, priv, err := box.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	sealed, err := s.Box.Seal(base64.StdEncoding.EncodeToString(priv[:]))
	if err != nil {
		return nil, err
	}
	repo, org, _ := p.foreignKeys()
	if _, err := q.ExecContext(ctx, `INSERT INTO actions_keys (scope, scope_id, repository_id, organization_id, key_id, public_key,
		private_key, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING`,
		p.Scope, p.ID, repo, org, keyIDOf(pub), base64.StdEncoding.EncodeToString(pub[:]), sealed, now()); err != nil {
		return nil, store.Normalize(err)
	}
	return s.loadKey(ctx, q, p)
}

// loadKey reads the place's key pair (store.ErrNotFound when it has none).
func (s *Service) loadKey(ctx context.Context, q store.Q, p Place) (*keyPair, error) {
	var k keyPair
	var sealed string
	err := q.QueryRowContext(ctx, `SELECT key_id, public_key, private_key FROM actions_keys WHERE scope = $1 AND scope_id = $2`,
		p.Scope, p.ID).Scan(&k.KeyID, &k.Key, &sealed)
	if err != nil {
		return nil, store.Normalize(err)
	}
	plain, err := s.Box.Open(sealed)
	if err != nil {
		return nil, err
	}
	if k.public, err = key32(k.Key); err != nil {
		return nil, err
	}
	if k.private, err = key32(plain); err != nil {
		return nil, err
	}
	return &k, nil
}

// key32 decodes a base64 Curve25519 key.
func key32(b64 string) (*[32]byte, error) {
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(raw) != 32 {
		return nil, errors.New("settings: malformed stored key")
	}
	var k [32]byte
	copy(k[:], raw)
	return &k, nil
}

// keyIDOf names a public key as the platform does: a decimal number (here
// the first 8 bytes of its SHA-256, kept under 2^63).
func keyIDOf(pub *[32]byte) string {
	sum := sha256.Sum256(pub[:])
	return strconv.FormatUint(binary.BigEndian.Uint64(sum[:8])>>1, 10)
}

// open opens a sealed box (base64) with the key pair; false when it is not
// a box sealed to this key.
func (k *keyPair) open(sealed string) (string, bool) {
	raw, err := base64.StdEncoding.DecodeString(sealed)
	if err != nil {
		return "", false
	}
	plain, ok := box.OpenAnonymous(nil, raw, k.public, k.private)
	return string(plain), ok
}
