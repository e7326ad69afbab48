package e2e_test

import (
	"strings"
	"testing"

	"forgeapi/internal/apptest"
)

// TestRoleGrantsPlan checks SQLite's plan of the access lookup through
// organization roles: each part starts from the user's own rows
// (org_role_users by user, team memberships by user) and probes an index
// at every step, never scanning the roles' holders or the repositories.
func TestRoleGrantsPlan(t *testing.T) {
	t.Parallel()
	if apptest.Postgres() {
		t.Skip("SQLite's plan")
	}
	env := apptest.Start(t)
	octo, dev := env.User("octo"), env.User("dev")
	repo := env.Repo(env.Org("acme", octo, dev), "api")
	plan := env.QueryPlan(t, `SELECT g.permission FROM repo_grants g
		WHERE g.repository_id = $1 AND g.user_id = $2 ORDER BY g.rank DESC LIMIT 1`, repo.ID, dev.ID)
	var steps []string
	for _, detail := range plan {
		for _, alias := range []string{" u ", " om ", " oa ", " rt ", " o ", " r "} {
			if strings.Contains(detail, alias) {
				steps = append(steps, detail)
				if strings.HasPrefix(detail, "SCAN") {
					t.Errorf("scan in the organization roles' part: %q", detail)
				}
			}
		}
	}
	if len(steps) < 8 || !strings.Contains(steps[0], "org_role_users_user") {
		t.Errorf("plan of the organization roles' part = %q", steps)
	}
}
