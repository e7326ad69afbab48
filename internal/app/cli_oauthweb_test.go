package app_test

import (
	"context"
	"encoding/json"
	"testing"

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
