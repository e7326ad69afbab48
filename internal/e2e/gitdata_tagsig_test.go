package e2e_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// TestTagSignaturesVerified signs annotated tags as people do, `git tag
// -s` with an SSH key (gpg.format=ssh) and with a GPG key (gpg), pushes
// them, and reads each tag's verification through GET .../git/tags/{sha}:
// valid with the tagger's key and address, with the signature and its
// payload; unsigned without a signature; unknown_key for a key no one
// added, or once the key is removed; bad_email when the tagger's address
// is not the key user's.
func TestTagSignaturesVerified(t *testing.T) {
	for _, tool := range []string{"ssh-keygen", "gpg", "gpgconf"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("signing tags needs %s: %v", tool, err)
		}
	}
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo", apptest.UserOpts{Email: "octo@example.com"})
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo", "user", "admin:ssh_signing_key", "admin:gpg_key")
	c := env.Client(token)
	_, _, err := c.Users.AddEmails(ctx, []string{"committer@example.com"}) // the tagger of apptest's git
	apptest.Must(t, "add the tagger's address", err)

	sshKey := func(name string) (string, string) {
		key := filepath.Join(t.TempDir(), name)
		if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key).CombinedOutput(); err != nil {
			t.Fatalf("ssh-keygen: %v %s", err, out)
		}
		pub, err := os.ReadFile(key + ".pub")
		apptest.Must(t, "public key", err)
		return key, string(pub)
	}
	key, pub := sshKey("id_ed25519")
	strangerKey, _ := sshKey("id_stranger")
	signingKey, _, err := c.Users.CreateSSHSigningKey(ctx, github.CreateSSHSigningKeyRequest{Key: pub})
	apptest.Must(t, "add the SSH signing key", err)

	// A GPG home of the test's own (short: gpg-agent's socket lives in it),
	// its agent stopped at the end.
	gnupg, err := os.MkdirTemp("", "gpg")
	apptest.Must(t, "GPG home", err)
	gpgEnv := []string{"GNUPGHOME=" + gnupg}
	t.Cleanup(func() {
		kill := exec.Command("gpgconf", "--kill", "all")
		kill.Env = append(os.Environ(), gpgEnv...)
		_ = kill.Run()
		_ = os.RemoveAll(gnupg)
	})
	gpg := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("gpg", append([]string{"--batch", "--pinentry-mode", "loopback", "--passphrase", ""}, args...)...)
		cmd.Env = append(os.Environ(), gpgEnv...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("gpg %s: %v", strings.Join(args, " "), err)
		}
		return string(out)
	}
	gpg("--quick-gen-key", "Test Committer <committer@example.com>", "ed25519", "sign", "never")
	gpg("--quick-gen-key", "Stranger <committer@example.com>", "ed25519", "sign", "never")
	fingerprint := func(uid string) string {
		for _, line := range strings.Split(gpg("--with-colons", "--list-secret-keys", uid), "\n") {
			if f := strings.Split(line, ":"); f[0] == "fpr" {
				return f[9]
			}
		}
		t.Fatalf("no fingerprint for %s", uid)
		return ""
	}
	gpgKey, strangerGPG := fingerprint("Test Committer"), fingerprint("Stranger")
	_, _, err = c.Users.CreateGPGKey(ctx, gpg("--armor", "--export", gpgKey))
	apptest.Must(t, "add the GPG key", err)

	work := apptest.WorkTree(t, map[string]string{"README.md": "# hello\n"})
	url := env.GitURL("octo", "hello", "octo", token)
	tag := func(t *testing.T, name string, args ...string) string {
		t.Helper()
		gitIn(t, work, "", gpgEnv, append(append([]string{"-c", "gpg.program=gpg"}, args...), "tag", "-m", "Release "+name, name)...)
		gitIn(t, work, "", nil, "push", "-q", url, "refs/tags/"+name)
		return gitIn(t, work, "", nil, "rev-parse", "refs/tags/"+name)
	}
	signed := func(t *testing.T, format, key, name string) string {
		t.Helper()
		return tag(t, name, "-c", "gpg.format="+format, "-c", "user.signingkey="+key, "-c", "tag.gpgSign=true")
	}
	want := func(t *testing.T, sha string, verified bool, reason, armor string) {
		t.Helper()
		got, _, err := c.Git.GetTag(ctx, "octo", "hello", sha)
		apptest.Must(t, "get the tag", err)
		v := got.GetVerification()
		if v.GetVerified() != verified || v.GetReason() != reason || !strings.HasPrefix(v.GetSignature(), armor) ||
			(armor != "" && !strings.HasPrefix(v.GetPayload(), "object ")) {
			t.Fatalf("tag %s: verification %v %s (%q, payload %q), want %v %s", sha, v.GetVerified(), v.GetReason(),
				v.GetSignature(), v.GetPayload(), verified, reason)
		}
	}
	const sshArmor, pgpArmor = "-----BEGIN SSH SIGNATURE-----", "-----BEGIN PGP SIGNATURE-----"

	apptest.Step(t, "an unsigned tag", func(t *testing.T) {
		want(t, tag(t, "v0.1.0"), false, "unsigned", "")
	})
	apptest.Step(t, "tags signed with GPG", func(t *testing.T) {
		want(t, signed(t, "openpgp", gpgKey, "v1.0.0-gpg"), true, "valid", pgpArmor)
		want(t, signed(t, "openpgp", strangerGPG, "v1.0.0-gpg-stranger"), false, "unknown_key", pgpArmor)
	})
	apptest.Step(t, "tags signed with SSH", func(t *testing.T) {
		sha := signed(t, "ssh", key, "v1.0.0-ssh")
		want(t, sha, true, "valid", sshArmor)
		want(t, signed(t, "ssh", strangerKey, "v1.0.0-ssh-stranger"), false, "unknown_key", sshArmor)
		_, err := c.Users.DeleteEmails(ctx, []string{"committer@example.com"})
		apptest.Must(t, "remove the tagger's address", err)
		want(t, sha, false, "bad_email", sshArmor)
		_, err = c.Users.DeleteSSHSigningKey(ctx, signingKey.GetID())
		apptest.Must(t, "remove the key", err)
		want(t, sha, false, "unknown_key", sshArmor)
	})
	apptest.Step(t, "a tag made through the API", func(t *testing.T) {
		head := gitIn(t, work, "", nil, "rev-parse", "HEAD")
		made, _, err := c.Git.CreateTag(ctx, "octo", "hello", github.CreateTag{Tag: "v2.0.0", Message: "API tag",
			Object: head, Type: "commit"})
		apptest.Must(t, "create a tag", err)
		if v := made.GetVerification(); v.GetVerified() || v.GetReason() != "unsigned" {
			t.Fatalf("an API tag's verification: %+v", v)
		}
	})
}
