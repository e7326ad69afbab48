package repository_test

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"
	"golang.org/x/crypto/ssh"

	"forgeapi/internal/app"
	"forgeapi/internal/apptest"
)

// TestRestoreKeepsSSHHostKeyAndSigningKey backs up a forge serving git
// over SSH and restores it: the restored server presents the same SSH
// host key (OpenSSH, with the known_hosts entry of the first server and
// strict checking, clones from it), and signs the commits it writes with
// the same web-flow key (git verify-commit accepts a new commit of the
// restored server with the first server's public key as the allowed
// signer).
func TestRestoreKeepsSSHHostKeyAndSigningKey(t *testing.T) {
	for _, tool := range []string{"ssh", "ssh-keygen"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs the OpenSSH client's %s: %v", tool, err)
		}
	}
	t.Parallel()
	env := apptest.Start(t, apptest.WithSSH())
	octo := env.User("octo", apptest.UserOpts{Email: "octo@example.com"})
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo", "admin:public_key")
	client := env.Client(token)
	key := filepath.Join(t.TempDir(), "id_ed25519")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v %s", err, out)
	}
	pub, err := os.ReadFile(key + ".pub")
	apptest.Must(t, "public key", err)
	_, _, err = client.Users.CreateKey(ctx, github.CreateUserKeyRequest{Title: github.Ptr("laptop"), Key: string(pub)})
	apptest.Must(t, "add the key", err)
	_, _, err = client.Repositories.CreateFile(ctx, "octo", "hello", "README.md", &github.RepositoryContentFileOptions{
		Message: github.Ptr("Add README"), Content: []byte("# hello\n")})
	apptest.Must(t, "first commit", err)

	// One known_hosts entry for the forge, whatever port it listens on.
	knownHosts := filepath.Join(t.TempDir(), "known_hosts")
	clone := func(t *testing.T, e *apptest.Env, checking string) (string, error) {
		t.Helper()
		host, port, err := net.SplitHostPort(e.Main.SSHAddr())
		apptest.Must(t, "ssh address", err)
		cmd := exec.Command("git", "clone", "-q", "ssh://git@"+host+":"+port+"/octo/hello.git", filepath.Join(t.TempDir(), "clone"))
		cmd.Env = append(apptest.GitEnv(t.TempDir()), "GIT_SSH_COMMAND=ssh -i "+key+" -o IdentitiesOnly=yes -o BatchMode=yes"+
			" -o UserKnownHostsFile="+knownHosts+" -o HostKeyAlias=forge -o StrictHostKeyChecking="+checking+" -o LogLevel=ERROR")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := clone(t, env, "accept-new"); err != nil {
		t.Fatalf("clone over SSH: %v\n%s", err, out)
	}
	webFlow, err := os.ReadFile(app.WebFlowKeyFile(env.DataDir))
	apptest.Must(t, "the web-flow key", err)
	signer, err := ssh.ParsePrivateKey(webFlow)
	apptest.Must(t, "parse the web-flow key", err)
	allowed := filepath.Join(t.TempDir(), "allowed_signers")
	apptest.Must(t, "allowed signers", os.WriteFile(allowed,
		[]byte("octo@example.com namespaces=\"git\" "+string(ssh.MarshalAuthorizedKey(signer.PublicKey()))), 0o600))

	db := copyDatabase(t, env)
	dir, _ := backupOf(t, env)
	for _, name := range []string{"ssh/ssh_host_ed25519_key", "signing/web_flow_ed25519"} {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(name))); err != nil {
			t.Errorf("the backup has no %s: %v", name, err)
		}
	}
	env.Stop()
	restored, _ := restoreOf(t, env, dir, db)

	apptest.Step(t, "the restored server has the same host key", func(t *testing.T) {
		if out, err := clone(t, restored, "yes"); err != nil {
			t.Fatalf("clone from the restored server with the first server's known host: %v\n%s", err, out)
		}
	})
	apptest.Step(t, "the restored server signs with the same key", func(t *testing.T) {
		rclient := restored.Client(token)
		res, _, err := rclient.Repositories.CreateFile(ctx, "octo", "hello", "notes.txt", &github.RepositoryContentFileOptions{
			Message: github.Ptr("Add notes"), Content: []byte("notes\n")})
		apptest.Must(t, "a commit on the restored server", err)
		work := filepath.Join(t.TempDir(), "work")
		apptest.Git(t, ".", "clone", "-q", restored.GitURL("octo", "hello", "", ""), work)
		out, err := apptest.TryGit(t, work, "-c", "gpg.format=ssh", "-c", "gpg.ssh.allowedSignersFile="+allowed,
			"verify-commit", res.GetSHA())
		if err != nil {
			t.Fatalf("the restored server's commit is not signed with the first server's key: %v\n%s", err, out)
		}
		after, err := os.ReadFile(app.WebFlowKeyFile(restored.DataDir))
		apptest.Must(t, "the restored web-flow key", err)
		if !bytes.Equal(after, webFlow) {
			t.Error("the restored web-flow key file differs")
		}
		commit, _, err := rclient.Repositories.GetCommit(ctx, "octo", "hello", res.GetSHA(), nil)
		apptest.Must(t, "the commit", err)
		if v := commit.GetCommit().GetVerification(); !v.GetVerified() || v.GetReason() != "valid" ||
			!strings.HasPrefix(v.GetSignature(), "-----BEGIN SSH SIGNATURE-----") {
			t.Fatalf("verification on the restored server: %+v", v)
		}
	})
}
