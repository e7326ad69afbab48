package webhooks_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"forgeapi/internal/apptest"
	"forgeapi/internal/webhooks"
)

// TestHookConfigLimits: a config url, secret, username or password over
// its limit is a 422 naming the field and the limit, on create and on a
// config update; values of exactly the limits are stored.
func TestHookConfigLimits(t *testing.T) {
	t.Parallel()
	f := newHookFixture(t)
	urlOf := func(n int) string { // an https URL of n characters
		const prefix = "https://example.com/"
		return prefix + strings.Repeat("p", n-len(prefix))
	}
	hook := f.createRepoHook(webHook(urlOf(webhooks.MaxURLLength)))
	if hook.GetConfig().GetURL() != urlOf(webhooks.MaxURLLength) {
		t.Fatalf("a URL of exactly the limit: %q", hook.GetConfig().GetURL())
	}
	for _, c := range []struct {
		field, value string
		max          int
	}{
		{"url", urlOf(webhooks.MaxURLLength + 1), webhooks.MaxURLLength},
		{"secret", strings.Repeat("s", webhooks.MaxSecretLength+1), webhooks.MaxSecretLength},
		{"username", strings.Repeat("u", webhooks.MaxUsernameLength+1), webhooks.MaxUsernameLength},
		{"password", strings.Repeat("w", webhooks.MaxPasswordLength+1), webhooks.MaxPasswordLength},
	} {
		config := map[string]string{"url": "https://example.com/other", c.field: c.value}
		body, err := json.Marshal(map[string]any{"config": config})
		apptest.Must(t, "encode", err)
		for _, path := range []string{f.repoPath(""), f.orgPath("")} {
			resp, b := f.env.DoJSON("POST", path, f.token, string(body))
			apptest.WantTooLong(t, "create with a long "+c.field, resp, b, "Hook", c.field, c.max)
		}
		body, err = json.Marshal(map[string]string{c.field: c.value})
		apptest.Must(t, "encode", err)
		resp, b := f.env.DoJSON("PATCH", f.repoPath("/"+strconv.FormatInt(hook.GetID(), 10)+"/config"), f.token, string(body))
		apptest.WantTooLong(t, "config update with a long "+c.field, resp, b, "Hook", c.field, c.max)
	}
	atLimit, err := json.Marshal(map[string]string{
		"secret":   strings.Repeat("s", webhooks.MaxSecretLength),
		"username": strings.Repeat("u", webhooks.MaxUsernameLength),
		"password": strings.Repeat("w", webhooks.MaxPasswordLength),
	})
	apptest.Must(t, "encode", err)
	if resp, b := f.env.DoJSON("PATCH", f.repoPath("/"+strconv.FormatInt(hook.GetID(), 10)+"/config"), f.token, string(atLimit)); resp.StatusCode != http.StatusOK {
		t.Fatalf("config with every field at its limit: %d %s", resp.StatusCode, b)
	}
}

// TestPayloadOverTheCapIsNotDelivered: an event whose payload is over
// the cap (here 1 MB: a push whose commit message is 600 kB, which the
// payload carries twice) is not delivered nor logged as a delivery; the
// next push is delivered as usual.
func TestPayloadOverTheCapIsNotDelivered(t *testing.T) {
	t.Parallel()
	const limit = 1_000_000
	env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback", MaxPayloadBytes: limit}))
	owner := env.User("octo")
	env.Repo(owner, "widgets")
	token := env.Token(owner, "repo", "admin:repo_hook")
	client := env.Client(token)
	rc := newReceiver(t, "s")
	hook := hookOn(t, client, "octo", "widgets", rc.URL(), "json", "s", "push")
	rc.waitEvents("ping", 1)

	work := apptest.WorkTree(t, map[string]string{"a.txt": "a\n"})
	message := filepath.Join(t.TempDir(), "message")
	apptest.Must(t, "write message", os.WriteFile(message, []byte(strings.Repeat("m", limit*6/10)), 0o644))
	apptest.Git(t, work, "commit", "-q", "--allow-empty", "-F", message)
	remote := env.GitURL("octo", "widgets", "octo", token)
	apptest.Git(t, work, "push", "-q", remote, "main")

	small := apptest.Commit(t, work, "small", map[string]string{"b.txt": "b\n"})
	apptest.Git(t, work, "push", "-q", remote, "main")
	first := rc.waitEvents("push", 1)[0]
	if first.Payload["after"] != small {
		t.Fatalf("the first push delivered is %v (%d bytes), want the small push %s", first.Payload["after"], len(first.Raw), small)
	}
	// Both pushes committed their deliveries before this one arrived: the
	// log holds the ping and the small push only.
	logged := loggedDeliveries(t, client, "octo", "widgets", hook.GetID(), 2)
	if len(logged) != 2 {
		t.Fatalf("%d deliveries logged, want the ping and one push", len(logged))
	}
	for _, d := range logged {
		if d.GetEvent() == "push" && d.GetGUID() != first.GUID {
			t.Errorf("a push delivery other than the small push's is logged: %+v", d)
		}
	}
}
