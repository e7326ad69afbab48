package e2e_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"forgeapi/internal/apptest"
	"forgeapi/internal/repos"
)

// TestOrgOwnerFields: GET /orgs/{org} shows its owners the owner-only
// keys of organization-full (plan, disk_usage, collaborators,
// private_gists, the members_can_create_* settings, billing_email, ...),
// with the seats its members fill, the size of its repositories and its
// outside collaborators; a member who is not an owner sees none of them.
func TestOrgOwnerFields(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	owner, member, outside := env.User("boss"), env.User("worker"), env.User("guest")
	org := env.Org("acme", owner, member)
	repo := env.Repo(org, "app")
	_, err := env.App.DB.ExecContext(apptest.Ctx(), `INSERT INTO repo_collaborators (repository_id, user_id, permission, created_at)
		VALUES ($1, $2, $3, CURRENT_TIMESTAMP)`, repo.ID, outside.ID, repos.CollaboratorPush)
	apptest.Must(t, "add an outside collaborator", err)

	var got map[string]any
	resp, body := env.Get("/orgs/acme", "Bearer "+env.Token(owner, "read:org"))
	apptest.WantStatus(t, "owner's GET", resp, body, http.StatusOK)
	apptest.Must(t, "decode", json.Unmarshal(body, &got))
	plan, _ := got["plan"].(map[string]any)
	if plan["name"] != "enterprise" || plan["filled_seats"] != float64(2) || got["collaborators"] != float64(1) ||
		got["disk_usage"] != float64(0) || got["private_gists"] != float64(0) || got["members_can_create_public_repositories"] != true ||
		got["members_can_create_pages"] != true || got["members_allowed_repository_creation_type"] != "all" {
		t.Fatalf("owner's view: %s", body)
	}
	resp, body = env.Get("/orgs/acme", "Bearer "+env.Token(member, "read:org"))
	apptest.WantStatus(t, "member's GET", resp, body, http.StatusOK)
	got = nil
	apptest.Must(t, "decode", json.Unmarshal(body, &got))
	for _, k := range []string{"plan", "disk_usage", "collaborators", "private_gists", "billing_email",
		"members_can_create_repositories", "members_can_create_private_repositories", "total_private_repos"} {
		if _, ok := got[k]; ok {
			t.Fatalf("a member sees %s: %s", k, body)
		}
	}
}
