package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"forgeapi/internal/app"
	"forgeapi/internal/apptest"
	"forgeapi/internal/auth"
	"forgeapi/internal/cli"
	"forgeapi/internal/secretbox"
)

// cliRun runs the forgeapi command line in-process.
func cliRun(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = cli.Execute(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// cliOK runs a command that must succeed and returns its stdout.
func cliOK(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errOut := cliRun(t, args...)
	if code != 0 {
		t.Fatalf("forgeapi %s: exit %d, stderr %q", strings.Join(args, " "), code, errOut)
	}
	return out
}

// storeFlags points a command at an Env's store.
func storeFlags(env *apptest.Env) []string {
	flags := []string{"--data", env.DataDir}
	if env.Config.DatabaseURL != "" {
		flags = append(flags, "--database", env.Config.DatabaseURL)
	}
	return flags
}

func TestCLICreatesEverythingOnAFreshDataDir(t *testing.T) {
	t.Parallel()
	data := filepath.Join(t.TempDir(), "fresh")
	run := func(args ...string) string { return cliOK(t, append(args, "--data", data)...) }

	var user map[string]any
	if err := json.Unmarshal([]byte(run("user", "create", "octocat", "--password", "pw", "--email", "o@example.com", "--name", "Octo Cat", "--site-admin")), &user); err != nil {
		t.Fatalf("user create prints JSON: %v", err)
	}
	if user["login"] != "octocat" || user["type"] != "User" || user["site_admin"] != true {
		t.Errorf("user: %v", user)
	}
	run("user", "create", "hubot", "--totp-secret", "JBSWY3DPEHPK3PXP")
	run("org", "create", "acme", "--owner", "octocat")
	run("org", "create", "beta", "--owner", "octocat")
	run("org", "add-member", "acme", "hubot", "--role", "owner")
	run("enterprise", "create", "acme-corp", "--owner", "octocat", "--org", "acme")
	run("enterprise", "add-org", "acme-corp", "beta")
	var repo map[string]any
	if err := json.Unmarshal([]byte(run("repo", "create", "acme/widgets", "--private", "--default-branch", "trunk", "--description", "gears")), &repo); err != nil {
		t.Fatalf("repo create prints JSON: %v", err)
	}
	if repo["full_name"] != "acme/widgets" || repo["private"] != true || repo["default_branch"] != "trunk" || repo["description"] != "gears" {
		t.Errorf("repo: %v", repo)
	}
	run("repo", "create", "octocat/hello")
	var oauthApp map[string]any
	if err := json.Unmarshal([]byte(run("oauth-app", "create", "My CI", "--owner", "acme", "--url", "https://ci.example")), &oauthApp); err != nil {
		t.Fatalf("oauth-app create prints JSON: %v", err)
	}
	if id, _ := oauthApp["client_id"].(string); len(id) != 20 || oauthApp["client_secret"] == "" {
		t.Errorf("app: %v", oauthApp)
	}
	tokenOf := func(out string) string {
		t.Helper()
		if strings.Count(out, "\n") != 1 || !strings.HasSuffix(out, "\n") {
			t.Fatalf("token output is not one line: %q", out)
		}
		return strings.TrimSpace(out)
	}
	classic := tokenOf(run("token", "create", "--user", "octocat", "--scopes", "repo,admin:repo_hook"))
	fine := tokenOf(run("token", "create", "--user", "octocat", "--fine-grained", "--resource-owner", "acme",
		"--repositories", "widgets", "--permissions", "contents:read,repository_hooks:write"))
	installation := tokenOf(run("token", "create", "--installation", "--org", "acme", "--all-repositories", "--permissions", "administration:write"))
	// Again: the same app and installation, a token narrowed to one repository.
	narrowed := tokenOf(run("token", "create", "--installation", "--org", "acme", "--repositories", "widgets", "--permissions", "administration:read"))
	if _, err := os.Stat(filepath.Join(data, "forgeapi.db")); err != nil {
		t.Fatalf("no SQLite database under --data: %v", err)
	}

	// The server started on that directory honours what the CLI made.
	env := apptest.StartConfig(t, app.Config{Addr: "127.0.0.1:0", DataDir: data, Logger: quietLogger()})
	for _, token := range []string{classic, fine, installation} {
		resp, body := env.Do("GET", "/repos/acme/widgets", token, nil)
		apptest.WantStatus(t, "token from the CLI", resp, body, 200)
	}
	resp, body := env.Get("/user", apptest.Basic("octocat", "pw"))
	apptest.WantStatus(t, "password from the CLI", resp, body, 200)
	resp, body = env.DoJSON("POST", "/orgs/acme/repos", installation, `{"name":"by-bot"}`)
	apptest.WantStatus(t, "installation token from the CLI creates", resp, body, 201)
	// The CLI's installation token belongs to a real installation of the
	// app it registered: the installation's own routes know it, and the
	// creation was the app's bot's.
	resp, body = env.Do("GET", "/installation/repositories", installation, nil)
	apptest.WantStatus(t, "the CLI token's installation", resp, body, 200)
	if !strings.Contains(string(body), `"repository_selection":"all"`) || !strings.Contains(string(body), `"full_name":"acme/widgets"`) {
		t.Errorf("installation repositories: %s", body)
	}
	resp, body = env.Do("GET", "/installation/repositories", narrowed, nil)
	apptest.WantStatus(t, "the narrowed CLI token's installation", resp, body, 200)
	if !strings.Contains(string(body), `"total_count":1`) || !strings.Contains(string(body), `"repository_selection":"selected"`) {
		t.Errorf("narrowed installation repositories: %s", body)
	}
	resp, body = env.Do("GET", "/repos/acme/by-bot/events", classic, nil)
	apptest.WantStatus(t, "events of the bot's repository", resp, body, 200)
	if !strings.Contains(string(body), `"login":"forgeapi-app[bot]"`) {
		t.Errorf("the bot did not create acme/by-bot: %s", body)
	}
	resp, body = env.Do("GET", "/orgs/beta/repos", classic, nil)
	apptest.WantStatus(t, "second organization", resp, body, 200)
}

func TestCLIWorksOnARunningServersStore(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	flags := storeFlags(env)
	cliOK(t, append([]string{"user", "create", "octocat"}, flags...)...)
	cliOK(t, append([]string{"repo", "create", "octocat/hello", "--private"}, flags...)...)
	token := strings.TrimSpace(cliOK(t, append([]string{"token", "create", "--user", "octocat", "--scopes", "repo"}, flags...)...))

	repo, _, err := env.Client(token).Repositories.Get(apptest.Ctx(), "octocat", "hello")
	apptest.Must(t, "server reads what the CLI wrote", err)
	if !repo.GetPrivate() {
		t.Errorf("repo %+v", repo)
	}
	// And the CLI sees what the server wrote.
	resp, body := env.DoJSON("POST", "/user/repos", token, `{"name":"made-over-http"}`)
	apptest.WantStatus(t, "create over HTTP", resp, body, 201)
	cliOK(t, append([]string{"token", "create", "--user", "octocat", "--fine-grained", "--resource-owner", "octocat",
		"--repositories", "made-over-http", "--permissions", "contents:read"}, flags...)...)
}

func TestCLIBadInputWritesNothing(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	flags := storeFlags(env)
	octocat := env.User("octocat")
	env.User("loner")
	acme := env.Org("acme", octocat)
	env.Org("beta", octocat)
	env.Enterprise("ent", octocat, acme)
	env.Repo(acme, "widgets")
	before := snapshot(t, env)

	for _, args := range [][]string{
		{"user", "create", "octocat"},
		{"user", "create", "OCTOCAT"},
		{"user", "create", "bad_login!"},
		{"user", "create", "ok", "--totp-secret", "not base32!"},
		{"user", "create"},
		{"org", "create", "acme", "--owner", "octocat"},
		{"org", "create", "neworg", "--owner", "ghost"},
		{"org", "create", "neworg"},
		{"org", "create", "octocat", "--owner", "octocat"},
		{"org", "add-member", "acme", "ghost"},
		{"org", "add-member", "ghost", "octocat"},
		{"org", "add-member", "acme", "loner", "--role", "king"},
		{"enterprise", "create", "ent", "--owner", "ghost"},
		{"enterprise", "create", "ent", "--owner", "octocat", "--org", "ghost"},
		{"enterprise", "create", "Bad Slug", "--owner", "octocat"},
		{"enterprise", "add-org", "ghost", "acme"},
		{"repo", "create", "acme/widgets"},
		{"repo", "create", "acme/WIDGETS"},
		{"repo", "create", "ghost/x"},
		{"repo", "create", "noslash"},
		{"repo", "create", "acme/bad name"},
		{"repo", "create", "acme/x", "--default-branch", "a..b"},
		{"oauth-app", "create", "CI"},
		{"oauth-app", "create", "CI", "--owner", "ghost"},
		{"token", "create"},
		{"token", "create", "--user", "ghost"},
		{"token", "create", "--user", "octocat", "--scopes", "repo,bogus"},
		{"token", "create", "--user", "octocat", "--permissions", "contents:read"},
		{"token", "create", "--user", "octocat", "--fine-grained", "--resource-owner", "acme", "--permissions", "contents"},
		{"token", "create", "--user", "octocat", "--fine-grained", "--resource-owner", "acme", "--permissions", "contents:admin"},
		{"token", "create", "--user", "octocat", "--fine-grained", "--resource-owner", "acme", "--permissions", "nope:read"},
		{"token", "create", "--user", "octocat", "--fine-grained", "--resource-owner", "acme", "--permissions", ""},
		{"token", "create", "--user", "octocat", "--fine-grained", "--permissions", "contents:read"},
		{"token", "create", "--user", "loner", "--fine-grained", "--resource-owner", "acme", "--permissions", "contents:read"},
		{"token", "create", "--user", "octocat", "--fine-grained", "--resource-owner", "acme", "--repositories", "ghost", "--permissions", "contents:read"},
		{"token", "create", "--installation", "--org", "acme", "--repositories", "ghost", "--permissions", "contents:read"},
		{"token", "create", "--installation", "--org", "ghost", "--permissions", "contents:read"},
		{"token", "create", "--installation", "--permissions", "contents:read"},
		{"token", "create", "--installation", "--fine-grained", "--org", "acme", "--permissions", "contents:read"},
		{"token", "list", "--user", "ghost"},
		{"token", "revoke", "abc"},
		{"token", "revoke", "999999"},
		{"user", "set-password", "ghost", "--password", "pw"},
		{"user", "set-password", "octocat"},
		{"user", "totp", "enable", "ghost"},
		{"user", "totp", "enable", "octocat", "--secret", "not base32!"},
		{"user", "totp", "disable", "ghost"},
		{"user", "delete", "ghost"},
		{"user", "delete", "octocat"}, // the only owner of acme
		{"org", "remove-member", "acme", "loner"},
		{"org", "remove-member", "acme", "octocat"}, // its last owner
		{"org", "remove-member", "ghost", "octocat"},
		{"org", "remove-member", "acme", "ghost"},
		{"repo", "delete", "acme/ghost"},
		{"repo", "delete", "noslash"},
		{"oauth-app", "list", "--owner", "ghost"},
		{"oauth-app", "delete", "no-such-client-id"},
		{"enterprise", "remove-org", "ghost", "acme"},
		{"enterprise", "remove-org", "ent", "ghost"},
		{"enterprise", "remove-org", "ent", "beta"}, // not in it
		{"permissions", "--format", "xml"},
		{"no-such-command"},
		{"user", "create", "x", "--no-such-flag"},
	} {
		code, out, errOut := cliRun(t, append(args, flags...)...)
		what := strings.Join(args, " ")
		if code == 0 {
			t.Errorf("forgeapi %s: exit 0", what)
			continue
		}
		if out != "" {
			t.Errorf("forgeapi %s: stdout %q", what, out)
		}
		if !strings.HasPrefix(errOut, "forgeapi: ") || strings.Count(errOut, "\n") != 1 || !strings.HasSuffix(errOut, "\n") {
			t.Errorf("forgeapi %s: stderr is not one error line: %q", what, errOut)
		}
	}
	if after := snapshot(t, env); after != before {
		t.Fatalf("bad input changed the store:\nbefore %s\nafter  %s", before, after)
	}
}

func TestCLIRefusesBeforeTouchingAFreshDataDir(t *testing.T) {
	t.Parallel()
	data := filepath.Join(t.TempDir(), "untouched")
	for _, args := range [][]string{
		{"org", "create", "acme"},
		{"token", "create", "--user", "u", "--scopes", "bogus"},
		{"token", "create", "--user", "u", "--fine-grained", "--resource-owner", "u", "--permissions", "contents"},
		{"user", "create", "bad_login!"},
		{"repo", "create", "a/bad name"},
		{"serve", "--rate-limit", "maybe"},
	} {
		if code, _, _ := cliRun(t, append(args, "--data", data)...); code == 0 {
			t.Errorf("forgeapi %s: exit 0", strings.Join(args, " "))
		}
		if _, err := os.Stat(data); !os.IsNotExist(err) {
			t.Fatalf("forgeapi %s created the data directory", strings.Join(args, " "))
		}
	}
}

// snapshot summarises every table the admin commands write, and the git
// repositories on disk.
func snapshot(t *testing.T, env *apptest.Env) string {
	t.Helper()
	var b strings.Builder
	for _, table := range []string{"accounts", "org_members", "enterprises", "enterprise_owners", "enterprise_orgs", "oauth_apps", "repositories", "tokens"} {
		var n int
		err := env.Q().QueryRowContext(context.Background(), `SELECT count(*) FROM `+table).Scan(&n)
		apptest.Must(t, "count "+table, err)
		b.WriteString(table + "=" + strconv.Itoa(n) + " ")
	}
	var roles string
	rows, err := env.Q().QueryContext(context.Background(), `SELECT org_id, user_id, role FROM org_members ORDER BY org_id, user_id`)
	apptest.Must(t, "members", err)
	for rows.Next() {
		var o, u int64
		var r string
		apptest.Must(t, "scan", rows.Scan(&o, &u, &r))
		roles += fmt.Sprintf("%d:%d:%s,", o, u, r)
	}
	rows.Close()
	entries, _ := os.ReadDir(filepath.Join(env.DataDir, "git"))
	return b.String() + "members=" + roles + " git=" + strconv.Itoa(len(entries))
}

// TestCLIUserTOTPSecretIsSealed: `user create --totp-secret` stores the
// seed sealed, prints nothing of it, and the server started on that data
// directory checks codes made from it.
func TestCLIUserTOTPSecretIsSealed(t *testing.T) {
	t.Parallel()
	data := filepath.Join(t.TempDir(), "fresh")
	const seed = "JBSWY3DPEHPK3PXP"
	out := cliOK(t, "user", "create", "twofa", "--password", "pw", "--totp-secret", seed, "--data", data)
	if strings.Contains(strings.ToUpper(out), seed) {
		t.Fatalf("user create printed the TOTP secret: %s", out)
	}
	env := apptest.StartConfig(t, app.Config{Addr: "127.0.0.1:0", DataDir: data, Logger: quietLogger()})
	var stored string
	apptest.Must(t, "read totp_secret", env.Q().QueryRowContext(context.Background(),
		`SELECT totp_secret FROM accounts WHERE login = 'twofa'`).Scan(&stored))
	if stored == seed || !secretbox.IsSealed(stored) {
		t.Fatalf("totp_secret stored as %q: want it sealed", stored)
	}
	code, err := auth.TOTPCode(seed, time.Now())
	apptest.Must(t, "code", err)
	resp, body := env.DoJSON("POST", "/authorizations", "", `{"scopes": ["repo"], "note": "cli"}`,
		"Authorization", apptest.Basic("twofa", "pw"), "X-Service-OTP", code)
	apptest.WantStatus(t, "password and OTP of a user made by the CLI", resp, body, 201)
}
