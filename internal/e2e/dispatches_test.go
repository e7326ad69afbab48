package e2e_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/repos"
	"forgeapi/internal/webhooks"
)

// TestRepositoryDispatch is peter-evans/repository-dispatch's call: a CI
// app (ghinstallation and go-github) dispatches "deploy" with a client
// payload; the repository's hook and the app's own webhook (subscribed to
// repository_dispatch) receive it signed, with the action, the default
// branch, the payload and the installation, as the platform's schema
// has it. A user's token dispatches too; bad bodies are 422s and a
// token without Contents write is refused.
func TestRepositoryDispatch(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	ctx := apptest.Ctx()
	octo := env.User("octo")
	acme := env.Org("acme", octo)
	repo := env.Repo(acme, "site", apptest.RepoOpts{Private: true})
	token := env.Token(octo, "repo", "admin:repo_hook")
	c := env.Client(token)
	hooks := apptest.NewReceiver(t, "s")
	_, _, err := c.Repositories.CreateHook(ctx, "acme", "site", &github.Hook{Events: []string{"repository_dispatch"},
		Config: &github.HookConfig{URL: github.Ptr(hooks.URL), ContentType: github.Ptr("json"), Secret: github.Ptr("s")}})
	apptest.Must(t, "hook", err)
	appHook := apptest.NewReceiver(t, "app-secret")
	app := env.RegisterApp(acme, "Deployer", "contents:write", apptest.AppOpts{Events: []string{"repository_dispatch"},
		WebhookURL: appHook.URL, WebhookSecret: "app-secret"})
	inst := env.Install(app, acme, repo)
	itr, err := ghinstallation.New(env.Transport(), app.ID, inst.ID, app.PrivateKeyPEM)
	apptest.Must(t, "installation transport", err)
	itr.BaseURL = env.APIBase()
	bot := env.ClientWith(itr)
	describe := func(d apptest.Delivery) string {
		e, ok := d.Parsed.(*github.RepositoryDispatchEvent)
		if !ok {
			return ""
		}
		return e.GetAction() + " " + e.GetBranch() + " " + string(e.ClientPayload) + " " + e.GetSender().GetLogin() +
			" " + itoa(e.GetInstallation().GetID())
	}

	apptest.Step(t, "an app dispatches", func(t *testing.T) {
		payload := json.RawMessage(`{"env":"production","ref":"v1.2.3"}`)
		_, resp, err := bot.Repositories.Dispatch(ctx, "acme", "site", github.DispatchRequestOptions{EventType: "deploy", ClientPayload: &payload})
		apptest.Must(t, "dispatch", err)
		if resp.StatusCode != http.StatusNoContent {
			t.Fatalf("dispatch: %d", resp.StatusCode)
		}
		want := `deploy main {"env":"production","ref":"v1.2.3"} deployer[bot] ` + itoa(inst.ID)
		hooks.WaitFor(t, describe, want)
		appHook.WaitFor(t, describe, want)
	})
	apptest.Step(t, "a user dispatches without a payload", func(t *testing.T) {
		_, resp, err := c.Repositories.Dispatch(ctx, "acme", "site", github.DispatchRequestOptions{EventType: "rebuild"})
		apptest.Must(t, "dispatch", err)
		if resp.StatusCode != http.StatusNoContent {
			t.Fatalf("dispatch: %d", resp.StatusCode)
		}
		hooks.WaitFor(t, describe, "rebuild main {} octo 0")
	})
	apptest.Step(t, "bad bodies", func(t *testing.T) {
		eleven := `{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":11}`
		for _, tc := range []struct{ name, body, field string }{
			{"no event type", `{}`, "event_type"},
			{"a long event type", `{"event_type":"` + string(make101()) + `"}`, "event_type"},
			{"eleven payload keys", `{"event_type":"x","client_payload":` + eleven + `}`, "client_payload"},
			{"a payload that is a list", `{"event_type":"x","client_payload":[1]}`, "client_payload"},
		} {
			resp, body := env.DoJSON("POST", "/repos/acme/site/dispatches", token, tc.body)
			if e := apptest.WantError(t, tc.name, resp, body, http.StatusUnprocessableEntity); len(e.Errors) != 1 || e.Errors[0].Field != tc.field {
				t.Fatalf("%s: %+v", tc.name, e)
			}
		}
	})
	apptest.Step(t, "tokens without Contents write", func(t *testing.T) {
		reader := env.FineGrainedToken(octo, acme, []*repos.Repository{repo}, "contents:read")
		resp, body := env.DoJSON("POST", "/repos/acme/site/dispatches", reader, `{"event_type":"x"}`)
		apptest.WantStatus(t, "contents:read", resp, body, http.StatusForbidden)
		stranger := env.Token(env.User("eve"), "repo")
		resp, body = env.DoJSON("POST", "/repos/acme/site/dispatches", stranger, `{"event_type":"x"}`)
		apptest.WantStatus(t, "a stranger", resp, body, http.StatusNotFound)
	})
}

func make101() []byte {
	b := make([]byte, 101)
	for i := range b {
		b[i] = 'x'
	}
	return b
}
