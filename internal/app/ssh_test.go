package app_test

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/app"
	"forgeapi/internal/apptest"
	"forgeapi/internal/webhooks"
)

// sshClient is the system OpenSSH client with one key, against one
// server: its known_hosts file of its own, the host key accepted the first
// time and checked after.
type sshClient struct {
	t          *testing.T
	key        string // private key file
	pub        string // the public key, authorized_keys format
	knownHosts string
	host, port string
}

// needSSH skips a test when the OpenSSH client or ssh-keygen is missing.
func needSSH(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"ssh", "ssh-keygen"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("git over SSH needs the OpenSSH client's %s: %v", tool, err)
		}
	}
}

// newSSHClient makes an ed25519 key with ssh-keygen for the server at addr.
func newSSHClient(t *testing.T, addr, knownHosts string) *sshClient {
	t.Helper()
	dir := t.TempDir()
	key := filepath.Join(dir, "id_ed25519")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "test@laptop", "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v %s", err, out)
	}
	pub, err := os.ReadFile(key + ".pub")
	apptest.Must(t, "read the public key", err)
	host, port, err := net.SplitHostPort(addr)
	apptest.Must(t, "ssh address", err)
	return &sshClient{t: t, key: key, pub: strings.TrimSpace(string(pub)), knownHosts: knownHosts, host: host, port: port}
}

// command is the ssh command line git runs (GIT_SSH_COMMAND); without a
// port (-p) when c.port is "", for addresses that name theirs.
func (c *sshClient) command() string {
	line := "ssh -i " + c.key + " -o IdentitiesOnly=yes -o BatchMode=yes -o UserKnownHostsFile=" + c.knownHosts +
		" -o StrictHostKeyChecking=accept-new -o LogLevel=ERROR"
	if c.port != "" {
		line += " -p " + c.port
	}
	return line
}

// url is the repository's ssh:// address.
func (c *sshClient) url(fullName string) string {
	return "ssh://git@" + c.host + ":" + c.port + "/" + fullName + ".git"
}

// git runs git in dir over this client's key; it returns the output and
// error.
func (c *sshClient) git(dir string, args ...string) (string, error) {
	home := filepath.Join(os.TempDir(), "forgeapi-test-home")
	_ = os.MkdirAll(home, 0o755)
	cmd := exec.Command("git", append([]string{"-c", "init.defaultBranch=main", "-c", "protocol.version=2"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(apptest.GitEnv(home), "GIT_SSH_COMMAND="+c.command())
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// shell runs `ssh -T git@host` and returns its output and error.
func (c *sshClient) shell() (string, error) {
	args := append(strings.Fields(c.command())[1:], "-T", "git@"+c.host)
	out, err := exec.Command("ssh", args...).CombinedOutput()
	return string(out), err
}

// TestGitOverSSH clones and pushes with the real OpenSSH client and git
// over SSH: a user key acts as its user (the greeting of ssh -T names
// them), a push is recorded and sent to hooks as over HTTP, branch
// protection refuses a push with the same GH006 message, a read-only
// deploy key clones and cannot push while a read-write one can, unknown
// keys and other repositories are refused, and the host key survives a
// restart.
func TestGitOverSSH(t *testing.T) {
	needSSH(t)
	t.Parallel()
	env := apptest.Start(t, apptest.WithSSH())
	ctx := apptest.Ctx()
	octo, bob := env.User("octo"), env.User("bob")
	env.Repo(octo, "hello")
	env.Repo(bob, "secret", apptest.RepoOpts{Private: true})
	token := env.Token(octo, "repo", "admin:public_key")
	c := env.Client(token)
	knownHosts := filepath.Join(t.TempDir(), "known_hosts")
	addr := env.Main.SSHAddr()
	octoSSH := newSSHClient(t, addr, knownHosts)
	_, _, err := c.Users.CreateKey(ctx, github.CreateUserKeyRequest{Title: github.Ptr("laptop"), Key: octoSSH.pub})
	apptest.Must(t, "add octo's key", err)
	work := apptest.WorkTree(t, map[string]string{"README.md": "# hello\n"})

	apptest.Step(t, "ssh -T greets the key's user", func(t *testing.T) {
		out, err := octoSSH.shell()
		if err == nil || !strings.Contains(out, "Hi octo! You've successfully authenticated, but Service does not provide shell access.") {
			t.Fatalf("ssh -T: %v\n%s", err, out)
		}
		stranger := newSSHClient(t, addr, knownHosts)
		if out, err := stranger.shell(); err == nil || !strings.Contains(out, "Permission denied") {
			t.Fatalf("an unknown key: %v\n%s", err, out)
		}
	})
	apptest.Step(t, "pushes and clones over SSH", func(t *testing.T) {
		if out, err := octoSSH.git(work, "push", octoSSH.url("octo/hello"), "HEAD:refs/heads/main"); err != nil {
			t.Fatalf("push: %v\n%s", err, out)
		}
		clone := filepath.Join(t.TempDir(), "clone")
		if out, err := octoSSH.git(".", "clone", "-q", octoSSH.url("octo/hello"), clone); err != nil {
			t.Fatalf("clone: %v\n%s", err, out)
		}
		if b, err := os.ReadFile(filepath.Join(clone, "README.md")); err != nil || string(b) != "# hello\n" {
			t.Fatalf("cloned README: %q %v", b, err)
		}
		// scp-like address, as ssh_url is written.
		scp := filepath.Join(t.TempDir(), "scp")
		if out, err := octoSSH.git(".", "clone", "-q", "git@"+octoSSH.host+":octo/hello.git", scp); err != nil {
			t.Fatalf("clone by scp-like address: %v\n%s", err, out)
		}
		branch, _, err := c.Repositories.GetBranch(ctx, "octo", "hello", "main", 0)
		apptest.Must(t, "the pushed branch", err)
		if branch.GetCommit().GetSHA() == "" {
			t.Fatalf("branch %+v", branch)
		}
		events, _, err := c.Activity.ListRepositoryEvents(ctx, "octo", "hello", nil)
		apptest.Must(t, "events", err)
		if len(events) == 0 || events[0].GetType() != "PushEvent" && events[0].GetType() != "CreateEvent" {
			t.Fatalf("the push made no event: %+v", events)
		}
		if out, err := octoSSH.git(".", "ls-remote", octoSSH.url("bob/secret")); err == nil || !strings.Contains(out, "ERROR: Repository not found.") {
			t.Fatalf("bob's private repository: %v\n%s", err, out)
		}
	})
	apptest.Step(t, "branch protection refuses a push as over HTTP", func(t *testing.T) {
		_, _, err := c.Repositories.UpdateBranchProtection(ctx, "octo", "hello", "main", &github.ProtectionRequest{
			RequiredPullRequestReviews: &github.PullRequestReviewsEnforcementRequest{RequiredApprovingReviewCount: 1},
			EnforceAdmins:              true,
		})
		apptest.Must(t, "protect main", err)
		apptest.Commit(t, work, "Second", map[string]string{"README.md": "# hello again\n"})
		out, err := octoSSH.git(work, "push", octoSSH.url("octo/hello"), "HEAD:refs/heads/main")
		if err == nil || !strings.Contains(out, "remote: error: GH006: Protected branch update failed for refs/heads/main.") {
			t.Fatalf("a push to a protected branch: %v\n%s", err, out)
		}
		if out, err := octoSSH.git(work, "push", octoSSH.url("octo/hello"), "HEAD:refs/heads/topic"); err != nil {
			t.Fatalf("a push to another branch: %v\n%s", err, out)
		}
	})
	apptest.Step(t, "a ruleset refuses a push as over HTTP", func(t *testing.T) {
		_, _, err := c.Repositories.CreateRuleset(ctx, "octo", "hello", github.RepositoryRuleset{
			Name: "No deletion of releases", Target: new(github.RulesetTargetBranch), Enforcement: github.RulesetEnforcementActive,
			Conditions: &github.RepositoryRulesetConditions{
				RefName: &github.RepositoryRulesetRefConditionParameters{Include: []string{"release/*"}, Exclude: []string{}}},
			Rules: &github.RepositoryRulesetRules{Deletion: &github.EmptyRuleParameters{}},
		})
		apptest.Must(t, "create the ruleset", err)
		if out, err := octoSSH.git(work, "push", octoSSH.url("octo/hello"), "HEAD:refs/heads/release/1.0"); err != nil {
			t.Fatalf("push release/1.0: %v\n%s", err, out)
		}
		out, err := octoSSH.git(work, "push", octoSSH.url("octo/hello"), ":refs/heads/release/1.0")
		if err == nil || !strings.Contains(out, "No deletion of releases") || !strings.Contains(out, "Cannot delete this branch.") {
			t.Fatalf("a deletion the ruleset forbids: %v\n%s", err, out)
		}
	})
	apptest.Step(t, "deploy keys: read-only clones, read-write pushes", func(t *testing.T) {
		ro, rw := newSSHClient(t, addr, knownHosts), newSSHClient(t, addr, knownHosts)
		_, _, err := c.Repositories.CreateKey(ctx, "octo", "hello", github.CreateDeployKeyRequest{Title: github.Ptr("ci"), Key: ro.pub})
		apptest.Must(t, "add the read-only deploy key", err)
		_, _, err = c.Repositories.CreateKey(ctx, "octo", "hello", github.CreateDeployKeyRequest{Title: github.Ptr("release"), Key: rw.pub, ReadOnly: github.Ptr(false)})
		apptest.Must(t, "add the read-write deploy key", err)
		if out, err := ro.git(".", "clone", "-q", ro.url("octo/hello"), filepath.Join(t.TempDir(), "ro")); err != nil {
			t.Fatalf("a read-only deploy key clones: %v\n%s", err, out)
		}
		out, err := ro.git(work, "push", ro.url("octo/hello"), "HEAD:refs/heads/ro")
		if err == nil || !strings.Contains(out, "ERROR: The key you are authenticating with has been marked as read only.") {
			t.Fatalf("a read-only deploy key pushes: %v\n%s", err, out)
		}
		if out, err := rw.git(work, "push", rw.url("octo/hello"), "HEAD:refs/heads/rw"); err != nil {
			t.Fatalf("a read-write deploy key pushes: %v\n%s", err, out)
		}
		if out, err := rw.git(".", "ls-remote", rw.url("bob/secret")); err == nil || !strings.Contains(out, "ERROR: Repository not found.") {
			t.Fatalf("a deploy key reaches another repository: %v\n%s", err, out)
		}
		if out, err := rw.shell(); !strings.Contains(out, "Hi octo/hello! You've successfully authenticated") {
			t.Fatalf("a deploy key's greeting: %v\n%s", err, out)
		}
		keys, _, err := c.Repositories.ListKeys(ctx, "octo", "hello", nil)
		apptest.Must(t, "list deploy keys", err)
		if len(keys) != 2 || keys[0].LastUsed == nil {
			t.Fatalf("deploy keys after use: %+v", keys)
		}
	})
	apptest.Step(t, "clones and fetches of an organization's repository are in its audit log", func(t *testing.T) {
		env.Repo(env.Org("acme", octo), "app")
		if out, err := octoSSH.git(work, "push", octoSSH.url("acme/app"), "HEAD:refs/heads/main"); err != nil {
			t.Fatalf("push: %v\n%s", err, out)
		}
		clone := filepath.Join(t.TempDir(), "app")
		if out, err := octoSSH.git(".", "clone", "-q", octoSSH.url("acme/app"), clone); err != nil {
			t.Fatalf("clone: %v\n%s", err, out)
		}
		apptest.Commit(t, work, "Third", map[string]string{"c.txt": "c\n"})
		if out, err := octoSSH.git(work, "push", octoSSH.url("acme/app"), "HEAD:refs/heads/main"); err != nil {
			t.Fatalf("push: %v\n%s", err, out)
		}
		if out, err := octoSSH.git(clone, "fetch", "-q", "origin"); err != nil {
			t.Fatalf("fetch: %v\n%s", err, out)
		}
		log, _, err := env.Client(env.Token(octo, "read:audit_log")).Organizations.GetAuditLog(ctx, "acme",
			&github.GetAuditLogOptions{Phrase: github.Ptr("action:git"), Include: github.Ptr("git")})
		apptest.Must(t, "audit log", err)
		ssh := map[string]int{}
		for _, e := range log {
			if e.AdditionalFields["transport_protocol_name"] == "ssh" {
				ssh[e.GetAction()]++
			}
		}
		if ssh["git.clone"] != 1 || ssh["git.fetch"] != 1 || ssh["git.push"] != 2 {
			t.Fatalf("git events over SSH: %v", ssh)
		}
	})
	apptest.Step(t, "git archive --remote reads as a clone", func(t *testing.T) {
		out, err := octoSSH.git(work, "archive", "--format=tar", "--remote="+octoSSH.url("octo/hello"), "main", "README.md")
		if err != nil || !strings.Contains(out, "# hello\n") {
			t.Fatalf("git archive --remote: %v\n%q", err, out)
		}
		if out, err := octoSSH.git(work, "archive", "--remote="+octoSSH.url("bob/secret"), "main"); err == nil || !strings.Contains(out, "Repository not found.") {
			t.Fatalf("archive of a hidden repository: %v\n%s", err, out)
		}
	})
	apptest.Step(t, "other commands are refused", func(t *testing.T) {
		args := append(strings.Fields(octoSSH.command())[1:], "git@"+octoSSH.host, "ls", "/")
		out, err := exec.Command("ssh", args...).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "only git-upload-pack, git-receive-pack and git-upload-archive are served") {
			t.Fatalf("ssh ls: %v\n%s", err, out)
		}
	})
	apptest.Step(t, "a restart keeps the host key", func(t *testing.T) {
		before, err := os.ReadFile(app.SSHHostKeyFile(env.DataDir))
		apptest.Must(t, "host key", err)
		env.Stop()
		cfg := env.Config
		cfg.SSHAddr = addr // the same port: known_hosts names it
		again := apptest.StartConfig(t, cfg)
		after, err := os.ReadFile(app.SSHHostKeyFile(env.DataDir))
		apptest.Must(t, "host key after", err)
		if string(before) != string(after) || again.Main.SSHAddr() != addr {
			t.Fatalf("the host key changed, or the address: %s", again.Main.SSHAddr())
		}
		// StrictHostKeyChecking=accept-new refuses a changed key for a known host.
		if out, err := octoSSH.git(".", "ls-remote", octoSSH.url("octo/hello")); err != nil {
			t.Fatalf("ls-remote after a restart: %v\n%s", err, out)
		}
	})
}

// TestSSHPushIsRecoveredAsOverHTTP pushes over SSH while the events
// transaction fails (as if the server died after git moved the
// references): the push stays applied with its push_log row, and the
// push recovery records its events once, as for a push over HTTP.
func TestSSHPushIsRecoveredAsOverHTTP(t *testing.T) {
	needSSH(t)
	t.Parallel()
	rec := &apptest.Recorder{}
	env := apptest.Start(t, apptest.WithSSH(), apptest.WithEventSink(rec), apptest.WithImmediatePushRecovery)
	octo := env.User("octo")
	env.Repo(octo, "hello")
	ssh := newSSHClient(t, env.Main.SSHAddr(), filepath.Join(t.TempDir(), "known_hosts"))
	_, _, err := env.Client(env.Token(octo, "write:public_key")).Users.CreateKey(apptest.Ctx(), github.CreateUserKeyRequest{Key: ssh.pub})
	apptest.Must(t, "add the key", err)
	work := apptest.WorkTree(t, map[string]string{"README.md": "hello\n"})
	head := strings.TrimSpace(apptest.Git(t, work, "rev-parse", "HEAD"))
	pushLog := func() int {
		var n int
		apptest.Must(t, "count push_log", env.Q().QueryRowContext(apptest.Ctx(), `SELECT COUNT(*) FROM push_log`).Scan(&n))
		return n
	}

	rec.Fail(true)
	out, err := ssh.git(work, "push", ssh.url("octo/hello"), "main")
	rec.Fail(false)
	if err != nil || !strings.Contains(out, "the push was accepted but the server failed to record it") {
		t.Fatalf("push whose recording fails: %v\n%s", err, out)
	}
	if n := pushLog(); n != 1 || len(rec.Hook("push")) != 0 {
		t.Fatalf("%d push_log rows and %d push hooks before recovery, want 1 and 0", n, len(rec.Hook("push")))
	}
	if n := env.App.PushRecovery.RunOnce(apptest.Ctx()); n != 1 {
		t.Fatalf("recovered %d pushes, want 1", n)
	}
	if n := pushLog(); n != 0 || len(rec.Hook("push")) != 1 || rec.Hook("push")[0].HookPayload["after"] != head {
		t.Fatalf("after recovery: %d push_log rows, push hooks %+v", n, rec.Hook("push"))
	}
}

// TestGistsOverSSH clones and pushes a gist with the real OpenSSH client
// at the platform's gist address over SSH, a path of one segment
// (git@host:ID.git, ssh://git@host:port/ID.git): anyone's key clones it,
// the owner's key pushes and the API shows the push, another user's key
// is refused as over HTTP, so are a directory and a deploy key, and an
// unknown gist is not found.
func TestGistsOverSSH(t *testing.T) {
	needSSH(t)
	t.Parallel()
	env := apptest.Start(t, apptest.WithSSH())
	ctx := apptest.Ctx()
	alice, bob := env.User("alice"), env.User("bob")
	ac := env.Client(env.Token(alice, "gist", "repo", "write:public_key"))
	knownHosts := filepath.Join(t.TempDir(), "known_hosts")
	aliceSSH, bobSSH := newSSHClient(t, env.Main.SSHAddr(), knownHosts), newSSHClient(t, env.Main.SSHAddr(), knownHosts)
	_, _, err := ac.Users.CreateKey(ctx, github.CreateUserKeyRequest{Key: aliceSSH.pub})
	apptest.Must(t, "add alice's key", err)
	_, _, err = env.Client(env.Token(bob, "write:public_key")).Users.CreateKey(ctx, github.CreateUserKeyRequest{Key: bobSSH.pub})
	apptest.Must(t, "add bob's key", err)
	g, _, err := ac.Gists.Create(ctx, github.CreateGistRequest{Public: github.Ptr(false),
		Files: map[github.GistFilename]*github.CreateGistFile{"notes.txt": {Content: "one\n"}}})
	apptest.Must(t, "create the gist", err)
	scp := "git@" + aliceSSH.host + ":" + g.GetID() + ".git"
	clone := filepath.Join(t.TempDir(), "gist")

	apptest.Step(t, "the owner clones at git@host:ID.git, pushes, and the API shows it", func(t *testing.T) {
		if out, err := aliceSSH.git(".", "clone", "-q", scp, clone); err != nil {
			t.Fatalf("clone: %v\n%s", err, out)
		}
		if b, err := os.ReadFile(filepath.Join(clone, "notes.txt")); err != nil || string(b) != "one\n" {
			t.Fatalf("cloned notes.txt: %q %v", b, err)
		}
		apptest.Commit(t, clone, "over SSH", map[string]string{"ssh.txt": "pushed over ssh\n"})
		if out, err := aliceSSH.git(clone, "push", "-q", "origin", "HEAD"); err != nil {
			t.Fatalf("push: %v\n%s", err, out)
		}
		got, _, err := ac.Gists.Get(ctx, g.GetID())
		apptest.Must(t, "get the gist", err)
		if f := got.Files["ssh.txt"]; f.GetContent() != "pushed over ssh\n" {
			t.Fatalf("the gist after the push: %+v", got.Files)
		}
	})
	apptest.Step(t, "another user's key clones at ssh://host:port/ID.git but cannot push", func(t *testing.T) {
		theirs := filepath.Join(t.TempDir(), "theirs")
		if out, err := bobSSH.git(".", "clone", "-q", bobSSH.url(g.GetID()), theirs); err != nil {
			t.Fatalf("bob clones: %v\n%s", err, out)
		}
		apptest.Commit(t, theirs, "bob's", map[string]string{"bob.txt": "bob\n"})
		out, err := bobSSH.git(theirs, "push", "origin", "HEAD")
		if err == nil || !strings.Contains(out, "ERROR: Permission to push to gist "+g.GetID()+" denied: only its owner pushes.") {
			t.Fatalf("bob's push: %v\n%s", err, out)
		}
	})
	apptest.Step(t, "the owner's push of a directory is refused as over HTTP", func(t *testing.T) {
		apptest.Commit(t, clone, "a directory", map[string]string{"dir/a.txt": "a\n"})
		out, err := aliceSSH.git(clone, "push", "origin", "HEAD")
		if err == nil || !strings.Contains(out, "Gist does not support directories.") {
			t.Fatalf("push of a directory: %v\n%s", err, out)
		}
	})
	apptest.Step(t, "an unknown gist and a deploy key find nothing", func(t *testing.T) {
		if out, err := aliceSSH.git(".", "ls-remote", aliceSSH.url("0123456789abcdef0123")); err == nil || !strings.Contains(out, "ERROR: Repository not found.") {
			t.Fatalf("an unknown gist: %v\n%s", err, out)
		}
		env.Repo(alice, "hello")
		deploy := newSSHClient(t, env.Main.SSHAddr(), knownHosts)
		_, _, err := ac.Repositories.CreateKey(ctx, "alice", "hello", github.CreateDeployKeyRequest{Key: deploy.pub, ReadOnly: github.Ptr(false)})
		apptest.Must(t, "add a deploy key", err)
		if out, err := deploy.git(".", "ls-remote", deploy.url(g.GetID())); err == nil || !strings.Contains(out, "ERROR: Repository not found.") {
			t.Fatalf("a deploy key reads a gist: %v\n%s", err, out)
		}
	})
}

// TestSSHURLNamesTheSSHPort checks ssh_url when git over SSH listens off
// port 22: the repository object (REST, GraphQL and a push's webhook)
// names ssh://git@HOST:PORT/OWNER/REPO.git, and git clones and pushes at
// exactly that address, with no port given to ssh otherwise.
func TestSSHURLNamesTheSSHPort(t *testing.T) {
	needSSH(t)
	t.Parallel()
	env := apptest.Start(t, apptest.WithSSH(), apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	ctx := apptest.Ctx()
	octo := env.User("octo")
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo", "admin:public_key", "admin:repo_hook")
	c := env.Client(token)
	client := newSSHClient(t, env.Main.SSHAddr(), filepath.Join(t.TempDir(), "known_hosts"))
	_, _, err := c.Users.CreateKey(ctx, github.CreateUserKeyRequest{Key: client.pub})
	apptest.Must(t, "add the key", err)
	rc := apptest.NewReceiver(t, "s")
	_, _, err = c.Repositories.CreateHook(ctx, "octo", "hello", &github.Hook{Events: []string{"push"},
		Config: &github.HookConfig{URL: github.Ptr(rc.URL), ContentType: github.Ptr("json"), Secret: github.Ptr("s")}})
	apptest.Must(t, "hook", err)
	want := "ssh://git@127.0.0.1:" + client.port + "/octo/hello.git"
	repo, _, err := c.Repositories.Get(ctx, "octo", "hello")
	apptest.Must(t, "get the repository", err)
	if repo.GetSSHURL() != want {
		t.Fatalf("ssh_url %q, want %q", repo.GetSSHURL(), want)
	}
	if got := graphQLSSHURL(t, env, token, "octo", "hello"); got != want {
		t.Fatalf("GraphQL sshUrl %q, want %q", got, want)
	}

	portless := *client
	portless.port = "" // the address names the port
	work := apptest.WorkTree(t, map[string]string{"README.md": "# hello\n"})
	if out, err := portless.git(work, "push", repo.GetSSHURL(), "HEAD:refs/heads/main"); err != nil {
		t.Fatalf("push to ssh_url: %v\n%s", err, out)
	}
	clone := filepath.Join(t.TempDir(), "clone")
	if out, err := portless.git(".", "clone", "-q", repo.GetSSHURL(), clone); err != nil {
		t.Fatalf("clone of ssh_url: %v\n%s", err, out)
	}
	if b, err := os.ReadFile(filepath.Join(clone, "README.md")); err != nil || string(b) != "# hello\n" {
		t.Fatalf("cloned README: %q %v", b, err)
	}
	rc.WaitFor(t, func(d apptest.Delivery) string {
		if e, ok := d.Parsed.(*github.PushEvent); ok {
			return "push " + e.GetRepo().GetSSHURL()
		}
		return ""
	}, "push "+want)
}

// graphQLSSHURL asks POST /api/graphql for the repository's sshUrl.
func graphQLSSHURL(t *testing.T, env *apptest.Env, token, owner, name string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": `query($o: String!, $n: String!) { repository(owner: $o, name: $n) { sshUrl } }`,
		"variables": map[string]string{"o": owner, "n": name}})
	req, err := http.NewRequest(http.MethodPost, env.URL+"/api/graphql", bytes.NewReader(body))
	apptest.Must(t, "GraphQL request", err)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	apptest.Must(t, "GraphQL", err)
	defer resp.Body.Close()
	var out struct {
		Data struct{ Repository struct{ SSHURL string } }
	}
	apptest.Must(t, "GraphQL answer", json.NewDecoder(resp.Body).Decode(&out))
	return out.Data.Repository.SSHURL
}

// TestSuspendedUserSSH: a suspended user's SSH key authenticates nothing
// (ssh -T is refused as an unknown key is) until a site administrator
// lifts the suspension.
func TestSuspendedUserSSH(t *testing.T) {
	needSSH(t)
	t.Parallel()
	env := apptest.Start(t, apptest.WithSSH())
	ctx := apptest.Ctx()
	root, octo := env.User("root", apptest.UserOpts{SiteAdmin: true}), env.User("octo")
	admin := env.Client(env.Token(root, "site_admin"))
	octoSSH := newSSHClient(t, env.Main.SSHAddr(), filepath.Join(t.TempDir(), "known_hosts"))
	_, _, err := env.Client(env.Token(octo, "admin:public_key")).Users.CreateKey(ctx, github.CreateUserKeyRequest{Key: octoSSH.pub})
	apptest.Must(t, "add octo's key", err)

	_, err = admin.Users.Suspend(ctx, "octo", nil)
	apptest.Must(t, "suspend", err)
	if out, err := octoSSH.shell(); err == nil || !strings.Contains(out, "Permission denied") {
		t.Fatalf("a suspended user's key: %v\n%s", err, out)
	}
	_, err = admin.Users.Unsuspend(ctx, "octo")
	apptest.Must(t, "unsuspend", err)
	if out, _ := octoSSH.shell(); !strings.Contains(out, "Hi octo!") {
		t.Fatalf("after unsuspension: %s", out)
	}
}
