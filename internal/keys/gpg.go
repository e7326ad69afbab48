package keys

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/packet"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/store"
)

// GPGKey is a user's OpenPGP public key (a primary key), or one of its
// subkeys (PrimaryKeyID set).
type GPGKey struct {
	ID           int64
	UserID       int64
	PrimaryKeyID int64
	Name         string
	// KeyID is the key's 64-bit id in upper-case hex ("3262EFF25BA0D270").
	KeyID string
	// PublicKey is the key's packet, base64.
	PublicKey string
	// RawKey is the armored key the user sent (primary keys only).
	RawKey string
	// Emails are the addresses of the primary key's identities.
	Emails                                                  []string
	CanSign, CanEncryptComms, CanEncryptStorage, CanCertify bool
	Revoked                                                 bool
	KeyCreatedAt, ExpiresAt, CreatedAt                      time.Time
	Subkeys                                                 []*GPGKey
}

// gpgInvalid is the 422 of a key that does not parse.
func gpgInvalid() error {
	return apierr.Custom("GpgKey", "armored_public_key",
		"key is invalid. It must be one ASCII-armored OpenPGP public key (gpg --armor --export KEY_ID)")
}

// ParseGPG reads one armored OpenPGP public key (no private key) into
// the GPGKey and subkeys it stores.
func ParseGPG(armored string) (*GPGKey, error) {
	if strings.Contains(armored, "PRIVATE KEY BLOCK") {
		return nil, gpgInvalid()
	}
	list, err := openpgp.ReadArmoredKeyRing(strings.NewReader(armored))
	if err != nil || len(list) != 1 || list[0].PrivateKey != nil {
		return nil, gpgInvalid()
	}
	e := list[0]
	k, err := gpgPacket(e.PrimaryKey, primarySig(e))
	if err != nil {
		return nil, gpgInvalid()
	}
	k.RawKey, k.Revoked = strings.TrimSpace(armored)+"\n", len(e.Revocations) > 0
	for _, id := range e.Identities {
		if id.UserId != nil && id.UserId.Email != "" {
			k.Emails = append(k.Emails, id.UserId.Email)
		}
	}
	for _, sub := range e.Subkeys {
		s, err := gpgPacket(sub.PublicKey, sub.Sig)
		if err != nil {
			return nil, gpgInvalid()
		}
		s.Revoked = k.Revoked || len(sub.Revocations) > 0
		k.Subkeys = append(k.Subkeys, s)
	}
	return k, nil
}

// primarySig is the signature that holds the primary key's flags and
// lifetime: its primary identity's self-signature, else its direct-key
// signature.
func primarySig(e *openpgp.Entity) *packet.Signature {
	if id := e.PrimaryIdentity(); id != nil && id.SelfSignature != nil {
		return id.SelfSignature
	}
	return e.SelfSignature
}

// gpgPacket describes one key packet with the flags and lifetime of its
// signature (nil: none known).
func gpgPacket(pk *packet.PublicKey, sig *packet.Signature) (*GPGKey, error) {
	var buf bytes.Buffer
	if err := pk.Serialize(&buf); err != nil {
		return nil, err
	}
	k := &GPGKey{KeyID: pk.KeyIdString(), PublicKey: base64.StdEncoding.EncodeToString(buf.Bytes()),
		KeyCreatedAt: pk.CreationTime.UTC()}
	if sig != nil && sig.FlagsValid {
		k.CanSign, k.CanCertify = sig.FlagSign, sig.FlagCertify
		k.CanEncryptComms, k.CanEncryptStorage = sig.FlagEncryptCommunications, sig.FlagEncryptStorage
	}
	if sig != nil && sig.KeyLifetimeSecs != nil && *sig.KeyLifetimeSecs > 0 {
		k.ExpiresAt = k.KeyCreatedAt.Add(time.Duration(*sig.KeyLifetimeSecs) * time.Second)
	}
	return k, nil
}

// gpgColumns are the columns scanGPG reads, in its order.
const gpgColumns = `id, user_id, COALESCE(primary_key_id, 0), COALESCE(name, ''), key_id, public_key, COALESCE(raw_key, ''),
	emails, can_sign, can_encrypt_comms, can_encrypt_storage, can_certify, revoked, key_created_at, expires_at, created_at`

func scanGPG(rows *sql.Rows) ([]*GPGKey, error) {
	defer rows.Close()
	var out []*GPGKey
	for rows.Next() {
		k := &GPGKey{}
		var emails string
		var expires sql.NullTime
		if err := rows.Scan(&k.ID, &k.UserID, &k.PrimaryKeyID, &k.Name, &k.KeyID, &k.PublicKey, &k.RawKey, &emails,
			&k.CanSign, &k.CanEncryptComms, &k.CanEncryptStorage, &k.CanCertify, &k.Revoked, &k.KeyCreatedAt, &expires,
			&k.CreatedAt); err != nil {
			return nil, err
		}
		if emails != "" {
			k.Emails = strings.Split(emails, "\n")
		}
		if expires.Valid {
			k.ExpiresAt = expires.Time.UTC()
		}
		k.KeyCreatedAt, k.CreatedAt = k.KeyCreatedAt.UTC(), k.CreatedAt.UTC()
		out = append(out, k)
	}
	return out, rows.Err()
}

// queryGPG returns the primary keys a WHERE clause selects, with their
// subkeys (one more query).
func (s *Service) queryGPG(ctx context.Context, where string, args ...any) ([]*GPGKey, error) {
	rows, err := s.DB.QueryContext(ctx, `SELECT `+gpgColumns+` FROM gpg_keys WHERE primary_key_id IS NULL AND `+where, args...)
	if err != nil {
		return nil, err
	}
	list, err := scanGPG(rows)
	if err != nil || len(list) == 0 {
		return list, err
	}
	byID := map[int64]*GPGKey{}
	ids := make([]any, 0, len(list))
	marks := make([]string, 0, len(list))
	for i, k := range list {
		byID[k.ID] = k
		ids = append(ids, k.ID)
		marks = append(marks, "$"+strconv.Itoa(i+1))
	}
	rows, err = s.DB.QueryContext(ctx, `SELECT `+gpgColumns+` FROM gpg_keys WHERE primary_key_id IN (`+
		strings.Join(marks, ", ")+`) ORDER BY id`, ids...)
	if err != nil {
		return nil, err
	}
	subs, err := scanGPG(rows)
	for _, sub := range subs {
		byID[sub.PrimaryKeyID].Subkeys = append(byID[sub.PrimaryKeyID].Subkeys, sub)
	}
	return list, err
}

// ListGPG returns a page of the user's GPG keys, oldest first.
func (s *Service) ListGPG(ctx context.Context, userID int64, page httpapi.Page) ([]*GPGKey, bool, error) {
	list, err := s.queryGPG(ctx, `user_id = $1 ORDER BY id LIMIT $2 OFFSET $3`, userID, page.Limit()+1, page.Offset())
	if err != nil {
		return nil, false, err
	}
	more := len(list) > page.Limit()
	if more {
		list = list[:page.Limit()]
	}
	return list, more, nil
}

// AllGPG returns every GPG key of the user, oldest first.
func (s *Service) AllGPG(ctx context.Context, userID int64) ([]*GPGKey, error) {
	return s.queryGPG(ctx, `user_id = $1 ORDER BY id`, userID)
}

// GetGPG returns the user's GPG key id.
func (s *Service) GetGPG(ctx context.Context, userID, id int64) (*GPGKey, error) {
	list, err := s.queryGPG(ctx, `user_id = $1 AND id = $2`, userID, id)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, store.ErrNotFound
	}
	return list[0], nil
}

// CreateGPG adds an armored public key, named name, to the user's keys,
// with its subkeys; a key id in use is the platform's 422.
func (s *Service) CreateGPG(ctx context.Context, user *accounts.Account, name, armored string) (*GPGKey, error) {
	k, err := ParseGPG(armored)
	if err != nil {
		return nil, err
	}
	k.Name, k.UserID, k.CreatedAt = name, user.ID, store.Now()
	err = s.DB.Tx(ctx, func(tx *store.Tx) error {
		if err := insertGPG(ctx, tx, k); err != nil {
			return err
		}
		for _, sub := range k.Subkeys {
			sub.UserID, sub.PrimaryKeyID, sub.CreatedAt = user.ID, k.ID, k.CreatedAt
			if err := insertGPG(ctx, tx, sub); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return k, nil
}

func insertGPG(ctx context.Context, q store.Q, k *GPGKey) error {
	var primary, name, raw, expires any
	if k.PrimaryKeyID != 0 {
		primary = k.PrimaryKeyID
	}
	if k.Name != "" {
		name = k.Name
	}
	if k.RawKey != "" {
		raw = k.RawKey
	}
	if !k.ExpiresAt.IsZero() {
		expires = k.ExpiresAt
	}
	err := q.QueryRowContext(ctx, `INSERT INTO gpg_keys (user_id, primary_key_id, name, key_id, public_key, raw_key, emails,
		can_sign, can_encrypt_comms, can_encrypt_storage, can_certify, revoked, key_created_at, expires_at, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) RETURNING id`,
		k.UserID, primary, name, k.KeyID, k.PublicKey, raw, strings.Join(k.Emails, "\n"), k.CanSign, k.CanEncryptComms,
		k.CanEncryptStorage, k.CanCertify, k.Revoked, k.KeyCreatedAt, expires, k.CreatedAt).Scan(&k.ID)
	if err = store.Normalize(err); errors.Is(err, store.ErrConflict) {
		return apierr.Custom("GpgKey", "key_id", "key_id already exists")
	}
	return err
}

// DeleteGPG removes the user's GPG key id and its subkeys.
func (s *Service) DeleteGPG(ctx context.Context, userID, id int64) error {
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM gpg_keys WHERE primary_key_id = $1 AND user_id = $2`, id, userID); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM gpg_keys WHERE id = $1 AND user_id = $2 AND primary_key_id IS NULL`, id, userID)
		return deleted(res, err)
	})
}
