package e2e_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"io"
	"math/big"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"
	"golang.org/x/crypto/ssh"

	"forgeapi/internal/apptest"
	"forgeapi/internal/webhooks"
)

// newKey returns a fresh ed25519 public key in authorized_keys format,
// with comment.
func newKey(t *testing.T, comment string) (text, fingerprint string) {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	apptest.Must(t, "generate a key", err)
	k, err := ssh.NewPublicKey(pub)
	apptest.Must(t, "ssh key", err)
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(k))) + " " + comment, ssh.FingerprintSHA256(k)
}

// weakRSA is an RSA public key of 768 bits (its modulus need not be a
// real one to be refused).
func weakRSA(t *testing.T) string {
	n := new(big.Int).Lsh(big.NewInt(1), 767)
	n.Add(n, big.NewInt(1))
	k, err := ssh.NewPublicKey(&rsa.PublicKey{N: n, E: 65537})
	apptest.Must(t, "weak key", err)
	return string(ssh.MarshalAuthorizedKey(k))
}

// TestUserKeys adds, lists, reads and deletes a user's SSH keys with
// go-github as a laptop setup script does; lists them as anyone, and as
// the .keys file; refuses malformed, weak and duplicate keys, and tokens
// without the public_key scopes or the Git SSH keys permission.
func TestUserKeys(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo, bob := env.User("octo"), env.User("bob")
	c := env.Client(env.Token(octo, "admin:public_key"))
	text, _ := newKey(t, "octo@laptop")
	var laptop *github.Key

	apptest.Step(t, "adds a key, titled by its comment", func(t *testing.T) {
		k, resp, err := c.Users.CreateKey(ctx, github.CreateUserKeyRequest{Key: text})
		apptest.Must(t, "create", err)
		if resp.StatusCode != http.StatusCreated || k.GetTitle() != "octo@laptop" || !strings.HasPrefix(k.GetKey(), "ssh-ed25519 ") ||
			strings.Contains(k.GetKey(), "laptop") || !k.GetVerified() || resp.Header.Get("Location") != k.GetURL() {
			t.Fatalf("created %d %+v", resp.StatusCode, k)
		}
		laptop = k
		got, _, err := c.Users.GetKey(ctx, k.GetID())
		apptest.Must(t, "get", err)
		if got.GetKey() != k.GetKey() {
			t.Fatalf("got %+v", got)
		}
		second, _ := newKey(t, "")
		_, _, err = c.Users.CreateKey(ctx, github.CreateUserKeyRequest{Title: github.Ptr("desktop"), Key: second})
		apptest.Must(t, "create a second", err)
	})
	apptest.Step(t, "refuses malformed, weak and duplicate keys", func(t *testing.T) {
		for _, tc := range []struct{ name, key, want string }{
			{"garbage", "ssh-ed25519 notbase64", "key is invalid"},
			{"a private key", "-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n-----END OPENSSH PRIVATE KEY-----", "key is invalid"},
			{"RSA under 1024 bits", weakRSA(t), "key is weak"},
			{"in use by octo", text, "key is already in use"},
		} {
			for _, client := range []struct {
				who   string
				token string
			}{{"octo", env.Token(octo, "write:public_key")}, {"bob", env.Token(bob, "write:public_key")}} {
				body := `{"title":"x","key":` + quote(tc.key) + `}`
				resp, b := env.DoJSON("POST", "/user/keys", client.token, body)
				e := apptest.WantError(t, tc.name, resp, b, http.StatusUnprocessableEntity)
				if len(e.Errors) != 1 || e.Errors[0].Field != "key" || !strings.HasPrefix(e.Errors[0].Message, tc.want) {
					t.Fatalf("%s by %s: %s", tc.name, client.who, b)
				}
			}
		}
	})
	apptest.Step(t, "anyone lists them; the .keys file", func(t *testing.T) {
		list, _, err := env.Client("").Users.ListKeys(ctx, "octo", nil)
		apptest.Must(t, "list as anyone", err)
		if len(list) != 2 || list[0].GetID() != laptop.GetID() || list[0].GetKey() != laptop.GetKey() {
			t.Fatalf("public list %+v", list)
		}
		mine, _, err := c.Users.ListKeys(ctx, "", &github.ListOptions{PerPage: 1})
		apptest.Must(t, "list mine", err)
		if len(mine) != 1 || mine[0].GetTitle() != "octo@laptop" {
			t.Fatalf("my first page %+v", mine)
		}
		resp, err := env.HTTPClient().Get(env.URL + "/octo.keys")
		apptest.Must(t, "the .keys file", err)
		b := readAll(t, resp)
		lines := strings.Split(strings.TrimSpace(b), "\n")
		if resp.StatusCode != http.StatusOK || len(lines) != 2 || lines[0] != laptop.GetKey() {
			t.Fatalf(".keys: %d %q", resp.StatusCode, b)
		}
		if resp, _ := env.HTTPClient().Get(env.URL + "/nobody.keys"); resp.StatusCode != http.StatusNotFound {
			t.Fatalf("an unknown user's .keys: %d", resp.StatusCode)
		}
	})
	apptest.Step(t, "scopes and permissions", func(t *testing.T) {
		_, resp, _ := env.Client(env.Token(octo, "read:public_key")).Users.CreateKey(ctx, github.CreateUserKeyRequest{Key: text})
		if apptest.ResponseStatus(resp) != http.StatusForbidden {
			t.Fatalf("read:public_key adds a key: %d", apptest.ResponseStatus(resp))
		}
		_, resp, _ = env.Client(env.Token(octo, "repo")).Users.ListKeys(ctx, "", nil)
		if apptest.ResponseStatus(resp) != http.StatusForbidden {
			t.Fatalf("repo lists my keys: %d", apptest.ResponseStatus(resp))
		}
		list, _, err := env.Client(env.FineGrainedToken(octo, octo, nil, "git_ssh_keys:read")).Users.ListKeys(ctx, "", nil)
		apptest.Must(t, "a fine-grained token with Git SSH keys read", err)
		if len(list) != 2 {
			t.Fatalf("fine-grained list %d", len(list))
		}
		_, resp, _ = env.Client("").Users.ListKeys(ctx, "", nil)
		if apptest.ResponseStatus(resp) != http.StatusUnauthorized {
			t.Fatalf("anonymous /user/keys: %d", apptest.ResponseStatus(resp))
		}
	})
	apptest.Step(t, "deletes; another's key is a 404", func(t *testing.T) {
		resp, _ := env.Client(env.Token(bob, "admin:public_key")).Users.DeleteKey(ctx, laptop.GetID())
		if apptest.ResponseStatus(resp) != http.StatusNotFound {
			t.Fatalf("bob deletes octo's key: %d", apptest.ResponseStatus(resp))
		}
		_, err := c.Users.DeleteKey(ctx, laptop.GetID())
		apptest.Must(t, "delete", err)
		_, resp, _ = c.Users.GetKey(ctx, laptop.GetID())
		if apptest.ResponseStatus(resp) != http.StatusNotFound {
			t.Fatalf("a deleted key: %d", apptest.ResponseStatus(resp))
		}
		// Free again: bob may add it now.
		_, _, err = env.Client(env.Token(bob, "write:public_key")).Users.CreateKey(ctx, github.CreateUserKeyRequest{Key: text})
		apptest.Must(t, "bob adds the freed key", err)
	})
}

// TestDeployKeys adds read-only and read-write deploy keys to an
// organization's repository as its admin, with go-github; the hook gets
// deploy_key created and deleted, the audit log public_key.create; a
// member who only writes, and a user key's duplicate, are refused.
func TestDeployKeys(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	ctx := apptest.Ctx()
	boss, dev := env.User("boss"), env.User("dev")
	env.Repo(env.Org("acme", boss, dev), "app")
	c := env.Client(env.Token(boss, "repo", "admin:repo_hook", "read:audit_log", "admin:public_key"))
	rc := apptest.NewReceiver(t, "s")
	_, _, err := c.Repositories.CreateHook(ctx, "acme", "app", &github.Hook{Events: []string{"deploy_key"},
		Config: &github.HookConfig{URL: github.Ptr(rc.URL), ContentType: github.Ptr("json"), Secret: github.Ptr("s")}})
	apptest.Must(t, "hook", err)
	ro, _ := newKey(t, "ci")
	rw, _ := newKey(t, "release")
	var readOnly, readWrite *github.Key

	apptest.Step(t, "adds a read-only key by default and a read-write one", func(t *testing.T) {
		var resp *github.Response
		readOnly, resp, err = c.Repositories.CreateKey(ctx, "acme", "app", github.CreateDeployKeyRequest{Title: github.Ptr("CI"), Key: ro})
		apptest.Must(t, "create read-only", err)
		if resp.StatusCode != http.StatusCreated || !readOnly.GetReadOnly() || readOnly.GetAddedBy() != "boss" ||
			!strings.HasSuffix(readOnly.GetURL(), "/repos/acme/app/keys/"+itoa(readOnly.GetID())) {
			t.Fatalf("read-only %+v", readOnly)
		}
		readWrite, _, err = c.Repositories.CreateKey(ctx, "acme", "app", github.CreateDeployKeyRequest{Title: github.Ptr("Release"), Key: rw, ReadOnly: github.Ptr(false)})
		apptest.Must(t, "create read-write", err)
		if readWrite.GetReadOnly() {
			t.Fatalf("read-write %+v", readWrite)
		}
		list, _, err := c.Repositories.ListKeys(ctx, "acme", "app", nil)
		apptest.Must(t, "list", err)
		if len(list) != 2 || list[1].GetTitle() != "Release" {
			t.Fatalf("list %+v", list)
		}
		got, _, err := c.Repositories.GetKey(ctx, "acme", "app", readOnly.GetID())
		apptest.Must(t, "get", err)
		if got.GetKey() != readOnly.GetKey() {
			t.Fatalf("got %+v", got)
		}
	})
	apptest.Step(t, "refuses a key in use and non-admins", func(t *testing.T) {
		_, resp, _ := c.Users.CreateKey(ctx, github.CreateUserKeyRequest{Key: ro})
		if apptest.ResponseStatus(resp) != http.StatusUnprocessableEntity {
			t.Fatalf("a deploy key as a user key: %d", apptest.ResponseStatus(resp))
		}
		other, _ := newKey(t, "")
		_, resp, _ = env.Client(env.Token(dev, "repo")).Repositories.CreateKey(ctx, "acme", "app", github.CreateDeployKeyRequest{Key: other})
		if s := apptest.ResponseStatus(resp); s != http.StatusForbidden && s != http.StatusNotFound {
			t.Fatalf("a member adds a deploy key: %d", s)
		}
		raw, body := env.DoJSON("POST", "/repos/acme/app/keys", env.Token(boss, "repo"), `{"title":"x"}`)
		apptest.WantError(t, "no key", raw, body, http.StatusUnprocessableEntity)
	})
	apptest.Step(t, "deletes; hooks and the audit log saw it", func(t *testing.T) {
		_, err := c.Repositories.DeleteKey(ctx, "acme", "app", readOnly.GetID())
		apptest.Must(t, "delete", err)
		_, resp, _ := c.Repositories.GetKey(ctx, "acme", "app", readOnly.GetID())
		if apptest.ResponseStatus(resp) != http.StatusNotFound {
			t.Fatalf("deleted: %d", apptest.ResponseStatus(resp))
		}
		rc.WaitFor(t, func(d apptest.Delivery) string {
			e, ok := d.Parsed.(*github.DeployKeyEvent)
			if !ok {
				return ""
			}
			return e.GetAction() + " " + e.GetKey().GetTitle() + " " + e.GetSender().GetLogin()
		}, "created CI boss", "created Release boss", "deleted CI boss")
		log, _, err := c.Organizations.GetAuditLog(ctx, "acme", &github.GetAuditLogOptions{Phrase: github.Ptr("action:public_key")})
		apptest.Must(t, "audit log", err)
		actions := map[string]int{}
		for _, e := range log {
			actions[e.GetAction()]++
		}
		if actions["public_key.create"] != 2 || actions["public_key.delete"] != 1 {
			t.Fatalf("audit log %v", actions)
		}
	})
}

func quote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	var b strings.Builder
	_, err := io.Copy(&b, resp.Body)
	apptest.Must(t, "read", err)
	return b.String()
}

// TestSSHSigningKeys adds an SSH key as a signing key (the same key may
// authenticate too), lists it as anyone, refuses a duplicate signing key
// and deletes it.
func TestSSHSigningKeys(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo, bob := env.User("octo"), env.User("bob")
	c := env.Client(env.Token(octo, "admin:ssh_signing_key", "write:public_key"))
	text, _ := newKey(t, "octo@laptop")
	_, _, err := c.Users.CreateKey(ctx, github.CreateUserKeyRequest{Key: text})
	apptest.Must(t, "the key authenticates", err)
	k, resp, err := c.Users.CreateSSHSigningKey(ctx, github.CreateSSHSigningKeyRequest{Title: github.Ptr("signing"), Key: text})
	apptest.Must(t, "and signs", err)
	if resp.StatusCode != http.StatusCreated || k.GetTitle() != "signing" || !strings.HasPrefix(k.GetKey(), "ssh-ed25519 ") {
		t.Fatalf("created %d %+v", resp.StatusCode, k)
	}
	list, _, err := env.Client("").Users.ListSSHSigningKeys(ctx, "octo", nil)
	apptest.Must(t, "list as anyone", err)
	if len(list) != 1 || list[0].GetID() != k.GetID() {
		t.Fatalf("list %+v", list)
	}
	_, resp, _ = env.Client(env.Token(bob, "write:ssh_signing_key")).Users.CreateSSHSigningKey(ctx, github.CreateSSHSigningKeyRequest{Key: text})
	if apptest.ResponseStatus(resp) != http.StatusUnprocessableEntity {
		t.Fatalf("bob signs with octo's key: %d", apptest.ResponseStatus(resp))
	}
	_, resp, _ = env.Client(env.Token(octo, "write:public_key")).Users.ListSSHSigningKeys(ctx, "", nil)
	if apptest.ResponseStatus(resp) != http.StatusForbidden {
		t.Fatalf("write:public_key lists signing keys: %d", apptest.ResponseStatus(resp))
	}
	_, err = c.Users.DeleteSSHSigningKey(ctx, k.GetID())
	apptest.Must(t, "delete", err)
	if _, resp, _ := c.Users.GetSSHSigningKey(ctx, k.GetID()); apptest.ResponseStatus(resp) != http.StatusNotFound {
		t.Fatalf("deleted: %d", apptest.ResponseStatus(resp))
	}
}
