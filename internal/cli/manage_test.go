package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/app"
	"forgeapi/internal/apptest"
	"forgeapi/internal/auth"
	"forgeapi/internal/store"
	"forgeapi/internal/testwait"
)

// noLookupCache turns the server's token and account caches off: on
// SQLite a change by another process (the admin command) reaches a
// running server only once its cache entry expires (Config.LookupCacheTTL,
// 1 s by default; apptest keeps them an hour).
func noLookupCache(c *app.Config) { c.LookupCacheTTL = -1 }

// count runs a SELECT count(*) on the Env's store.
func count(t *testing.T, env *apptest.Env, query string, args ...any) int {
	t.Helper()
	var n int
	apptest.Must(t, query, env.Q().QueryRowContext(context.Background(), query, args...).Scan(&n))
	return n
}

func TestCLITokenListAndRevoke(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, noLookupCache)
	flags := storeFlags(env)
	env.User("octocat")
	hubot := env.User("hubot")
	keep := env.Token(hubot, "repo")
	token := strings.TrimSpace(cliOK(t, append([]string{"token", "create", "--user", "octocat", "--scopes", "repo"}, flags...)...))

	out := cliOK(t, append([]string{"token", "list", "--user", "octocat"}, flags...)...)
	if strings.Contains(out, token) {
		t.Fatalf("token list prints the token value: %s", out)
	}
	var list []auth.TokenInfo
	apptest.Must(t, "decode token list", json.Unmarshal([]byte(out), &list))
	if len(list) != 1 || list[0].User != "octocat" || list[0].Kind != auth.KindClassic || list[0].LastEight != token[len(token)-8:] || list[0].Scopes != "repo" {
		t.Fatalf("token list %s", out)
	}
	id := list[0].ID
	apptest.Must(t, "decode all tokens", json.Unmarshal([]byte(cliOK(t, append([]string{"token", "list"}, flags...)...)), &list))
	if len(list) != 2 {
		t.Errorf("token list without --user lists %d tokens, want 2", len(list))
	}

	resp, body := env.Get("/user", "Bearer "+token)
	apptest.WantStatus(t, "token before revoke", resp, body, 200)
	cliOK(t, append([]string{"token", "revoke", fmt.Sprint(id)}, flags...)...)
	resp, body = env.Get("/user", "Bearer "+token)
	apptest.WantError(t, "revoked token", resp, body, 401)
	resp, body = env.Get("/user", "Bearer "+keep)
	apptest.WantStatus(t, "the other token", resp, body, 200)
}

func TestCLIUserPasswordTOTPAndDelete(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, noLookupCache)
	flags := storeFlags(env)
	run := func(args ...string) string { return cliOK(t, append(args, flags...)...) }
	octocat := env.User("octocat", apptest.UserOpts{Password: "old-password"})

	// A change of password or two-factor ends the user's console sessions
	// (no one else's).
	bystander := env.User("bystander")
	signIn := func(userID int64) {
		now := time.Now().UTC()
		_, err := env.Q().ExecContext(context.Background(), `INSERT INTO console_sessions (id_hash, user_id, state, csrf_token, created_at, expires_at)
			VALUES ($1, $2, 'active', 'csrf', $3, $4)`, fmt.Sprint("session-", userID, "-", now.UnixNano()), userID, now, now.Add(time.Hour))
		apptest.Must(t, "console session", err)
	}
	sessions := func(userID int64) int {
		return count(t, env, `SELECT count(*) FROM console_sessions WHERE user_id = $1`, userID)
	}
	signIn(octocat.ID)
	signIn(bystander.ID)
	run("user", "set-password", "octocat", "--password", "new-password")
	if sessions(octocat.ID) != 0 || sessions(bystander.ID) != 1 {
		t.Errorf("after set-password: %d console sessions of the user, %d of another, want 0 and 1", sessions(octocat.ID), sessions(bystander.ID))
	}
	resp, body := env.Get("/user", apptest.Basic("octocat", "new-password"))
	apptest.WantStatus(t, "new password", resp, body, 200)
	resp, body = env.Get("/user", apptest.Basic("octocat", "old-password"))
	apptest.WantError(t, "old password", resp, body, 401)

	hasTOTP := func() bool {
		u, err := accounts.ByID(context.Background(), env.Q(), octocat.ID)
		apptest.Must(t, "read user", err)
		return u.HasTOTP
	}
	signIn(octocat.ID)
	run("user", "totp", "enable", "octocat", "--secret", "JBSWY3DPEHPK3PXP")
	if sessions(octocat.ID) != 0 {
		t.Error("totp enable kept the user's console sessions")
	}
	if !hasTOTP() {
		t.Fatal("totp enable --secret did not turn TOTP on")
	}
	createAuthorization := func(note string) (*http.Response, []byte) { // a route that asks for the OTP
		return env.DoJSON("POST", "/authorizations", "", `{"scopes":["repo"],"note":"`+note+`"}`, "Authorization", apptest.Basic("octocat", "new-password"))
	}
	resp, _ = createAuthorization("with totp")
	if resp.StatusCode != 401 || !strings.HasPrefix(resp.Header.Get("X-Service-OTP"), "required") {
		t.Errorf("password without OTP after totp enable: %d, X-Service-OTP %q", resp.StatusCode, resp.Header.Get("X-Service-OTP"))
	}
	signIn(octocat.ID)
	run("user", "totp", "disable", "octocat")
	if sessions(octocat.ID) != 0 {
		t.Error("totp disable kept the user's console sessions")
	}
	if hasTOTP() {
		t.Fatal("totp disable left TOTP on")
	}
	resp, body = createAuthorization("without totp")
	apptest.WantStatus(t, "password after totp disable", resp, body, 201)
	secret := run("user", "totp", "enable", "octocat")
	if strings.Count(secret, "\n") != 1 || !hasTOTP() {
		t.Fatalf("totp enable without --secret printed %q", secret)
	}
	if _, err := auth.TOTPCode(strings.TrimSpace(secret), store.Now()); err != nil {
		t.Errorf("printed secret %q is not base32: %v", secret, err)
	}

	// Deleting: refused while the user owns a repository or is an
	// organization's only owner; then its tokens and memberships go too.
	hubot := env.User("hubot")
	acme := env.Org("acme", octocat, hubot)
	env.Repo(octocat, "hello")
	token := env.Token(octocat, "repo")
	if code, _, errOut := cliRun(t, append([]string{"user", "delete", "octocat"}, flags...)...); code != 1 || !strings.Contains(errOut, "octocat/hello") {
		t.Errorf("delete of a repository owner: exit %d, %q", code, errOut)
	}
	run("repo", "delete", "octocat/hello")
	if code, _, errOut := cliRun(t, append([]string{"user", "delete", "octocat"}, flags...)...); code != 1 || !strings.Contains(errOut, "only owner of acme") {
		t.Errorf("delete of the only owner: exit %d, %q", code, errOut)
	}
	run("org", "add-member", "acme", "hubot", "--role", "owner")
	run("user", "delete", "octocat")
	resp, body = env.Get("/users/octocat", "")
	apptest.WantError(t, "deleted user", resp, body, 404)
	resp, body = env.Get("/user", "Bearer "+token)
	apptest.WantError(t, "deleted user's token", resp, body, 401)
	if n := count(t, env, `SELECT count(*) FROM org_members WHERE org_id = $1`, acme.ID); n != 1 {
		t.Errorf("acme has %d members after the delete, want 1", n)
	}
}

func TestCLIOrgEnterpriseAndAppRemovals(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	flags := storeFlags(env)
	run := func(args ...string) string { return cliOK(t, append(args, flags...)...) }
	octocat := env.User("octocat")
	hubot := env.User("hubot")
	acme := env.Org("acme", octocat, hubot)
	ent := env.Enterprise("ent", octocat, acme)

	run("org", "remove-member", "acme", "hubot")
	if role, err := accounts.MemberRole(context.Background(), env.Q(), acme.ID, hubot.ID); err != nil || role != "" {
		t.Errorf("hubot's role after remove-member: %q %v", role, err)
	}
	run("enterprise", "remove-org", "ent", "acme")
	if in, err := accounts.EnterpriseHasOrg(context.Background(), env.Q(), ent.ID, acme.ID); err != nil || in {
		t.Errorf("acme still in ent: %v %v", in, err)
	}

	var created struct {
		ClientID string `json:"client_id"`
	}
	apptest.Must(t, "oauth-app create", json.Unmarshal([]byte(run("oauth-app", "create", "CI", "--owner", "acme", "--url", "https://ci.example")), &created))
	run("oauth-app", "create", "Other", "--owner", "octocat")
	var apps []map[string]any
	apptest.Must(t, "oauth-app list", json.Unmarshal([]byte(run("oauth-app", "list", "--owner", "acme")), &apps))
	if len(apps) != 1 || apps[0]["client_id"] != created.ClientID || apps[0]["owner"] != "acme" || apps[0]["name"] != "CI" {
		t.Fatalf("oauth-oauth-app list --owner acme: %v", apps)
	}
	if _, ok := apps[0]["client_secret"]; ok {
		t.Errorf("oauth-oauth-app list prints the secret")
	}
	run("oauth-app", "delete", created.ClientID)
	apptest.Must(t, "oauth-app list", json.Unmarshal([]byte(run("oauth-app", "list")), &apps))
	if len(apps) != 1 || apps[0]["name"] != "Other" {
		t.Errorf("oauth-oauth-app list after delete: %v", apps)
	}
}

func TestCLIRepoDeleteRemovesGitDataHooksAndDeliveries(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	flags := storeFlags(env)
	octocat := env.User("octocat")
	acme := env.Org("acme", octocat)
	widgets := env.Repo(acme, "widgets")
	other := env.Repo(acme, "other")
	token := env.Token(octocat, "repo", "admin:repo_hook")
	fine := env.FineGrainedToken(octocat, acme, nil, "contents:read")
	_, err := env.Q().ExecContext(context.Background(), `UPDATE tokens SET repository_ids = $1 WHERE resource_owner_id = $2`,
		fmt.Sprintf("[%d,%d]", widgets.ID, other.ID), acme.ID)
	apptest.Must(t, "select both repositories", err)
	// A hook (refused deliveries are recorded too) and an event.
	resp, body := env.DoJSON("POST", "/repos/acme/widgets/hooks", token, `{"config":{"url":"http://127.0.0.1:1/hook"},"events":["push"]}`)
	apptest.WantStatus(t, "create hook", resp, body, 201)
	resp, body = env.DoJSON("PATCH", "/repos/acme/widgets", token, `{"description":"an event"}`)
	apptest.WantStatus(t, "edit", resp, body, 200)
	testwait.Until(t, "the ping delivery", func() bool {
		return count(t, env, `SELECT count(*) FROM hook_deliveries d JOIN hooks h ON h.id = d.hook_id WHERE h.repo_id = $1`, widgets.ID) > 0
	})
	events := count(t, env, `SELECT count(*) FROM events WHERE repo_id = $1`, widgets.ID)
	gitDir := env.App.Repos.GitDir(widgets.ID)
	if _, err := os.Stat(gitDir); err != nil {
		t.Fatalf("no git directory before the delete: %v", err)
	}

	cliOK(t, append([]string{"repo", "delete", "acme/widgets"}, flags...)...)
	resp, body = env.Do("GET", "/repos/acme/widgets", token, nil)
	apptest.WantError(t, "deleted repository", resp, body, 404)
	if _, err := os.Stat(gitDir); !os.IsNotExist(err) {
		t.Errorf("git directory after the delete: %v", err)
	}
	entries, _ := os.ReadDir(env.App.Repos.GitRoot)
	if len(entries) != 1 {
		t.Errorf("git root holds %d entries, want the other repository's only", len(entries))
	}
	if n := count(t, env, `SELECT count(*) FROM hooks WHERE repo_id = $1`, widgets.ID); n != 0 {
		t.Errorf("%d hooks left", n)
	}
	if n := count(t, env, `SELECT count(*) FROM hook_deliveries WHERE repository_id = $1`, widgets.ID); n != 0 {
		t.Errorf("%d deliveries left", n)
	}
	if n := count(t, env, `SELECT count(*) FROM events WHERE repo_id = $1`, widgets.ID); n != events || n == 0 {
		t.Errorf("%d events of the repository after the delete, want the %d before", n, events)
	}
	var ids string
	apptest.Must(t, "token selection", env.Q().QueryRowContext(context.Background(),
		`SELECT repository_ids FROM tokens WHERE resource_owner_id = $1`, acme.ID).Scan(&ids))
	if ids != fmt.Sprintf("[%d]", other.ID) {
		t.Errorf("fine-grained token selects %s after the delete, want [%d]", ids, other.ID)
	}
	resp, body = env.Do("GET", "/repos/acme/other", fine, nil)
	apptest.WantStatus(t, "the other repository", resp, body, 200)
}
