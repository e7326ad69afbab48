package webhooks_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"forgeapi/internal/apptest"
	"forgeapi/internal/webhooks"
)

// TestFormHookGetsPayloadsUnderTheCap: the payload cap applies to the
// JSON, also in the sender. A form hook is sent a push whose JSON payload
// is under the configured cap (1 MB here) though its URL-encoded body is
// more than twice the cap: a commit message of 400,000 "!", which the
// payload carries twice and which form encoding makes "%21".
func TestFormHookGetsPayloadsUnderTheCap(t *testing.T) {
	t.Parallel()
	const limit = 1_000_000
	env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback", MaxPayloadBytes: limit}))
	owner := env.User("octo")
	env.Repo(owner, "widgets")
	token := env.Token(owner, "repo", "admin:repo_hook")
	rc := newReceiver(t, "s")
	hookOn(t, env.Client(token), "octo", "widgets", rc.URL(), "form", "s", "push")
	rc.waitEvents("ping", 1)

	work := apptest.WorkTree(t, map[string]string{"a.txt": "a\n"})
	message := filepath.Join(t.TempDir(), "message")
	apptest.Must(t, "write message", os.WriteFile(message, []byte(strings.Repeat("!", limit*4/10)), 0o644))
	apptest.Git(t, work, "commit", "-q", "--allow-empty", "-F", message)
	head := strings.TrimSpace(apptest.Git(t, work, "rev-parse", "HEAD"))
	apptest.Git(t, work, "push", "-q", env.GitURL("octo", "widgets", "octo", token), "main")

	push := rc.waitEvents("push", 1)[0]
	if push.Payload["after"] != head {
		t.Fatalf("the push delivered is %v, want %s", push.Payload["after"], head)
	}
	if len(push.Raw) <= 2*limit {
		t.Fatalf("the form body is %d bytes; the test wants one over twice the cap", len(push.Raw))
	}
}
