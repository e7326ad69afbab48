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

// TestPreReceiveHookOverSSH: a push over SSH runs the same hooks as over
// HTTP, and an enabled hook's refusal reaches the SSH client as remote:
// lines.
func TestPreReceiveHookOverSSH(t *testing.T) {
	for _, tool := range []string{"ssh", "ssh-keygen"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("git over SSH needs the OpenSSH client's %s: %v", tool, err)
		}
	}
	t.Parallel()
	env := apptest.Start(t, apptest.WithSSH())
	root := env.User("root", apptest.UserOpts{SiteAdmin: true})
	admin := env.Token(root, "site_admin", "repo", "admin:public_key")
	env.Repo(root, "hooks")
	env.Repo(root, "app")
	tools := apptest.WorkTree(t, map[string]string{"checks/no-secrets.sh": noSecrets})
	apptest.Git(t, tools, "push", "-q", env.GitURL("root", "hooks", "root", admin), "HEAD:refs/heads/main")
	resp, body := env.DoJSON("POST", "/admin/pre-receive-hooks", admin,
		`{"name":"no secrets","script":"checks/no-secrets.sh","script_repository":{"full_name":"root/hooks"},"environment":{"id":1},"enforcement":"enabled"}`)
	apptest.WantStatus(t, "create hook", resp, body, 201)

	dir := t.TempDir()
	key := filepath.Join(dir, "id_ed25519")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v %s", err, out)
	}
	pub, err := os.ReadFile(key + ".pub")
	apptest.Must(t, "read the public key", err)
	_, _, err = env.Client(admin).Users.CreateKey(apptest.Ctx(), github.CreateUserKeyRequest{Title: github.Ptr("laptop"), Key: strings.TrimSpace(string(pub))})
	apptest.Must(t, "add root's key", err)
	host, port, _ := strings.Cut(env.Main.SSHAddr(), ":")
	knownHosts := filepath.Join(dir, "known_hosts")
	sshGit := func(dir string, args ...string) (string, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(apptest.GitEnv(t.TempDir()), "GIT_SSH_COMMAND=ssh -i "+key+" -o IdentitiesOnly=yes -o BatchMode=yes"+
			" -o UserKnownHostsFile="+knownHosts+" -o StrictHostKeyChecking=accept-new -o LogLevel=ERROR -p "+port)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	url := "ssh://git@" + host + ":" + port + "/root/app.git"
	work := apptest.WorkTree(t, map[string]string{"README.md": "app\n"})
	if out, err := sshGit(work, "push", url, "HEAD:refs/heads/main"); err != nil {
		t.Fatalf("a push the hook lets through: %v\n%s", err, out)
	}
	apptest.Commit(t, work, "a secret", map[string]string{"secrets/key.txt": "hunter2\n"})
	out, err := sshGit(work, "push", url, "HEAD:refs/heads/main")
	if err == nil || !strings.Contains(out, "remote: refusing refs/heads/main: root may not push secrets/ to root/app (public=true)") {
		t.Fatalf("a secret pushed over SSH: %v\n%s", err, out)
	}
}
