package e2e_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// armoredKey makes an OpenPGP key (ed25519, with its encryption subkey)
// for email and returns it armored, and its key id.
func armoredKey(t *testing.T, email string) (string, string) {
	t.Helper()
	e, err := openpgp.NewEntity("Octo", "", email, &packet.Config{Algorithm: packet.PubKeyAlgoEdDSA})
	apptest.Must(t, "generate a GPG key", err)
	var buf bytes.Buffer
	w, err := armor.Encode(&buf, openpgp.PublicKeyType, nil)
	apptest.Must(t, "armor", err)
	apptest.Must(t, "serialize", e.Serialize(w))
	apptest.Must(t, "close armor", w.Close())
	return buf.String(), e.PrimaryKey.KeyIdString()
}

// TestGPGKeys adds a GPG key with go-github as a signing setup does:
// key id, subkey, flags, emails (verified when the user's); lists and
// reads it, serves the .gpg file; refuses garbage, private keys and a
// key id in use; deletes it.
func TestGPGKeys(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo, bob := env.User("octo"), env.User("bob")
	c := env.Client(env.Token(octo, "admin:gpg_key", "user"))
	_, _, err := c.Users.AddEmails(ctx, []string{"octo@example.com"})
	apptest.Must(t, "add an email", err)
	armored, keyID := armoredKey(t, "octo@example.com")
	var key *github.GPGKey

	apptest.Step(t, "adds a key with its subkey", func(t *testing.T) {
		var resp *github.Response
		key, resp, err = c.Users.CreateGPGKey(ctx, armored)
		apptest.Must(t, "create", err)
		if resp.StatusCode != http.StatusCreated || key.GetKeyID() != keyID || !key.GetCanSign() || !key.GetCanCertify() ||
			len(key.Emails) != 1 || !key.Emails[0].GetVerified() || len(key.Subkeys) != 1 ||
			!key.Subkeys[0].GetCanEncryptComms() || key.Subkeys[0].GetPrimaryKeyID() != key.GetID() {
			t.Fatalf("created %d %+v", resp.StatusCode, key)
		}
		got, _, err := c.Users.GetGPGKey(ctx, key.GetID())
		apptest.Must(t, "get", err)
		if got.GetKeyID() != keyID || got.GetRawKey() == "" {
			t.Fatalf("got %+v", got)
		}
	})
	apptest.Step(t, "refuses garbage, private keys and a key in use", func(t *testing.T) {
		for _, tc := range []struct{ name, key string }{
			{"garbage", "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nnope\n-----END PGP PUBLIC KEY BLOCK-----"},
			{"a private key", "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nx\n-----END PGP PRIVATE KEY BLOCK-----"},
			{"a key in use", armored},
		} {
			_, resp, _ := env.Client(env.Token(bob, "write:gpg_key")).Users.CreateGPGKey(ctx, tc.key)
			if apptest.ResponseStatus(resp) != http.StatusUnprocessableEntity {
				t.Fatalf("%s: %d", tc.name, apptest.ResponseStatus(resp))
			}
		}
		_, resp, _ := env.Client(env.Token(octo, "read:gpg_key")).Users.CreateGPGKey(ctx, armored)
		if apptest.ResponseStatus(resp) != http.StatusForbidden {
			t.Fatalf("read:gpg_key adds a key: %d", apptest.ResponseStatus(resp))
		}
	})
	apptest.Step(t, "anyone lists them; the .gpg file", func(t *testing.T) {
		list, _, err := env.Client("").Users.ListGPGKeys(ctx, "octo", nil)
		apptest.Must(t, "list as anyone", err)
		if len(list) != 1 || list[0].GetKeyID() != keyID {
			t.Fatalf("list %+v", list)
		}
		resp, err := env.HTTPClient().Get(env.URL + "/octo.gpg")
		apptest.Must(t, ".gpg", err)
		if b := readAll(t, resp); resp.StatusCode != http.StatusOK || !strings.HasPrefix(b, "-----BEGIN PGP PUBLIC KEY BLOCK-----") {
			t.Fatalf(".gpg: %d %q", resp.StatusCode, b)
		}
	})
	apptest.Step(t, "deletes it with its subkey", func(t *testing.T) {
		_, err := c.Users.DeleteGPGKey(ctx, key.GetID())
		apptest.Must(t, "delete", err)
		list, _, err := c.Users.ListGPGKeys(ctx, "", nil)
		apptest.Must(t, "list mine", err)
		if len(list) != 0 {
			t.Fatalf("after delete: %+v", list)
		}
		_, _, err = env.Client(env.Token(bob, "write:gpg_key")).Users.CreateGPGKey(ctx, armored)
		apptest.Must(t, "bob adds the freed key", err)
	})
}
