// Package gitsign signs the commits the server writes itself (merges,
// the contents API, git data commits without a signature) with the
// server's own key, as the platform's web-flow commits are signed: an
// ed25519 key made once under the data directory and kept, and git's SSH
// signature format (SSHSIG, the "git" namespace, as `git commit -S` with
// gpg.format=ssh writes it), which sigverify verifies.
package gitsign

import (
	"crypto/rand"
	"crypto/sha512"
	"encoding/base64"
	"fmt"
	"strings"

	"golang.org/x/crypto/ssh"

	"forgeapi/internal/git/gitssh"
)

// Signer signs commits with the server's key.
type Signer struct {
	key ssh.Signer
}

// Open returns the Signer of the ed25519 key kept in path, made now (mode
// 0600) when the file does not exist.
func Open(path string) (*Signer, error) {
	key, err := gitssh.LoadOrCreateHostKey(path) // the same kept ed25519 key file
	if err != nil {
		return nil, fmt.Errorf("gitsign: %w", err)
	}
	return &Signer{key: key}, nil
}

// PublicKey is the key signatures are checked with.
func (s *Signer) PublicKey() ssh.PublicKey { return s.key.PublicKey() }

// SignCommit returns the armored SSH signature of payload (the commit
// object without its gpgsig header), as git writes it in that header.
func (s *Signer) SignCommit(payload []byte) (string, error) {
	const magic, namespace, hash = "SSHSIG", "git", "sha512"
	digest := sha512.Sum512(payload)
	signed := append([]byte(magic), ssh.Marshal(struct {
		Namespace, Reserved, Hash string
		Digest                    []byte
	}{namespace, "", hash, digest[:]})...)
	sig, err := s.key.Sign(rand.Reader, signed)
	if err != nil {
		return "", fmt.Errorf("gitsign: %w", err)
	}
	blob := append([]byte(magic), ssh.Marshal(struct {
		Version                   uint32
		PublicKey                 []byte
		Namespace, Reserved, Hash string
		Signature                 []byte
	}{1, s.key.PublicKey().Marshal(), namespace, "", hash, ssh.Marshal(sig)})...)
	return armor(blob), nil
}

// armor wraps blob as OpenSSH does: base64 in lines of 70 characters
// between the SSH SIGNATURE lines.
func armor(blob []byte) string {
	enc := base64.StdEncoding.EncodeToString(blob)
	var b strings.Builder
	b.WriteString("-----BEGIN SSH SIGNATURE-----\n")
	for len(enc) > 70 {
		b.WriteString(enc[:70])
		b.WriteByte('\n')
		enc = enc[70:]
	}
	b.WriteString(enc)
	b.WriteString("\n-----END SSH SIGNATURE-----")
	return b.String()
}
