package webhooks_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/app"
	"forgeapi/internal/apptest"
	"forgeapi/internal/testwait"
)

// syncBuffer is a log destination safe for the server's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// warnings returns the JSON log records at level WARN with the message.
func (b *syncBuffer) warnings(t *testing.T, msg string) []map[string]any {
	t.Helper()
	b.mu.Lock()
	text := b.buf.String()
	b.mu.Unlock()
	var out []map[string]any
	for line := range strings.SplitSeq(strings.TrimSpace(text), "\n") {
		var rec map[string]any
		if line == "" || json.Unmarshal([]byte(line), &rec) != nil {
			continue
		}
		if rec["level"] == "WARN" && rec["msg"] == msg {
			out = append(out, rec)
		}
	}
	return out
}

// A delivery the allow list refuses says which flag value allows it, and
// the first refusal of each hook is logged at warning level, once.
func TestRefusedDeliverySaysWhichFlagAllowsItAndWarnsOnce(t *testing.T) {
	t.Parallel()
	var logs syncBuffer
	logger, err := app.NewLogger(&logs, "warn", "json")
	apptest.Must(t, "logger", err)
	env := apptest.Start(t, func(c *app.Config) { c.Logger = logger }) // allow list: external (the default)
	owner := env.User("octo")
	env.Repo(owner, "widgets")
	token := env.Token(owner, "repo", "admin:repo_hook")
	client := env.Client(token)
	rc := newReceiver(t, "")
	hook := hookOn(t, client, "octo", "widgets", rc.URL(), "json", "", "repository")
	editDescription(t, env, token, "octo/widgets", "refused twice")
	const want = "refused: address 127.0.0.1 is not allowed (loopback); allow it with --webhook-allowed-hosts external,loopback"
	for _, d := range loggedDeliveries(t, client, "octo", "widgets", hook.GetID(), 2) {
		if d.GetStatus() != want || d.GetStatusCode() != 0 {
			t.Errorf("delivery %s: %d %q, want %q", d.GetEvent(), d.GetStatusCode(), d.GetStatus(), want)
		}
	}
	got, _, err := client.Repositories.GetHook(apptest.Ctx(), "octo", "widgets", hook.GetID())
	apptest.Must(t, "get hook", err)
	if got.LastResponse["message"] != want {
		t.Errorf("last_response %v", got.LastResponse)
	}
	warnings := logs.warnings(t, "webhook delivery refused by the allow list")
	if len(warnings) != 1 || warnings[0]["hook_id"] != float64(hook.GetID()) ||
		warnings[0]["fix"] != "--webhook-allowed-hosts external,loopback" || warnings[0]["address"] != "127.0.0.1" {
		t.Errorf("warnings %v, want one for hook %d", warnings, hook.GetID())
	}
	if len(rc.all()) != 0 {
		t.Errorf("the receiver got a delivery")
	}
}

// config.username and config.password of an organization hook go to the
// receiver as HTTP Basic credentials; the password is sealed at rest and
// masked in responses, and the delivery log shows Authorization: ********.
func TestOrgHookSendsBasicCredentials(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, loopback)
	owner := env.User("octo")
	env.Org("acme", owner)
	token := env.Token(owner, "admin:org_hook")
	client := env.Client(token)
	type credentials struct {
		user, password string
		ok             bool
	}
	got := make(chan credentials, 4)
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, password, ok := r.BasicAuth()
		got <- credentials{user, password, ok}
	}))
	t.Cleanup(rcv.Close)
	const password = "correct horse battery staple"
	// go-github's HookConfig has no username or password: raw JSON.
	resp, body := env.DoJSON("POST", "/orgs/acme/hooks", token, `{"name":"web","events":["push"],"config":{"url":"`+rcv.URL+
		`/hook","content_type":"json","username":"hookuser","password":"`+password+`"}}`)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create org hook: %d %s", resp.StatusCode, body)
	}
	var hook struct {
		ID     int64             `json:"id"`
		Config map[string]string `json:"config"`
	}
	apptest.Must(t, "decode hook", json.Unmarshal(body, &hook))
	if hook.Config["password"] != "********" || hook.Config["username"] != "hookuser" {
		t.Errorf("hook config %v", hook.Config)
	}

	select { // the ping
	case c := <-got:
		if !c.ok || c.user != "hookuser" || c.password != password {
			t.Errorf("receiver got Basic credentials %+v", c)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no ping delivered")
	}

	var deliveries []*github.HookDelivery
	var err error
	testwait.Until(t, "the ping to be logged", func() bool {
		deliveries, _, err = client.Organizations.ListHookDeliveries(apptest.Ctx(), "acme", hook.ID, nil)
		apptest.Must(t, "list deliveries", err)
		return len(deliveries) > 0 && deliveries[0].GetStatus() != "pending"
	})
	d, _, err := client.Organizations.GetHookDelivery(apptest.Ctx(), "acme", hook.ID, deliveries[0].GetID())
	apptest.Must(t, "get delivery", err)
	if h := d.Request.GetHeader("Authorization"); h != "********" {
		t.Errorf("delivery log Authorization %q, want ********", h)
	}
	var sealed string
	err = env.Q().QueryRowContext(apptest.Ctx(), `SELECT password FROM hooks WHERE id = $1`, hook.ID).Scan(&sealed)
	apptest.Must(t, "read the stored password", err)
	if sealed == "" || strings.Contains(sealed, password) || strings.Contains(sealed, "horse") {
		t.Errorf("password stored as %q", sealed)
	}
}
