package e2e_test

import (
	"crypto/rand"
	"encoding/base64"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"
	"golang.org/x/crypto/nacl/box"

	"forgeapi/internal/apptest"
)

// seal seals value to the base64 public key as libsodium's
// crypto_box_seal does, the way gh and every client library do it.
func seal(t *testing.T, key *github.PublicKey, value string) string {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(key.GetKey())
	if err != nil || len(raw) != 32 {
		t.Fatalf("public key %q: %v", key.GetKey(), err)
	}
	var pub [32]byte
	copy(pub[:], raw)
	sealed, err := box.SealAnonymous(nil, []byte(value), &pub, rand.Reader)
	apptest.Must(t, "seal", err)
	return base64.StdEncoding.EncodeToString(sealed)
}

// status fails the test unless resp answered want.
func settingsStatus(t *testing.T, what string, resp *github.Response, want int) {
	t.Helper()
	if resp == nil || resp.StatusCode != want {
		code := 0
		if resp != nil {
			code = resp.StatusCode
		}
		t.Fatalf("%s: status %d, want %d", what, code, want)
	}
}

// TestRepositorySecretsWithGoGitHub seals repository and environment
// secrets with the repository's public key as go-github's users do,
// replaces, lists, reads and deletes them, sees the platform's 422s for
// values that do not open, wrong key ids and bad names, and reads the
// values a run gets through RunValues.
func TestRepositorySecretsWithGoGitHub(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo")
	repo := env.Repo(octo, "app")
	c := env.Client(env.Token(octo, "repo"))
	var key *github.PublicKey
	apptest.Step(t, "the public key is a Curve25519 key that stays the same", func(t *testing.T) {
		k, _, err := c.Actions.GetRepoPublicKey(ctx, "octo", "app")
		apptest.Must(t, "public key", err)
		again, _, err := c.Actions.GetRepoPublicKey(ctx, "octo", "app")
		apptest.Must(t, "public key again", err)
		if k.GetKeyID() == "" || again.GetKeyID() != k.GetKeyID() || again.GetKey() != k.GetKey() {
			t.Fatalf("keys %+v %+v", k, again)
		}
		key = k
	})
	apptest.Step(t, "a sealed secret is created (201), then replaced (204)", func(t *testing.T) {
		resp, err := c.Actions.CreateOrUpdateRepoSecret(ctx, "octo", "app", "deploy_token",
			github.SecretRequest{KeyID: key.GetKeyID(), EncryptedValue: seal(t, key, "first")})
		apptest.Must(t, "create", err)
		settingsStatus(t, "create", resp, http.StatusCreated)
		resp, err = c.Actions.CreateOrUpdateRepoSecret(ctx, "octo", "app", "DEPLOY_TOKEN",
			github.SecretRequest{KeyID: key.GetKeyID(), EncryptedValue: seal(t, key, "s3cr3t")})
		apptest.Must(t, "update", err)
		settingsStatus(t, "update", resp, http.StatusNoContent)
		list, _, err := c.Actions.ListRepoSecrets(ctx, "octo", "app", nil)
		apptest.Must(t, "list", err)
		if list.TotalCount != 1 || list.Secrets[0].Name != "DEPLOY_TOKEN" {
			t.Fatalf("list %+v", list)
		}
		s, _, err := c.Actions.GetRepoSecret(ctx, "octo", "app", "deploy_token")
		apptest.Must(t, "get", err)
		if s.Name != "DEPLOY_TOKEN" || s.CreatedAt.IsZero() || s.UpdatedAt.Before(s.CreatedAt.Time) {
			t.Fatalf("secret %+v", s)
		}
	})
	apptest.Step(t, "values that do not open, other keys and bad names are 422", func(t *testing.T) {
		other, _, err := box.GenerateKey(rand.Reader)
		apptest.Must(t, "key", err)
		foreign := &github.PublicKey{Key: github.Ptr(base64.StdEncoding.EncodeToString(other[:]))}
		for name, body := range map[string]github.SecretRequest{
			"sealed to another key": {KeyID: key.GetKeyID(), EncryptedValue: seal(t, foreign, "x")},
			"not a sealed box":      {KeyID: key.GetKeyID(), EncryptedValue: base64.StdEncoding.EncodeToString([]byte("plain text"))},
			"another key id":        {KeyID: "1", EncryptedValue: seal(t, key, "x")},
			"no value":              {KeyID: key.GetKeyID()},
		} {
			resp, err := c.Actions.CreateOrUpdateRepoSecret(ctx, "octo", "app", "OTHER", body)
			if err == nil || resp.StatusCode != http.StatusUnprocessableEntity {
				t.Fatalf("%s: %v", name, err)
			}
		}
		for _, name := range []string{"GITHUB_TOKEN", "1ABC", "has-dash"} {
			resp, err := c.Actions.CreateOrUpdateRepoSecret(ctx, "octo", "app", name,
				github.SecretRequest{KeyID: key.GetKeyID(), EncryptedValue: seal(t, key, "x")})
			if err == nil || resp.StatusCode != http.StatusUnprocessableEntity {
				t.Fatalf("name %s: %v", name, err)
			}
		}
		if _, resp, err := c.Actions.GetRepoSecret(ctx, "octo", "app", "OTHER"); err == nil || resp.StatusCode != http.StatusNotFound {
			t.Fatalf("a refused secret was stored: %v", err)
		}
	})
	apptest.Step(t, "an environment's secret overrides the repository's in a run", func(t *testing.T) {
		_, _, err := c.Repositories.CreateUpdateEnvironment(ctx, "octo", "app", "production", &github.CreateUpdateEnvironment{})
		apptest.Must(t, "environment", err)
		ek, _, err := c.Actions.GetEnvPublicKey(ctx, "octo", "app", "production")
		apptest.Must(t, "environment key", err)
		resp, err := c.Actions.CreateOrUpdateEnvSecret(ctx, "octo", "app", "production", "DEPLOY_TOKEN",
			github.SecretRequest{KeyID: ek.GetKeyID(), EncryptedValue: seal(t, ek, "prod-token")})
		apptest.Must(t, "environment secret", err)
		settingsStatus(t, "environment secret", resp, http.StatusCreated)
		list, _, err := c.Actions.ListEnvSecrets(ctx, "octo", "app", "production", nil)
		apptest.Must(t, "list", err)
		if list.TotalCount != 1 || list.Secrets[0].Name != "DEPLOY_TOKEN" {
			t.Fatalf("environment secrets %+v", list)
		}
		if _, resp, err := c.Actions.ListEnvSecrets(ctx, "octo", "app", "nowhere", nil); err == nil || resp.StatusCode != http.StatusNotFound {
			t.Fatalf("missing environment: %v", err)
		}
		secrets, _, err := env.App.ActionsSettings.RunValues(ctx, repo.ID, "")
		apptest.Must(t, "run values", err)
		if len(secrets) != 1 || secrets["DEPLOY_TOKEN"] != "s3cr3t" {
			t.Fatalf("run secrets %v", secrets)
		}
		secrets, _, err = env.App.ActionsSettings.RunValues(ctx, repo.ID, "Production")
		apptest.Must(t, "run values in production", err)
		if secrets["DEPLOY_TOKEN"] != "prod-token" {
			t.Fatalf("production secrets %v", secrets)
		}
	})
	apptest.Step(t, "deleted secrets are gone, from the API and from runs", func(t *testing.T) {
		resp, err := c.Actions.DeleteRepoSecret(ctx, "octo", "app", "DEPLOY_TOKEN")
		apptest.Must(t, "delete", err)
		settingsStatus(t, "delete", resp, http.StatusNoContent)
		if resp, err := c.Actions.DeleteRepoSecret(ctx, "octo", "app", "DEPLOY_TOKEN"); err == nil || resp.StatusCode != http.StatusNotFound {
			t.Fatalf("delete again: %v", err)
		}
		secrets, _, err := env.App.ActionsSettings.RunValues(ctx, repo.ID, "")
		apptest.Must(t, "run values", err)
		if len(secrets) != 0 {
			t.Fatalf("run secrets %v", secrets)
		}
	})
	apptest.Step(t, "Dependabot's secrets are apart from Actions'", func(t *testing.T) {
		dk, _, err := c.Dependabot.GetRepoPublicKey(ctx, "octo", "app")
		apptest.Must(t, "dependabot key", err)
		resp, err := c.Dependabot.CreateOrUpdateRepoSecret(ctx, "octo", "app", "REGISTRY",
			github.SecretRequest{KeyID: dk.GetKeyID(), EncryptedValue: seal(t, dk, "npm-token")})
		apptest.Must(t, "dependabot secret", err)
		settingsStatus(t, "dependabot secret", resp, http.StatusCreated)
		list, _, err := c.Dependabot.ListRepoSecrets(ctx, "octo", "app", nil)
		apptest.Must(t, "list", err)
		actions, _, err := c.Actions.ListRepoSecrets(ctx, "octo", "app", nil)
		apptest.Must(t, "actions list", err)
		if list.TotalCount != 1 || actions.TotalCount != 0 {
			t.Fatalf("dependabot %d, actions %d", list.TotalCount, actions.TotalCount)
		}
		secrets, _, err := env.App.ActionsSettings.RunValues(ctx, repo.ID, "")
		apptest.Must(t, "run values", err)
		if len(secrets) != 0 {
			t.Fatalf("a Dependabot secret reached a run: %v", secrets)
		}
	})
}

// TestSecretAccess checks who reaches secrets: a reader is refused, a
// fine-grained token needs Secrets, read for reading and write for
// writing, and anonymous callers see nothing.
func TestSecretAccess(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo, reader := env.User("octo"), env.User("reader")
	env.Repo(octo, "app", apptest.RepoOpts{Private: true})
	_, _, err := env.Client(env.Token(octo, "repo")).Repositories.AddCollaborator(ctx, "octo", "app", "reader",
		&github.RepositoryAddCollaboratorOptions{Permission: "pull"})
	apptest.Must(t, "invite", err)
	rc := env.Client(env.Token(reader, "repo"))
	invites, _, err := rc.Users.ListInvitations(ctx, nil)
	apptest.Must(t, "invitations", err)
	for _, inv := range invites {
		_, err := rc.Users.AcceptInvitation(ctx, inv.GetID())
		apptest.Must(t, "accept", err)
	}
	readOnly := env.Client(env.FineGrainedToken(octo, octo, apptest.AllRepos, "secrets:read"))
	k, _, err := readOnly.Actions.GetRepoPublicKey(ctx, "octo", "app")
	apptest.Must(t, "read with secrets:read", err)
	resp, err := readOnly.Actions.CreateOrUpdateRepoSecret(ctx, "octo", "app", "X",
		github.SecretRequest{KeyID: k.GetKeyID(), EncryptedValue: seal(t, k, "x")})
	if err == nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("write with secrets:read: %v", err)
	}
	writer := env.Client(env.FineGrainedToken(octo, octo, apptest.AllRepos, "secrets:write"))
	resp, err = writer.Actions.CreateOrUpdateRepoSecret(ctx, "octo", "app", "X",
		github.SecretRequest{KeyID: k.GetKeyID(), EncryptedValue: seal(t, k, "x")})
	apptest.Must(t, "write with secrets:write", err)
	settingsStatus(t, "write", resp, http.StatusCreated)
	contents := env.Client(env.FineGrainedToken(octo, octo, apptest.AllRepos, "contents:write"))
	if _, resp, err := contents.Actions.ListRepoSecrets(ctx, "octo", "app", nil); err == nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("list with contents:write: %v", err)
	}
	if _, resp, err := rc.Actions.ListRepoSecrets(ctx, "octo", "app", nil); err == nil ||
		resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusNotFound {
		t.Fatalf("a reader listed secrets: %v", err)
	}
	if _, resp, err := env.Client("").Actions.ListRepoSecrets(ctx, "octo", "app", nil); err == nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("anonymous: %v", err)
	}
}

// stringsReader is a body for env.Do.
func stringsReader(s string) io.Reader { return strings.NewReader(s) }
