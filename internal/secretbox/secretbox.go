// Package secretbox seals short secrets at rest (webhook secrets and
// passwords, TOTP seeds) with AES-256-GCM under one server key, so that a
// copy of the database alone does not reveal them, and loads or creates
// that key. Sealed values carry a version prefix ("v1:") that plain
// values of the secrets it seals never have, so code can tell sealed from
// plain while rows are converted. Keys and secrets never appear in its
// errors.
package secretbox

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// KeySize is the size of a Box key: AES-256.
const KeySize = 32

// SealedPrefix marks the format of a sealed secret: "v1:" followed by
// base64(nonce || AES-256-GCM ciphertext and tag). The prefix is also the
// additional authenticated data, so a value cannot be reinterpreted under a
// later format.
const SealedPrefix = "v1:"

// Errors of the secret box. None of them carries key or secret material.
var (
	ErrInvalidKey    = errors.New("secret key must be 32 bytes, written as 64 hex digits or base64")
	ErrInvalidSealed = errors.New("sealed secret is malformed, was sealed with another key, or was altered")
)

// Box encrypts secrets at rest with AES-256-GCM, so a copy of the
// database alone does not reveal them. It is safe for concurrent use.
type Box struct {
	aead cipher.AEAD
}

// New returns a Box for a KeySize-byte key, or ErrInvalidKey.
func New(key []byte) (*Box, error) {
	if len(key) != KeySize {
		return nil, ErrInvalidKey
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, ErrInvalidKey
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, ErrInvalidKey
	}
	return &Box{aead: aead}, nil
}

// Seal encrypts plaintext with a fresh random nonce and returns
// "v1:<base64>". The empty secret seals to the empty string, so "no secret"
// stays recognisable in the database.
func (b *Box) Seal(plaintext string) (string, error) {
	if plaintext == "" {
		return "", nil
	}
	nonce := make([]byte, b.aead.NonceSize(), b.aead.NonceSize()+len(plaintext)+b.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("sealing secret: %w", err)
	}
	sealed := b.aead.Seal(nonce, nonce, []byte(plaintext), []byte(SealedPrefix))
	return SealedPrefix + base64.StdEncoding.EncodeToString(sealed), nil
}

// Open decrypts a value made by Seal with the same key. The empty string
// opens to the empty string. Anything else that is not an intact "v1:" value
// sealed with this key is ErrInvalidSealed.
func (b *Box) Open(sealed string) (string, error) {
	if sealed == "" {
		return "", nil
	}
	encoded, ok := strings.CutPrefix(sealed, SealedPrefix)
	if !ok {
		return "", ErrInvalidSealed
	}
	raw, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil || len(raw) < b.aead.NonceSize()+b.aead.Overhead() {
		return "", ErrInvalidSealed
	}
	nonce, ciphertext := raw[:b.aead.NonceSize()], raw[b.aead.NonceSize():]
	plain, err := b.aead.Open(nil, nonce, ciphertext, []byte(SealedPrefix))
	if err != nil {
		return "", ErrInvalidSealed
	}
	return string(plain), nil
}

// IsSealed reports whether s has the form of a value made by Seal (it
// may still fail to open). The empty string is not sealed.
func IsSealed(s string) bool { return strings.HasPrefix(s, SealedPrefix) }

// ParseKey decodes a key given by flag or environment: 64 hex digits, or
// base64 (standard or URL alphabet, padded or not) of 32 bytes. Surrounding
// whitespace is ignored. Any other input is ErrInvalidKey.
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if len(s) == 2*KeySize {
		if key, err := hex.DecodeString(s); err == nil {
			return key, nil
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if key, err := enc.DecodeString(s); err == nil && len(key) == KeySize {
			return key, nil
		}
	}
	return nil, ErrInvalidKey
}

// GenerateKey returns a new random key.
func GenerateKey() ([]byte, error) {
	key := make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("generating secret key: %w", err)
	}
	return key, nil
}

// LoadOrCreateKey returns the key stored in the file at path, creating the
// file first when it does not exist: a new random key written as hex, mode
// 0600, in a directory created with mode 0700 if needed. Creation is atomic
// and never replaces an existing file, so concurrent processes sharing the
// directory end up with the same key. A file that does not hold a valid key
// is an error wrapping ErrInvalidKey.
func LoadOrCreateKey(path string) ([]byte, error) {
	key, err := readKeyFile(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}
	if err := createKeyFile(path); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, err
	}
	return readKeyFile(path)
}

func readKeyFile(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	key, err := ParseKey(string(data))
	if err != nil {
		return nil, fmt.Errorf("key file %s: %w", path, err)
	}
	return key, nil
}

// createKeyFile writes a new key to a temporary file in path's directory and
// links it into place; the link fails with fs.ErrExist if path appeared
// meanwhile, so an existing key is never overwritten.
func createKeyFile(path string) error {
	key, err := GenerateKey()
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating key directory: %w", err)
	}
	tmp, err := writeTemp(dir, []byte(hex.EncodeToString(key)+"\n"))
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, path); err != nil {
		return err
	}
	return syncDir(dir)
}

// writeTemp writes data to a new 0600 file in dir, synced to disk, and
// returns its name.
func writeTemp(dir string, data []byte) (string, error) {
	f, err := os.CreateTemp(dir, ".secret-key-*")
	if err != nil {
		return "", fmt.Errorf("creating key file: %w", err)
	}
	name := f.Name()
	err = errors.Join(f.Chmod(0o600), write(f, data), f.Sync(), f.Close())
	if err != nil {
		os.Remove(name)
		return "", fmt.Errorf("writing key file: %w", err)
	}
	return name, nil
}

func write(f *os.File, data []byte) error {
	_, err := f.Write(data)
	return err
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}
