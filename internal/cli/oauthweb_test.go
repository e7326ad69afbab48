package cli_test

import (
	"context"
	"encoding/json"
	"testing"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apptest"
)

// TestCLIOAuthAppConfigure sets an OAuth application's callback URL and
// device flow with forgeapi oauth-app configure; a flag left out keeps
// its value, and a bad URL is refused.
func TestCLIOAuthAppConfigure(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	env.User("octo")
	run := func(args ...string) string { return cliOK(t, append(args, storeFlags(env)...)...) }
	var created struct {
		ClientID string `json:"client_id"`
	}
	apptest.Must(t, "oauth-app create", json.Unmarshal([]byte(run("oauth-app", "create", "CI", "--owner", "octo")), &created))
	run("oauth-app", "configure", created.ClientID, "--callback-url", "https://ci.example/cb")
	run("oauth-app", "configure", created.ClientID, "--device-flow=false")
	set, err := env.App.OAuthWeb.Settings(context.Background(), created.ClientID)
	if err != nil || set.CallbackURL != "https://ci.example/cb" || set.DeviceFlow {
		t.Fatalf("settings %+v %v", set, err)
	}
	if code, _, _ := cliRun(t, append([]string{"oauth-app", "configure", created.ClientID, "--callback-url", "ftp://x"}, storeFlags(env)...)...); code == 0 {
		t.Fatal("an ftp callback URL was taken")
	}
}

// TestCLIOAuthAppChosenCredentials registers an OAuth application under a
// chosen client id and secret (gh's built-in ones, as a deployment does for
// gh auth login); a taken or malformed client id and a short secret are
// refused.
func TestCLIOAuthAppChosenCredentials(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	env.User("octo")
	const clientID, secret = "178c6fc778ccc68e1d6a", "34ddeff2b558a23d38fba8a6de74f086ede1cc0b"
	run := func(args ...string) string { return cliOK(t, append(args, storeFlags(env)...)...) }
	var created struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
	}
	apptest.Must(t, "oauth-app create", json.Unmarshal([]byte(run("oauth-app", "create", "GitHub CLI", "--owner", "octo",
		"--client-id", clientID, "--client-secret", secret)), &created))
	if created.ClientID != clientID || created.ClientSecret != secret {
		t.Fatalf("created %+v", created)
	}
	ctx := context.Background()
	app, err := accounts.AppByClientID(ctx, env.Q(), clientID)
	apptest.Must(t, "the app by its chosen client id", err)
	if ok, err := accounts.CheckAppSecret(ctx, env.Q(), app.ID, secret); err != nil || !ok {
		t.Fatalf("the chosen secret does not check: %v %v", ok, err)
	}
	for _, bad := range [][]string{
		{"--client-id", clientID},                            // taken
		{"--client-id", "has space"},                         // malformed
		{"--client-id", "fresh", "--client-secret", "short"}, // too short
	} {
		code, _, errOut := cliRun(t, append(append([]string{"oauth-app", "create", "Other", "--owner", "octo"}, bad...), storeFlags(env)...)...)
		if code == 0 || errOut == "" {
			t.Errorf("oauth-app create %v: exit %d, %q", bad, code, errOut)
		}
	}
}
