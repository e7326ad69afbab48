package e2e_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/testwait"
	"forgeapi/internal/webhooks"
)

// globalHook is the part of a global webhook's JSON the test reads.
type globalHook struct {
	Type    string   `json:"type"`
	ID      int64    `json:"id"`
	Events  []string `json:"events"`
	Active  bool     `json:"active"`
	URL     string   `json:"url"`
	PingURL string   `json:"ping_url"`
	Config  struct {
		URL    string `json:"url"`
		Secret string `json:"secret"`
	} `json:"config"`
}

// TestGlobalWebhooks: a site administrator creates a global webhook (user
// and organization by default; other events are a 422), which is pinged
// at once and then sent, signed by the same engine as every hook, user
// created and deleted and an organization's events; its deliveries are
// logged; it is listed, read, edited, pinged again and deleted. The
// deliveries name the installation ("business") as their target. Users
// get 403.
func TestGlobalWebhooks(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	ctx := apptest.Ctx()
	root := env.User("root", apptest.UserOpts{SiteAdmin: true})
	octo := env.User("octo")
	env.Org("acme", octo)
	adminToken := env.Token(root, "site_admin")
	admin := env.Client(env.Token(root, "site_admin", "admin:org"))
	rc := apptest.NewReceiver(t, "s3cret")
	var hook globalHook

	apptest.Step(t, "created, and pinged at once", func(t *testing.T) {
		body := `{"name":"web","config":{"url":"` + rc.URL + `","content_type":"json","secret":"s3cret"}}`
		if resp, _ := env.DoJSON("POST", "/admin/hooks", env.Token(octo, "site_admin"), body); resp.StatusCode != http.StatusForbidden {
			t.Fatalf("a user creates a global hook: %d, want 403", resp.StatusCode)
		}
		bad := `{"name":"web","events":["push"],"config":{"url":"` + rc.URL + `"}}`
		if resp, _ := env.DoJSON("POST", "/admin/hooks", adminToken, bad); resp.StatusCode != http.StatusUnprocessableEntity {
			t.Fatalf("a global hook of push: %d, want 422", resp.StatusCode)
		}
		resp, out := env.DoJSON("POST", "/admin/hooks", adminToken, body)
		apptest.Must(t, "hook", json.Unmarshal(out, &hook))
		if resp.StatusCode != http.StatusCreated || hook.Type != "Global" || len(hook.Events) != 2 || hook.Events[0] != "organization" ||
			hook.Events[1] != "user" || !hook.Active || hook.Config.Secret != "********" || hook.PingURL != hook.URL+"/pings" {
			t.Fatalf("create: %d %s", resp.StatusCode, out)
		}
		testwait.Until(t, "the ping", func() bool {
			for _, d := range rc.Deliveries() {
				if d.Event == "ping" && d.Header.Get("X-GitHub-Hook-Installation-Target-Type") == "business" &&
					d.Header.Get("X-GitHub-Hook-ID") == strconv.FormatInt(hook.ID, 10) {
					return true
				}
			}
			return false
		})
	})

	apptest.Step(t, "sent user created and deleted, and organization events", func(t *testing.T) {
		_, _, err := admin.Admin.CreateUser(ctx, github.CreateUserRequest{Login: "mona"})
		apptest.Must(t, "create user", err)
		_, _, err = admin.Admin.RenameOrgByName(ctx, "acme", "acme-corp")
		if _, ok := err.(*github.AcceptedError); !ok {
			t.Fatalf("rename organization: %v", err)
		}
		_, err = admin.Admin.DeleteUser(ctx, "mona")
		apptest.Must(t, "delete user", err)
		rc.WaitFor(t, apptest.EventAction, "user created", "organization renamed", "user deleted")
		for _, d := range rc.Deliveries() {
			if d.Event != "user" {
				continue
			}
			var p struct {
				User   struct{ Login string }
				Sender struct{ Login string }
			}
			apptest.Must(t, "user payload", json.Unmarshal(d.Body, &p))
			if p.User.Login != "mona" || p.Sender.Login != "root" {
				t.Fatalf("user payload: %s", d.Body)
			}
		}
		testwait.Until(t, "the deliveries logged", func() bool {
			var n int
			err := env.Q().QueryRowContext(ctx, `SELECT COUNT(*) FROM hook_deliveries WHERE hook_id = $1 AND state = 'done'
				AND status_code = 200`, hook.ID).Scan(&n)
			return err == nil && n == 4
		})
	})

	apptest.Step(t, "listed, read, edited, pinged and deleted", func(t *testing.T) {
		resp, out := env.Do("GET", "/admin/hooks", adminToken, nil)
		var list []globalHook
		apptest.Must(t, "list", json.Unmarshal(out, &list))
		if resp.StatusCode != http.StatusOK || len(list) != 1 || list[0].ID != hook.ID {
			t.Fatalf("list: %d %s", resp.StatusCode, out)
		}
		path := "/admin/hooks/" + strconv.FormatInt(hook.ID, 10)
		resp, out = env.DoJSON("PATCH", path, adminToken, `{"events":["user"],"active":false}`)
		var edited globalHook
		apptest.Must(t, "edit", json.Unmarshal(out, &edited))
		if resp.StatusCode != http.StatusOK || len(edited.Events) != 1 || edited.Active {
			t.Fatalf("edit: %d %s", resp.StatusCode, out)
		}
		resp, out = env.Do("GET", path, adminToken, nil)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("get: %d %s", resp.StatusCode, out)
		}
		if resp, _ := env.Do("POST", path+"/pings", adminToken, nil); resp.StatusCode != http.StatusNoContent {
			t.Fatalf("ping: %d", resp.StatusCode)
		}
		testwait.Until(t, "the second ping", func() bool {
			n := 0
			for _, d := range rc.Deliveries() {
				if d.Event == "ping" {
					n++
				}
			}
			return n == 2
		})
		if resp, _ := env.Do("DELETE", path, adminToken, nil); resp.StatusCode != http.StatusNoContent {
			t.Fatalf("delete: %d", resp.StatusCode)
		}
		if resp, _ := env.Do("GET", path, adminToken, nil); resp.StatusCode != http.StatusNotFound {
			t.Fatalf("deleted hook: %d, want 404", resp.StatusCode)
		}
	})
}
