// Package sigverify verifies the signatures of git commits and annotated
// tags against the keys users added: SSH signatures (git's gpg.format=ssh, the SSHSIG
// format with the "git" namespace) against their SSH signing keys, and
// OpenPGP signatures against their GPG keys. A valid signature also needs
// the committer's email address to be the key user's (and, for GPG, one
// of the key's identities). Results use the platform's reasons: valid,
// unsigned, unknown_key, invalid, bad_email, unverified_email,
// expired_key, unknown_signature_type, malformed_signature. It reads the
// keys tables (the keys area writes them) and the users' addresses. A
// signature by a server's web-flow key (gitsign; TrustWebFlowKey) is
// valid whoever the committer is, as the platform's web-flow commits.
package sigverify

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	pgperrors "github.com/ProtonMail/go-crypto/openpgp/errors"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	"golang.org/x/crypto/ssh"

	"forgeapi/internal/accounts"
	"forgeapi/internal/store"
)

// Result is a signature's verification.
type Result struct {
	Verified bool
	Reason   string
}

// The platform's reasons this package gives.
const (
	Valid                = "valid"
	Unsigned             = "unsigned"
	UnknownKey           = "unknown_key"
	Invalid              = "invalid"
	BadEmail             = "bad_email"
	UnverifiedEmail      = "unverified_email"
	ExpiredKey           = "expired_key"
	UnknownSignatureType = "unknown_signature_type"
	MalformedSignature   = "malformed_signature"
)

// Verify checks signature (a commit's gpgsig header, or an annotated
// tag's trailing signature) over payload (the object without it), made
// by the committer or tagger of email.
func Verify(ctx context.Context, q store.Q, signature, payload, email string) (Result, error) {
	switch {
	case signature == "":
		return Result{Reason: Unsigned}, nil
	case strings.HasPrefix(signature, "-----BEGIN SSH SIGNATURE-----"):
		return verifySSH(ctx, q, signature, payload, email)
	case strings.HasPrefix(signature, "-----BEGIN PGP SIGNATURE-----"):
		return verifyPGP(ctx, q, signature, payload, email)
	}
	return Result{Reason: UnknownSignatureType}, nil
}

// sshsig is the SSHSIG blob (OpenSSH's PROTOCOL.sshsig) after its magic.
type sshsig struct {
	Version   uint32
	PublicKey []byte
	Namespace string
	Reserved  string
	Hash      string
	Signature []byte
}

const sshsigMagic = "SSHSIG"

func verifySSH(ctx context.Context, q store.Q, signature, payload, email string) (Result, error) {
	sig, pub, err := parseSSH(signature)
	if err != nil {
		return Result{Reason: MalformedSignature}, nil
	}
	var userID int64
	err = store.Normalize(q.QueryRowContext(ctx, `SELECT user_id FROM ssh_signing_keys WHERE fingerprint = $1`,
		ssh.FingerprintSHA256(pub)).Scan(&userID))
	if errors.Is(err, store.ErrNotFound) {
		return verifyWebFlow(ctx, q, sig, pub, payload)
	}
	if err != nil {
		return Result{}, err
	}
	if !checkSSH(sig, pub, payload) {
		return Result{Reason: Invalid}, nil
	}
	return emailOf(ctx, q, userID, email)
}

// TrustWebFlowKey records pub as a server's web-flow key: the commits it
// signs verify as valid. Recording a key again changes nothing.
func TrustWebFlowKey(ctx context.Context, q store.Q, pub ssh.PublicKey, now time.Time) error {
	_, err := q.ExecContext(ctx, `INSERT INTO web_flow_keys (fingerprint, key_text, created_at) VALUES ($1, $2, $3)
		ON CONFLICT (fingerprint) DO NOTHING`, ssh.FingerprintSHA256(pub), strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pub))), now)
	return err
}

// verifyWebFlow is the result of an SSH signature by a key no user has:
// valid when a server's web-flow key made it, unknown_key otherwise.
func verifyWebFlow(ctx context.Context, q store.Q, sig *sshsig, pub ssh.PublicKey, payload string) (Result, error) {
	var one int
	err := store.Normalize(q.QueryRowContext(ctx, `SELECT 1 FROM web_flow_keys WHERE fingerprint = $1`,
		ssh.FingerprintSHA256(pub)).Scan(&one))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return Result{Reason: UnknownKey}, nil
	case err != nil:
		return Result{}, err
	case !checkSSH(sig, pub, payload):
		return Result{Reason: Invalid}, nil
	}
	return Result{Verified: true, Reason: Valid}, nil
}

// parseSSH reads an armored SSH signature of git's namespace.
func parseSSH(armored string) (*sshsig, ssh.PublicKey, error) {
	body := strings.TrimSpace(armored)
	body = strings.TrimPrefix(body, "-----BEGIN SSH SIGNATURE-----")
	body = strings.TrimSuffix(body, "-----END SSH SIGNATURE-----")
	raw, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(body), ""))
	if err != nil || !bytes.HasPrefix(raw, []byte(sshsigMagic)) {
		return nil, nil, errors.New("sigverify: not an SSH signature")
	}
	var sig sshsig
	if err := ssh.Unmarshal(raw[len(sshsigMagic):], &sig); err != nil || sig.Version != 1 || sig.Namespace != "git" {
		return nil, nil, errors.New("sigverify: not a git SSH signature")
	}
	pub, err := ssh.ParsePublicKey(sig.PublicKey)
	if err != nil {
		return nil, nil, err
	}
	return &sig, pub, nil
}

// checkSSH reports whether sig signs payload with pub.
func checkSSH(sig *sshsig, pub ssh.PublicKey, payload string) bool {
	var digest []byte
	switch sig.Hash {
	case "sha256":
		d := sha256.Sum256([]byte(payload))
		digest = d[:]
	case "sha512":
		d := sha512.Sum512([]byte(payload))
		digest = d[:]
	default:
		return false
	}
	signed := append([]byte(sshsigMagic), ssh.Marshal(struct {
		Namespace, Reserved, Hash string
		Digest                    []byte
	}{sig.Namespace, sig.Reserved, sig.Hash, digest})...)
	var s ssh.Signature
	if err := ssh.Unmarshal(sig.Signature, &s); err != nil {
		return false
	}
	return pub.Verify(signed, &s) == nil
}

// emailOf is the result of a good signature by the user's key: valid
// when email is one of the user's addresses.
func emailOf(ctx context.Context, q store.Q, userID int64, email string) (Result, error) {
	ok, err := accounts.HasEmail(ctx, q, userID, email)
	if err != nil || !ok {
		return Result{Reason: BadEmail}, err
	}
	return Result{Verified: true, Reason: Valid}, nil
}

func verifyPGP(ctx context.Context, q store.Q, signature, payload, email string) (Result, error) {
	issuer, err := issuerOf(signature)
	if err != nil { // no key to check it against can be named
		return Result{Reason: UnknownKey}, nil
	}
	var userID int64
	var raw, emails string
	err = store.Normalize(q.QueryRowContext(ctx, `SELECT p.user_id, p.raw_key, p.emails FROM gpg_keys k
		JOIN gpg_keys p ON p.id = COALESCE(k.primary_key_id, k.id) WHERE k.key_id = $1`, issuer).Scan(&userID, &raw, &emails))
	if errors.Is(err, store.ErrNotFound) {
		return Result{Reason: UnknownKey}, nil
	}
	if err != nil {
		return Result{}, err
	}
	ring, err := openpgp.ReadArmoredKeyRing(strings.NewReader(raw))
	if err != nil {
		return Result{Reason: UnknownKey}, nil
	}
	_, err = openpgp.CheckArmoredDetachedSignature(ring, strings.NewReader(payload), strings.NewReader(signature), nil)
	switch {
	case errors.Is(err, pgperrors.ErrKeyExpired) || errors.Is(err, pgperrors.ErrSignatureExpired):
		return Result{Reason: ExpiredKey}, nil
	case err != nil:
		return Result{Reason: Invalid}, nil
	}
	if !containsFold(strings.Split(emails, "\n"), email) {
		return Result{Reason: BadEmail}, nil
	}
	res, err := emailOf(ctx, q, userID, email)
	if res.Reason == BadEmail {
		res.Reason = UnverifiedEmail // the key's address, not (yet) the user's
	}
	return res, err
}

// issuerOf is the key id (upper-case hex) of the key that made an
// armored OpenPGP signature.
func issuerOf(armored string) (string, error) {
	block, err := armor.Decode(strings.NewReader(armored))
	if err != nil {
		return "", err
	}
	p, err := packet.Read(block.Body)
	if err != nil {
		return "", err
	}
	sig, ok := p.(*packet.Signature)
	if !ok || sig.IssuerKeyId == nil {
		return "", errors.New("sigverify: no issuer")
	}
	return fmt.Sprintf("%016X", *sig.IssuerKeyId), nil
}

func containsFold(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}
