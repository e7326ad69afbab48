package cli_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"forgeapi/internal/app"
	"forgeapi/internal/auth"
	"forgeapi/internal/cli"
)

// TestPermissionsDocIsCurrent keeps docs/permissions.md equal to what
// `forgeapi permissions` prints from the route declarations.
func TestPermissionsDocIsCurrent(t *testing.T) {
	t.Parallel()
	want := cliOK(t, "permissions")
	got, err := os.ReadFile("../../docs/permissions.md")
	if err != nil {
		t.Fatalf("read docs/permissions.md: %v", err)
	}
	if string(got) != want {
		t.Fatalf("docs/permissions.md is out of date with the route tables.\n" +
			"Regenerate it from the repository root with:\n\n" +
			"    go run ./cmd/forgeapi permissions > docs/permissions.md\n")
	}
	if cliOK(t, "permissions", "--format", "markdown") != want {
		t.Fatalf("--format markdown differs from the default")
	}
}

func TestPermissionsTablesFollowTheRoutes(t *testing.T) {
	t.Parallel()
	var tables []cli.PermissionTable
	if err := json.Unmarshal([]byte(cliOK(t, "permissions", "--format", "json")), &tables); err != nil {
		t.Fatalf("--format json: %v", err)
	}
	if len(tables) != len(auth.PermissionCatalog()) {
		t.Fatalf("%d tables, want one per permission (%d)", len(tables), len(auth.PermissionCatalog()))
	}
	byName := map[string]cli.PermissionTable{}
	for _, tbl := range tables {
		byName[tbl.Permission] = tbl
	}
	find := func(permission, endpoint string) cli.PermissionRow {
		t.Helper()
		for _, r := range byName[permission].Endpoints {
			if r.Endpoint == endpoint {
				return r
			}
		}
		t.Fatalf("table %s lacks %s", permission, endpoint)
		return cli.PermissionRow{}
	}
	if r := find("metadata", "GET /repos/{owner}/{repo}"); !r.Served || r.Access != "read" || r.TokenTypes != "UAT, IAT, fine-grained PAT" {
		t.Errorf("metadata row %+v", r)
	}
	if r := find("administration", "POST /user/repos"); !r.Served || r.Access != "write" || r.TokenTypes != "UAT, fine-grained PAT" {
		t.Errorf("administration row %+v", r)
	}
	// The spec's examples are all served, Actions' included (the
	// workflow runs).
	if r := find("actions", "GET /repos/{owner}/{repo}/actions/runs"); !r.Served || r.Access != "read" {
		t.Errorf("actions example %+v", r)
	}
	if r := find("actions", "POST /repos/{owner}/{repo}/actions/runs/{run_id}/cancel"); !r.Served || r.Access != "write" {
		t.Errorf("actions example %+v", r)
	}
	for _, tbl := range tables {
		for _, r := range tbl.Endpoints {
			if !r.Served {
				t.Errorf("%s: %s not served", tbl.Permission, r.Endpoint)
			}
		}
	}
	if r := find("organization_administration", "GET /orgs/{org}/audit-log"); !r.Served || r.Access != "read" {
		t.Errorf("audit log row %+v", r)
	}
	// Organization rulesets are served, with the spec's write access for reading.
	if r := find("organization_administration", "GET /orgs/{org}/rulesets"); !r.Served || r.Access != "write" {
		t.Errorf("rulesets row %+v", r)
	}
	// A spec example that is served takes the route's declaration, which
	// keeps the spec's token types.
	if r := find("administration", "POST /repos/{owner}/{repo}/transfer"); !r.Served || r.TokenTypes != "UAT" || r.Access != "write" {
		t.Errorf("transfer row %+v", r)
	}
	if byName["organization_administration"].Group != auth.GroupOrganization || byName["gists"].Group != auth.GroupUser {
		t.Errorf("groups wrong")
	}

	// Every served route with permissions appears in each permission's table.
	for _, rt := range (&app.App{}).Routes() {
		for _, set := range rt.Auth.Permissions {
			for _, need := range set {
				find(need.Name, rt.Method+" "+strings.ReplaceAll(rt.Pattern, "...}", "}"))
			}
		}
	}

	md := cliOK(t, "permissions")
	for _, want := range []string{"## Organization permissions", "## Repository permissions", "## User permissions",
		"| Endpoint | Access | Token types | Additional permissions |", "| `GET /repos/{owner}/{repo}/actions/runs` |"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
}
