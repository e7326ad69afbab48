package e2e_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"forgeapi/internal/apptest"
)

// TestAnnouncementAndLicense: a site administrator sets the announcement
// (with an expiry, or none), reads it back, and removes it; a blank one or
// an expiry in the past is a 422; users get 403. The license counts the
// users who are not suspended as its seats used.
func TestAnnouncementAndLicense(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	root := env.User("root", apptest.UserOpts{SiteAdmin: true})
	octo := env.User("octo")
	adminToken := env.Token(root, "site_admin")
	type announcement struct {
		Announcement    *string `json:"announcement"`
		ExpiresAt       *string `json:"expires_at"`
		UserDismissible bool    `json:"user_dismissible"`
	}
	get := func(t *testing.T) announcement {
		resp, body := env.Do("GET", "/enterprise/announcement", adminToken, nil)
		var a announcement
		apptest.Must(t, "announcement", json.Unmarshal(body, &a))
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /enterprise/announcement: %d %s", resp.StatusCode, body)
		}
		return a
	}

	apptest.Step(t, "set, read back, replaced without expiry, removed", func(t *testing.T) {
		if a := get(t); a.Announcement != nil || a.ExpiresAt != nil {
			t.Fatalf("no announcement yet: %+v", a)
		}
		expires := time.Now().Add(48 * time.Hour).UTC().Truncate(time.Second).Format(time.RFC3339)
		resp, body := env.DoJSON("PATCH", "/enterprise/announcement", adminToken,
			`{"announcement":"Maintenance **tonight**","expires_at":"`+expires+`","user_dismissible":true}`)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("PATCH: %d %s", resp.StatusCode, body)
		}
		if a := get(t); a.Announcement == nil || *a.Announcement != "Maintenance **tonight**" || a.ExpiresAt == nil ||
			*a.ExpiresAt != expires || !a.UserDismissible {
			t.Fatalf("announcement: %+v", a)
		}
		// Every web page shows it, rendered, in the layout.
		if resp, body := env.Do("GET", "/login", "", nil); resp.StatusCode != http.StatusOK ||
			!strings.Contains(string(body), `<div class="announcement" role="status"><p>Maintenance <strong>tonight</strong></p>`) {
			t.Fatalf("the sign-in page: %d %s", resp.StatusCode, body)
		}
		if resp, body := env.DoJSON("PATCH", "/enterprise/announcement", adminToken, `{"announcement":"Welcome","expires_at":""}`); resp.StatusCode != http.StatusOK {
			t.Fatalf("PATCH without expiry: %d %s", resp.StatusCode, body)
		}
		if a := get(t); a.Announcement == nil || *a.Announcement != "Welcome" || a.ExpiresAt != nil || a.UserDismissible {
			t.Fatalf("replaced announcement: %+v", a)
		}
		for _, body := range []string{`{"announcement":" "}`, `{"announcement":"x","expires_at":"2001-01-01T00:00:00Z"}`,
			`{"announcement":"x","expires_at":"tomorrow"}`} {
			if resp, _ := env.DoJSON("PATCH", "/enterprise/announcement", adminToken, body); resp.StatusCode != http.StatusUnprocessableEntity {
				t.Fatalf("PATCH %s: %d, want 422", body, resp.StatusCode)
			}
		}
		if resp, _ := env.DoJSON("PATCH", "/enterprise/announcement", env.Token(octo, "site_admin"), `{"announcement":"hi"}`); resp.StatusCode != http.StatusForbidden {
			t.Fatalf("a user sets the announcement: %d, want 403", resp.StatusCode)
		}
		if resp, _ := env.Do("DELETE", "/enterprise/announcement", adminToken, nil); resp.StatusCode != http.StatusNoContent {
			t.Fatalf("DELETE: %d", resp.StatusCode)
		}
		if a := get(t); a.Announcement != nil {
			t.Fatalf("removed announcement: %+v", a)
		}
		if _, body := env.Do("GET", "/login", "", nil); strings.Contains(string(body), `class="announcement"`) {
			t.Fatalf("the sign-in page shows a removed announcement: %s", body)
		}
	})

	apptest.Step(t, "the license's seats used are the users not suspended", func(t *testing.T) {
		license := func(t *testing.T) map[string]any {
			resp, body := env.Do("GET", "/enterprise/settings/license", adminToken, nil)
			var l map[string]any
			apptest.Must(t, "license", json.Unmarshal(body, &l))
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("GET /enterprise/settings/license: %d %s", resp.StatusCode, body)
			}
			return l
		}
		l := license(t)
		if l["seats_used"] != float64(2) || l["seats"] != "unlimited" || l["seats_available"] != "unlimited" {
			t.Fatalf("license: %v", l)
		}
		if resp, body := env.DoJSON("PUT", "/users/octo/suspended", adminToken, `{"reason":"audit"}`); resp.StatusCode != http.StatusNoContent {
			t.Fatalf("suspend: %d %s", resp.StatusCode, body)
		}
		if l := license(t); l["seats_used"] != float64(1) {
			t.Fatalf("license with octo suspended: %v", l)
		}
	})
}
