package webhooks_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/webhooks"
	"forgeapi/internal/webhooks/hookshot"
)

// headerReceiver keeps the headers of every request it receives, by the
// delivery GUID they carry (under either name).
type headerReceiver struct {
	mu  sync.Mutex
	got map[string][]http.Header
}

func (rc *headerReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	guid := r.Header.Get(hookshot.HeaderDelivery)
	if guid == "" {
		guid = r.Header.Get(hookshot.PlatformHeaderDelivery)
	}
	rc.mu.Lock()
	rc.got[guid] = append(rc.got[guid], r.Header.Clone())
	rc.mu.Unlock()
}

func (rc *headerReceiver) of(guid string) []http.Header {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.got[guid]
}

// TestLoggedRequestHeadersAreThoseSent: under each header name setting,
// the request.headers of every logged delivery (a ping, an edit and its
// redelivery on a repository hook with a secret and credentials in its
// URL; a ping and its redelivery on an organization hook) are the headers
// its receiver got: the identity headers, left out of the stored row,
// come back from the row and the hook with the values sent. A row stored
// whole, as servers before wrote them, reads the same.
func TestLoggedRequestHeadersAreThoseSent(t *testing.T) {
	t.Parallel()
	for _, names := range []hookshot.HeaderNames{hookshot.HeaderNamesBoth, hookshot.HeaderNamesService, hookshot.HeaderNamesPlatform} {
		t.Run(string(names), func(t *testing.T) {
			t.Parallel()
			env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback", HeaderNames: names}))
			owner := env.User("octo")
			env.Repo(owner, "widgets")
			env.Org("acme", owner)
			token := env.Token(owner, "repo", "admin:repo_hook", "admin:org_hook")
			client := env.Client(token)
			rc := &headerReceiver{got: map[string][]http.Header{}}
			srv := httptest.NewServer(rc)
			t.Cleanup(srv.Close)

			withCredentials := strings.Replace(srv.URL, "http://", "http://hook-user:hook-pass@", 1) + "/repo"
			repoHook := hookOn(t, client, "octo", "widgets", withCredentials, "json", "s3cret", "repository")
			editDescription(t, env, token, "octo/widgets", "new words")
			logged := loggedDeliveries(t, client, "octo", "widgets", repoHook.GetID(), 2)
			if rresp, err := redeliver(client, "octo", "widgets", repoHook.GetID(), logged[0].GetID()); err != nil || rresp.StatusCode != http.StatusAccepted {
				t.Fatalf("redeliver: %v %v", rresp, err)
			}
			repoPath := fmt.Sprintf("/repos/octo/widgets/hooks/%d/deliveries", repoHook.GetID())
			for _, d := range loggedDeliveries(t, client, "octo", "widgets", repoHook.GetID(), 3) {
				checkLoggedHeaders(t, env, token, repoPath, d, rc, names, true)
			}

			orgHook := orgHookOn(t, client, "acme", srv.URL+"/org", "s3cret", "repository")
			orgPath := fmt.Sprintf("/orgs/acme/hooks/%d/deliveries", orgHook.GetID())
			ping := loggedOrgDeliveries(t, env, token, orgPath, 1)[0]
			_, _, err := client.Organizations.RedeliverHookDelivery(apptest.Ctx(), "acme", orgHook.GetID(), ping.GetID())
			var accepted *github.AcceptedError
			if err != nil && !errors.As(err, &accepted) {
				t.Fatalf("redeliver: %v", err)
			}
			for _, d := range loggedOrgDeliveries(t, env, token, orgPath, 2) {
				checkLoggedHeaders(t, env, token, orgPath, d, rc, names, false)
			}

			// A row stored whole, as servers before this one wrote them.
			d := logged[0]
			before := deliveryHeaders(t, env, token, repoPath, d.GetID())
			whole, err := json.Marshal(before)
			apptest.Must(t, "marshal", err)
			_, err = env.App.DB.ExecContext(apptest.Ctx(), `UPDATE hook_deliveries SET request_headers = $1, implied_headers = 0
				WHERE id = $2`, string(whole), d.GetID())
			apptest.Must(t, "store whole", err)
			if after := deliveryHeaders(t, env, token, repoPath, d.GetID()); fmt.Sprint(after) != fmt.Sprint(before) {
				t.Errorf("stored whole, read back %v\nwant %v", after, before)
			}
		})
	}
}

// checkLoggedHeaders compares the logged request.headers of delivery d
// with those its receiver got, and checks that its row left out the
// identity headers of the names sent.
func checkLoggedHeaders(t *testing.T, env *apptest.Env, token, path string, d *github.HookDelivery, rc *headerReceiver,
	names hookshot.HeaderNames, credentials bool) {
	t.Helper()
	logged := deliveryHeaders(t, env, token, path, d.GetID())
	got := rc.of(d.GetGUID())
	if len(got) == 0 {
		t.Fatalf("delivery %s (%s) never received", d.GetGUID(), d.GetEvent())
	}
	sent := got[0]
	for name, value := range logged {
		want := sent.Get(name)
		if name == "Authorization" {
			if value != hookshot.MaskedValue || !strings.HasPrefix(want, "Basic ") {
				t.Errorf("%s: logged Authorization %q, sent %q", d.GetEvent(), value, want)
			}
			continue
		}
		if value != want {
			t.Errorf("%s %s: logged %s %q, sent %q", d.GetEvent(), d.GetGUID(), name, value, want)
		}
	}
	for name := range sent {
		if strings.HasPrefix(name, "X-") && !loggedUnder(logged, name) {
			t.Errorf("%s: sent %s, not logged: %v", d.GetEvent(), name, logged)
		}
	}
	if _, ok := logged["Authorization"]; ok != credentials {
		t.Errorf("%s: Authorization logged %v, want %v", d.GetEvent(), ok, credentials)
	}

	var stored string
	var implied int
	apptest.Must(t, "read row", env.App.DB.QueryRowContext(apptest.Ctx(),
		`SELECT request_headers, implied_headers FROM hook_deliveries WHERE id = $1`, d.GetID()).Scan(&stored, &implied))
	want := map[hookshot.HeaderNames]int{hookshot.HeaderNamesBoth: 3, hookshot.HeaderNamesService: 1, hookshot.HeaderNamesPlatform: 2}[names]
	if implied != want || strings.Contains(stored, "Delivery") || strings.Contains(stored, "Target") {
		t.Errorf("%s: row keeps %s, implied %d (want %d, without the identity headers)", d.GetEvent(), stored, implied, want)
	}
}

// loggedUnder reports whether the log has a header of the name, spelled
// in any case (a receiver sees names canonicalised: X-Github-Hook-Id).
func loggedUnder(logged map[string]string, name string) bool {
	for k := range logged {
		if strings.EqualFold(k, name) {
			return true
		}
	}
	return false
}

// deliveryHeaders is the request.headers of a delivery's detail.
func deliveryHeaders(t *testing.T, env *apptest.Env, token, path string, id int64) map[string]string {
	t.Helper()
	resp, body := env.Do("GET", fmt.Sprintf("%s/%d", path, id), token, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s/%d: %d %s", path, id, resp.StatusCode, body)
	}
	var detail struct {
		Request struct {
			Headers map[string]string `json:"headers"`
		} `json:"request"`
	}
	apptest.Must(t, "decode delivery", json.Unmarshal(body, &detail))
	return detail.Request.Headers
}

// loggedOrgDeliveries waits for n done deliveries of an organization hook.
func loggedOrgDeliveries(t *testing.T, env *apptest.Env, token, path string, n int) []*github.HookDelivery {
	t.Helper()
	return awaitLogged(t, path, n, func() []*github.HookDelivery {
		var list []*github.HookDelivery
		resp, body := env.Do("GET", path, token, nil)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
		}
		apptest.Must(t, "decode deliveries", json.Unmarshal(body, &list))
		return list
	})
}
