package keys

import (
	"strconv"

	"forgeapi/internal/repos"
	"forgeapi/internal/wire"
)

// keyJSON is the platform's key object (a user's key).
type keyJSON struct {
	Key       string     `json:"key"`
	ID        int64      `json:"id"`
	URL       string     `json:"url"`
	Title     string     `json:"title"`
	CreatedAt wire.Time  `json:"created_at"`
	Verified  bool       `json:"verified"`
	ReadOnly  bool       `json:"read_only"`
	LastUsed  *wire.Time `json:"last_used"`
}

// simpleJSON is the platform's key-simple object (another user's key).
type simpleJSON struct {
	ID  int64  `json:"id"`
	Key string `json:"key"`
}

// deployKeyJSON is the platform's deploy-key object.
type deployKeyJSON struct {
	ID        int64      `json:"id"`
	Key       string     `json:"key"`
	URL       string     `json:"url"`
	Title     string     `json:"title"`
	Verified  bool       `json:"verified"`
	CreatedAt wire.Time  `json:"created_at"`
	ReadOnly  bool       `json:"read_only"`
	AddedBy   *string    `json:"added_by"`
	LastUsed  *wire.Time `json:"last_used"`
	Enabled   bool       `json:"enabled"`
}

// userJSON renders a user's key; base is the API's base URL.
func userJSON(base string, k *Key) keyJSON {
	return keyJSON{Key: k.Text, ID: k.ID, URL: base + "/user/keys/" + strconv.FormatInt(k.ID, 10), Title: k.Title,
		CreatedAt: wire.T(k.CreatedAt), Verified: true, ReadOnly: k.ReadOnly, LastUsed: lastUsed(k)}
}

// deployJSON renders a deploy key of repo.
func deployJSON(base string, repo *repos.Repository, k *Key) deployKeyJSON {
	j := deployKeyJSON{ID: k.ID, Key: k.Text, URL: base + "/repos/" + repo.FullName() + "/keys/" + strconv.FormatInt(k.ID, 10),
		Title: k.Title, Verified: true, CreatedAt: wire.T(k.CreatedAt), ReadOnly: k.ReadOnly, LastUsed: lastUsed(k), Enabled: true}
	if k.AddedBy != "" {
		j.AddedBy = &k.AddedBy
	}
	return j
}

func lastUsed(k *Key) *wire.Time {
	if k.LastUsed.IsZero() {
		return nil
	}
	t := wire.T(k.LastUsed)
	return &t
}

// gpgEmailJSON is one address of a GPG key.
type gpgEmailJSON struct {
	Email    string `json:"email"`
	Verified bool   `json:"verified"`
}

// gpgKeyJSON is the platform's gpg-key object, and one of its subkeys.
type gpgKeyJSON struct {
	ID                int64          `json:"id"`
	Name              *string        `json:"name,omitempty"`
	PrimaryKeyID      *int64         `json:"primary_key_id"`
	KeyID             string         `json:"key_id"`
	PublicKey         string         `json:"public_key"`
	Emails            []gpgEmailJSON `json:"emails"`
	Subkeys           []gpgKeyJSON   `json:"subkeys"`
	CanSign           bool           `json:"can_sign"`
	CanEncryptComms   bool           `json:"can_encrypt_comms"`
	CanEncryptStorage bool           `json:"can_encrypt_storage"`
	CanCertify        bool           `json:"can_certify"`
	CreatedAt         wire.Time      `json:"created_at"`
	ExpiresAt         *wire.Time     `json:"expires_at"`
	Revoked           bool           `json:"revoked"`
	RawKey            *string        `json:"raw_key"`
}

// gpgJSON renders a GPG key; verified says which of its addresses are
// its user's.
func gpgJSON(k *GPGKey, verified func(string) bool) gpgKeyJSON {
	j := gpgKeyJSON{ID: k.ID, KeyID: k.KeyID, PublicKey: k.PublicKey, Emails: []gpgEmailJSON{}, Subkeys: []gpgKeyJSON{},
		CanSign: k.CanSign, CanEncryptComms: k.CanEncryptComms, CanEncryptStorage: k.CanEncryptStorage,
		CanCertify: k.CanCertify, CreatedAt: wire.T(k.KeyCreatedAt), Revoked: k.Revoked}
	if k.PrimaryKeyID != 0 {
		j.PrimaryKeyID = &k.PrimaryKeyID
	} else {
		if k.Name != "" {
			name := k.Name
			j.Name = &name
		}
		raw := k.RawKey
		j.RawKey = &raw
	}
	if !k.ExpiresAt.IsZero() {
		t := wire.T(k.ExpiresAt)
		j.ExpiresAt = &t
	}
	for _, e := range k.Emails {
		j.Emails = append(j.Emails, gpgEmailJSON{Email: e, Verified: verified(e)})
	}
	for _, s := range k.Subkeys {
		j.Subkeys = append(j.Subkeys, gpgJSON(s, verified))
	}
	return j
}
