package pulls_test

import (
	"strings"
	"testing"

	"forgeapi/internal/apptest"
)

// TestCheckerClaimUsesDueIndex checks SQLite's plan of the mergeability
// checker's claim (checker.go): it reads the partial index of the due
// pull requests (migration 00039) instead of scanning every pull request
// at start and at every sweep. The start's TOTP sealing likewise reads
// the accounts with two-factor only, and its release of a killed
// process's leases the leased rows only.
func TestCheckerClaimUsesDueIndex(t *testing.T) {
	t.Parallel()
	if apptest.Postgres() {
		t.Skip("SQLite's plan")
	}
	env := apptest.Start(t)
	for _, c := range []struct{ query, index string }{
		{`SELECT x.id FROM pull_requests x WHERE x.check_due AND (x.lease_until IS NULL OR x.lease_until < $1) ORDER BY x.id LIMIT 1`,
			"pull_requests_check_due"},
		{`SELECT id, totp_secret FROM accounts WHERE totp_secret <> '' AND totp_secret NOT LIKE $1`, "accounts_totp"},
		// The release at start of the leases a killed process held
		// (Checker, Maintainer and orgmigration.Service's ReleaseLeases).
		{`SELECT id FROM pull_requests WHERE check_due AND lease_until > $1`, "pull_requests_check_due"},
		{`SELECT repository_id FROM git_maintenance WHERE lease_until > $1`, "git_maintenance_leased"},
		{`SELECT id FROM org_migrations WHERE state = 'exporting' AND lease_until > $1`, "org_migrations_work"},
	} {
		plan := env.QueryPlan(t, c.query, "x")
		if len(plan) != 1 || !strings.Contains(plan[0], "INDEX "+c.index) {
			t.Errorf("plan of %s = %q, want a search of %s", c.query, plan, c.index)
		}
	}
}
