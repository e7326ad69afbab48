package e2e_test

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	"github.com/google/go-github/v92/github"
	"golang.org/x/crypto/ssh"

	"forgeapi/internal/app"
	"forgeapi/internal/apptest"
	"forgeapi/internal/testwait"
)

// pgpSigner signs go-github's commit payloads with an OpenPGP key.
type pgpSigner struct{ e *openpgp.Entity }

func (s pgpSigner) Sign(w io.Writer, r io.Reader) error {
	return openpgp.ArmoredDetachSign(w, s.e, r, nil)
}

// newPGP makes an OpenPGP key for email and returns it with its armored
// public key.
func newPGP(t *testing.T, email string) (*openpgp.Entity, string) {
	t.Helper()
	e, err := openpgp.NewEntity("Octo", "", email, &packet.Config{Algorithm: packet.PubKeyAlgoEdDSA})
	apptest.Must(t, "generate a GPG key", err)
	var buf bytes.Buffer
	w, err := armor.Encode(&buf, openpgp.PublicKeyType, nil)
	apptest.Must(t, "armor", err)
	apptest.Must(t, "serialize", e.Serialize(w))
	apptest.Must(t, "close", w.Close())
	return e, buf.String()
}

// TestCommitSignaturesVerified signs commits as people do, with an SSH
// key (`git commit -S`, gpg.format=ssh) and with a GPG key (go-github's
// signer through the git data API), and reads their verification through
// the commits API: valid with the user's key and address; bad_email when
// the committer's address is not the user's; unknown_key for a key no
// one added, or once the key is removed.
func TestCommitSignaturesVerified(t *testing.T) {
	for _, tool := range []string{"ssh-keygen"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("SSH signing needs %s: %v", tool, err)
		}
	}
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo", apptest.UserOpts{Email: "octo@example.com"})
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo", "user", "admin:ssh_signing_key", "admin:gpg_key")
	c := env.Client(token)
	_, _, err := c.Users.AddEmails(ctx, []string{"committer@example.com"}) // apptest's git committer
	apptest.Must(t, "add the committer's address", err)
	key := filepath.Join(t.TempDir(), "id_ed25519")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v %s", err, out)
	}
	pub, err := os.ReadFile(key + ".pub")
	apptest.Must(t, "public key", err)
	signingKey, _, err := c.Users.CreateSSHSigningKey(ctx, github.CreateSSHSigningKeyRequest{Key: string(pub)})
	apptest.Must(t, "add the signing key", err)
	work := apptest.WorkTree(t, map[string]string{"README.md": "# hello\n"})
	apptest.Git(t, work, "-c", "gpg.format=ssh", "-c", "user.signingkey="+key, "commit", "-S", "-q", "--allow-empty", "-m", "Signed with SSH")
	sshSigned := strings.TrimSpace(apptest.Git(t, work, "rev-parse", "HEAD"))
	apptest.Git(t, work, "push", "-q", env.GitURL("octo", "hello", "octo", token), "HEAD:refs/heads/main")
	verification := func(t *testing.T, sha string) *github.SignatureVerification {
		t.Helper()
		got, _, err := c.Repositories.GetCommit(ctx, "octo", "hello", sha, nil)
		apptest.Must(t, "get the commit", err)
		return got.GetCommit().GetVerification()
	}
	want := func(t *testing.T, sha string, verified bool, reason string) {
		t.Helper()
		if v := verification(t, sha); v.GetVerified() != verified || v.GetReason() != reason || v.GetSignature() == "" {
			t.Fatalf("%s: verification %v %s, want %v %s", sha, v.GetVerified(), v.GetReason(), verified, reason)
		}
	}

	apptest.Step(t, "an SSH signature", func(t *testing.T) {
		want(t, sshSigned, true, "valid")
		_, err := c.Users.DeleteEmails(ctx, []string{"committer@example.com"})
		apptest.Must(t, "remove the address", err)
		want(t, sshSigned, false, "bad_email")
		_, err = c.Users.DeleteSSHSigningKey(ctx, signingKey.GetID())
		apptest.Must(t, "remove the key", err)
		want(t, sshSigned, false, "unknown_key")
	})
	apptest.Step(t, "GPG signatures", func(t *testing.T) {
		entity, armored := newPGP(t, "octo@example.com")
		_, _, err := c.Users.CreateGPGKey(ctx, armored)
		apptest.Must(t, "add the GPG key", err)
		stranger, _ := newPGP(t, "octo@example.com")
		tree := strings.TrimSpace(apptest.Git(t, work, "rev-parse", "HEAD^{tree}"))
		for _, tc := range []struct {
			signer *openpgp.Entity
			email  string
			reason string
		}{
			{entity, "octo@example.com", "valid"},
			{entity, "other@example.com", "bad_email"},
			{stranger, "octo@example.com", "unknown_key"},
		} {
			// Dated: go-github signs the date it sends.
			author := &github.CommitAuthor{Name: github.Ptr("Octo"), Email: github.Ptr(tc.email), Date: &github.Timestamp{Time: time.Now().UTC().Truncate(time.Second)}}
			commit, _, err := c.Git.CreateCommit(ctx, "octo", "hello", github.Commit{Message: github.Ptr("Signed with GPG\n"),
				Tree: &github.Tree{SHA: &tree}, Parents: []*github.Commit{{SHA: &sshSigned}}, Author: author},
				&github.CreateCommitOptions{Signer: pgpSigner{tc.signer}})
			apptest.Must(t, "signed commit", err)
			want(t, commit.GetSHA(), tc.reason == "valid", tc.reason)
		}
	})
	apptest.Step(t, "branch protection requires verified signatures", func(t *testing.T) {
		_, _, err := c.Users.AddEmails(ctx, []string{"committer@example.com"})
		apptest.Must(t, "add the address again", err)
		_, _, err = c.Users.CreateSSHSigningKey(ctx, github.CreateSSHSigningKeyRequest{Key: string(pub)})
		apptest.Must(t, "add the signing key again", err)
		_, _, err = c.Repositories.UpdateBranchProtection(ctx, "octo", "hello", "main", &github.ProtectionRequest{EnforceAdmins: true})
		apptest.Must(t, "protect main", err)
		_, _, err = c.Repositories.RequireSignaturesOnProtectedBranch(ctx, "octo", "hello", "main")
		apptest.Must(t, "require signatures", err)
		url := env.GitURL("octo", "hello", "octo", token)
		apptest.Commit(t, work, "Unsigned", map[string]string{"a.txt": "a\n"})
		out, err := apptest.TryGit(t, work, "push", url, "HEAD:refs/heads/main")
		if err == nil || !strings.Contains(out, "GH006") || !strings.Contains(out, "Commits must have verified signatures.") {
			t.Fatalf("an unsigned commit pushed: %v\n%s", err, out)
		}
		apptest.Git(t, work, "-c", "gpg.format=ssh", "-c", "user.signingkey="+key, "commit", "--amend", "-S", "-q", "-m", "Signed")
		if out, err := apptest.TryGit(t, work, "push", url, "HEAD:refs/heads/main"); err != nil {
			t.Fatalf("a signed commit refused: %v\n%s", err, out)
		}
	})
}

// TestWebFlowCommitsVerified writes commits through the contents API, the
// git data API (without a signature of its own) and a pull request's
// merge: the server signs
// them with its web-flow key, kept under the data directory, and the
// commits API shows them verified ("valid") with the SSH signature and
// its payload; git itself checks the signature against the server's key
// (git verify-commit with gpg.format=ssh), and a restart keeps the key.
func TestWebFlowCommitsVerified(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo", apptest.UserOpts{Email: "octo@example.com"})
	env.Repo(octo, "hello")
	c := env.Client(env.Token(octo, "repo"))
	verified := func(t *testing.T, sha string) *github.SignatureVerification {
		t.Helper()
		commit, _, err := c.Repositories.GetCommit(ctx, "octo", "hello", sha, nil)
		apptest.Must(t, "get the commit", err)
		v := commit.GetCommit().GetVerification()
		if !v.GetVerified() || v.GetReason() != "valid" || !strings.HasPrefix(v.GetSignature(), "-----BEGIN SSH SIGNATURE-----") ||
			!strings.HasPrefix(v.GetPayload(), "tree ") {
			t.Fatalf("verification of %s: %+v", sha, v)
		}
		return v
	}

	var sha, testMerge string
	apptest.Step(t, "a contents API commit is signed and valid", func(t *testing.T) {
		res, _, err := c.Repositories.CreateFile(ctx, "octo", "hello", "notes.txt", &github.RepositoryContentFileOptions{
			Message: github.Ptr("Add notes"), Content: []byte("notes\n")})
		apptest.Must(t, "create a file", err)
		sha = res.GetSHA()
		verified(t, sha)
	})
	apptest.Step(t, "a git data commit without a signature is signed and valid", func(t *testing.T) {
		parent, _, err := c.Git.GetCommit(ctx, "octo", "hello", sha)
		apptest.Must(t, "parent", err)
		made, _, err := c.Git.CreateCommit(ctx, "octo", "hello", github.Commit{Message: github.Ptr("Again"),
			Tree: parent.Tree, Parents: []*github.Commit{{SHA: github.Ptr(sha)}}}, nil)
		apptest.Must(t, "create a commit", err)
		if v := made.GetVerification(); !v.GetVerified() || v.GetReason() != "valid" {
			t.Fatalf("the created commit's verification: %+v", v)
		}
	})
	apptest.Step(t, "a pull request's merge commit is signed and valid", func(t *testing.T) {
		_, _, err := c.Git.CreateRef(ctx, "octo", "hello", github.CreateRef{Ref: "refs/heads/topic", SHA: sha})
		apptest.Must(t, "create topic", err)
		_, _, err = c.Repositories.CreateFile(ctx, "octo", "hello", "topic.txt", &github.RepositoryContentFileOptions{
			Message: github.Ptr("Topic"), Content: []byte("topic\n"), Branch: github.Ptr("topic")})
		apptest.Must(t, "commit on topic", err)
		_, _, err = c.Repositories.CreateFile(ctx, "octo", "hello", "main.txt", &github.RepositoryContentFileOptions{
			Message: github.Ptr("Main"), Content: []byte("main\n")})
		apptest.Must(t, "commit on main", err)
		pr, _, err := c.PullRequests.Create(ctx, "octo", "hello", github.CreatePullRequest{Title: github.Ptr("Topic"),
			Head: "topic", Base: "main"})
		apptest.Must(t, "open the pull request", err)
		testwait.Until(t, "the pull request's test merge", func() bool {
			pr, _, err = c.PullRequests.Get(ctx, "octo", "hello", pr.GetNumber())
			apptest.Must(t, "get the pull request", err)
			return pr.Mergeable != nil
		})
		testMerge = pr.GetMergeCommitSHA()
		verified(t, testMerge) // the test merge (merge_commit_sha of an open pull request)
		merged, _, err := c.PullRequests.Merge(ctx, "octo", "hello", pr.GetNumber(), "", nil)
		apptest.Must(t, "merge", err)
		verified(t, merged.GetSHA())
		commit, _, err := c.Repositories.GetCommit(ctx, "octo", "hello", merged.GetSHA(), nil)
		apptest.Must(t, "the merge commit", err)
		if len(commit.Parents) != 2 {
			t.Fatalf("merge commit parents: %d", len(commit.Parents))
		}
	})
	apptest.Step(t, "git verifies the signatures with the server's key", func(t *testing.T) {
		if _, err := exec.LookPath("ssh-keygen"); err != nil {
			t.Skipf("git's SSH signature check needs ssh-keygen: %v", err)
		}
		key, err := os.ReadFile(app.WebFlowKeyFile(env.DataDir))
		apptest.Must(t, "the web-flow key file", err)
		signer, err := ssh.ParsePrivateKey(key)
		apptest.Must(t, "parse the web-flow key", err)
		allowed := filepath.Join(t.TempDir(), "allowed_signers")
		apptest.Must(t, "allowed signers", os.WriteFile(allowed,
			[]byte("*@* namespaces=\"git\" "+string(ssh.MarshalAuthorizedKey(signer.PublicKey()))), 0o600))
		verify := []string{"-c", "gpg.format=ssh", "-c", "gpg.ssh.allowedSignersFile=" + allowed, "verify-commit"}
		work := filepath.Join(t.TempDir(), "clone")
		apptest.Git(t, ".", "clone", "-q", env.GitURL("octo", "hello", "", ""), work)
		apptest.Git(t, work, append(verify, sha)...)
		apptest.Git(t, work, "fetch", "-q", "origin", testMerge)
		apptest.Git(t, work, append(verify, testMerge)...)

		// A gist's commits, made through the API, are signed as well.
		gc := env.Client(env.Token(octo, "gist"))
		g, _, err := gc.Gists.Create(ctx, github.CreateGistRequest{Public: github.Ptr(true),
			Files: map[github.GistFilename]*github.CreateGistFile{"a.txt": {Content: "a\n"}}})
		apptest.Must(t, "create a gist", err)
		_, _, err = gc.Gists.Update(ctx, g.GetID(), github.UpdateGistRequest{
			Files: map[github.GistFilename]*github.UpdateGistFile{"a.txt": {Content: github.Ptr("b\n")}}})
		apptest.Must(t, "edit the gist", err)
		gist := filepath.Join(t.TempDir(), "gist")
		apptest.Git(t, ".", "clone", "-q", g.GetGitPullURL(), gist)
		apptest.Git(t, gist, append(verify, "HEAD", "HEAD~1")...)
	})
	apptest.Step(t, "a restart keeps the key", func(t *testing.T) {
		before, err := os.ReadFile(app.WebFlowKeyFile(env.DataDir))
		apptest.Must(t, "key", err)
		env.Stop()
		again := apptest.StartConfig(t, env.Config)
		after, err := os.ReadFile(app.WebFlowKeyFile(env.DataDir))
		apptest.Must(t, "key after", err)
		if !bytes.Equal(before, after) {
			t.Fatal("the web-flow key changed across a restart")
		}
		commit, _, err := again.Client(again.Token(octo, "repo")).Repositories.GetCommit(ctx, "octo", "hello", sha, nil)
		apptest.Must(t, "the commit after a restart", err)
		if v := commit.GetCommit().GetVerification(); !v.GetVerified() || v.GetReason() != "valid" {
			t.Fatalf("verification after a restart: %+v", v)
		}
	})
}
