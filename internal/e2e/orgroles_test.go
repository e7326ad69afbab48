package e2e_test

import (
	"net/http"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// TestOrganizationRoles drives organization roles through go-github: the
// predefined roles are listed with their base roles; a member given
// all_repo_write directly really writes to every repository of the
// organization until the role is revoked; a team given all_repo_admin
// makes its members (and those of its nested team) admins, listed as
// indirect holders; custom roles are made, changed and deleted with the
// platform's validation; members may not read or assign roles.
func TestOrganizationRoles(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo, dev, ann := env.User("octo"), env.User("dev"), env.User("ann")
	acme := env.Org("acme", octo, dev, ann)
	env.Repo(acme, "api", apptest.RepoOpts{Private: true})
	env.Repo(acme, "web", apptest.RepoOpts{Private: true})
	owner := env.Client(env.Token(octo, "admin:org", "repo"))
	devGH := env.Client(env.Token(dev, "read:org", "repo"))
	annGH := env.Client(env.Token(ann, "read:org", "repo"))

	roleID := map[string]int64{}
	apptest.Step(t, "predefined roles", func(t *testing.T) {
		list, _, err := owner.Organizations.ListRoles(ctx, "acme")
		apptest.Must(t, "list roles", err)
		for _, r := range list.CustomRepoRoles {
			roleID[r.GetName()] = r.GetID()
			if r.GetSource() != "Predefined" || r.Org != nil {
				t.Errorf("%s: source %q org %v", r.GetName(), r.GetSource(), r.Org)
			}
		}
		if list.GetTotalCount() != 6 || roleID["all_repo_write"] == 0 || roleID["security_manager"] == 0 {
			t.Fatalf("roles %+v", roleID)
		}
		r, _, err := owner.Organizations.GetOrgRole(ctx, "acme", roleID["all_repo_maintain"])
		apptest.Must(t, "get role", err)
		if r.GetBaseRole() != "maintain" {
			t.Fatalf("all_repo_maintain base %q", r.GetBaseRole())
		}
		if _, resp, _ := owner.Organizations.GetOrgRole(ctx, "acme", 99999); status(resp) != http.StatusNotFound {
			t.Fatalf("unknown role: %d", status(resp))
		}
		if _, resp, _ := devGH.Organizations.ListRoles(ctx, "acme"); status(resp) != http.StatusForbidden {
			t.Fatalf("a member lists roles: %d", status(resp))
		}
		for perm, want := range map[string]int{"organization_custom_org_roles:read": http.StatusOK, "members:write": http.StatusForbidden} {
			_, resp, _ := env.Client(env.FineGrainedToken(octo, acme, nil, perm)).Organizations.ListRoles(ctx, "acme")
			if status(resp) != want {
				t.Errorf("fine-grained %s: %d, want %d", perm, status(resp), want)
			}
		}
		fg := env.Client(env.FineGrainedToken(octo, acme, nil, "organization_custom_org_roles:read"))
		if resp, _ := fg.Organizations.AssignOrgRoleToUser(ctx, "acme", "dev", roleID["all_repo_read"]); status(resp) != http.StatusForbidden {
			t.Fatalf("a read-only fine-grained token assigns a role: %d", status(resp))
		}
	})

	canPush := func(t *testing.T, gh *github.Client, repo string) bool {
		t.Helper()
		r, _, err := gh.Repositories.Get(ctx, "acme", repo)
		apptest.Must(t, "get "+repo, err)
		return r.GetPermissions().GetPush()
	}
	label := func(gh *github.Client, repo, name string) int {
		_, resp, _ := gh.Issues.CreateLabel(ctx, "acme", repo, github.CreateIssueLabelRequest{Name: name, Color: github.Ptr("ff0000")})
		return status(resp)
	}

	apptest.Step(t, "all_repo_write held directly is enforced", func(t *testing.T) {
		if canPush(t, devGH, "api") || label(devGH, "api", "before") != http.StatusForbidden {
			t.Fatal("dev writes before holding a role")
		}
		_, err := owner.Organizations.AssignOrgRoleToUser(ctx, "acme", "dev", roleID["all_repo_write"])
		apptest.Must(t, "assign", err)
		for _, repo := range []string{"api", "web"} {
			if !canPush(t, devGH, repo) {
				t.Fatalf("dev cannot push to %s with all_repo_write", repo)
			}
			if got := label(devGH, repo, "bug"); got != http.StatusCreated {
				t.Fatalf("dev creates a label on %s: %d", repo, got)
			}
		}
		collabs, _, err := owner.Repositories.ListCollaborators(ctx, "acme", "web", nil)
		apptest.Must(t, "collaborators", err)
		role := ""
		for _, c := range collabs {
			if c.GetLogin() == "dev" && c.GetPermissions().GetPush() {
				role = c.GetRoleName()
			}
		}
		if role != "write" {
			t.Fatalf("dev among the collaborators: role %q", role)
		}
		users, _, err := owner.Organizations.ListUsersAssignedToOrgRole(ctx, "acme", roleID["all_repo_write"], nil)
		apptest.Must(t, "list users", err)
		if len(users) != 1 || users[0].GetLogin() != "dev" {
			t.Fatalf("holders %v", users)
		}
		_, err = owner.Organizations.RemoveOrgRoleFromUser(ctx, "acme", "dev", roleID["all_repo_write"])
		apptest.Must(t, "revoke", err)
		if canPush(t, devGH, "api") || label(devGH, "api", "after") != http.StatusForbidden {
			t.Fatal("dev still writes after the revoke")
		}
		if resp, _ := owner.Organizations.AssignOrgRoleToUser(ctx, "acme", "octocat-nobody", roleID["all_repo_write"]); status(resp) != http.StatusNotFound {
			t.Fatalf("unknown user: %d", status(resp))
		}
		env.User("outsider")
		if resp, _ := owner.Organizations.AssignOrgRoleToUser(ctx, "acme", "outsider", roleID["all_repo_write"]); status(resp) != http.StatusUnprocessableEntity {
			t.Fatalf("non-member: %d", status(resp))
		}
	})

	apptest.Step(t, "a team's role reaches its members and nested teams", func(t *testing.T) {
		parent, _, err := owner.Teams.CreateTeam(ctx, "acme", github.CreateTeamRequest{Name: "ops", Privacy: github.Ptr("closed")})
		apptest.Must(t, "team", err)
		_, _, err = owner.Teams.CreateTeam(ctx, "acme", github.CreateTeamRequest{Name: "ops-child", ParentTeamID: parent.ID})
		apptest.Must(t, "child team", err)
		_, _, err = owner.Teams.AddTeamMembershipBySlug(ctx, "acme", "ops-child", "ann", nil)
		apptest.Must(t, "ann in the child team", err)
		_, err = owner.Organizations.AssignOrgRoleToTeam(ctx, "acme", "ops", roleID["all_repo_admin"])
		apptest.Must(t, "assign team", err)
		r, _, err := annGH.Repositories.Get(ctx, "acme", "web")
		apptest.Must(t, "ann gets web", err)
		if !r.GetPermissions().GetAdmin() {
			t.Fatalf("ann's permissions %v", r.GetPermissions())
		}
		teams, _, err := owner.Organizations.ListTeamsAssignedToOrgRole(ctx, "acme", roleID["all_repo_admin"], nil)
		apptest.Must(t, "list teams", err)
		if len(teams) != 1 || teams[0].GetSlug() != "ops" {
			t.Fatalf("teams %v", teams)
		}
		resp, body := env.Do("GET", "/orgs/acme/organization-roles/"+itoa(roleID["all_repo_admin"])+"/users", env.Token(octo, "admin:org"), nil)
		if resp.StatusCode != http.StatusOK || !contains(body, `"assignment":"indirect"`) || !contains(body, `"slug":"ops"`) {
			t.Fatalf("users: %d %s", resp.StatusCode, body)
		}
		_, err = owner.Organizations.AssignOrgRoleToUser(ctx, "acme", "ann", roleID["all_repo_admin"])
		apptest.Must(t, "ann directly too", err)
		_, body = env.Do("GET", "/orgs/acme/organization-roles/"+itoa(roleID["all_repo_admin"])+"/users", env.Token(octo, "admin:org"), nil)
		if !contains(body, `"assignment":"mixed"`) {
			t.Fatalf("users: %s", body)
		}
		_, err = owner.Organizations.RemoveOrgRoleFromUser(ctx, "acme", "ann", roleID["all_repo_admin"])
		apptest.Must(t, "ann's own role", err)
		resp, body = env.Do("DELETE", "/orgs/acme/organization-roles/teams/ops", env.Token(octo, "admin:org"), nil)
		if resp.StatusCode != http.StatusNoContent {
			t.Fatalf("revoke all of a team's roles: %d %s", resp.StatusCode, body)
		}
		if canPush(t, annGH, "web") {
			t.Fatal("ann still writes after the team's roles are revoked")
		}
	})

	apptest.Step(t, "custom organization roles", func(t *testing.T) {
		perms, _, err := owner.Organizations.ListFineGrainedPermissions(ctx, "acme")
		apptest.Must(t, "fine-grained permissions", err)
		if len(perms) == 0 {
			t.Fatal("no organization permissions")
		}
		role, _, err := owner.Organizations.CreateCustomOrgRole(ctx, "acme", github.CreateCustomOrgRoleRequest{
			Name: "auditor", Description: github.Ptr("reads the log"), Permissions: []string{"read_audit_logs"}, BaseRole: github.Ptr("triage")})
		apptest.Must(t, "create", err)
		if role.GetSource() != "Organization" || role.GetOrg().GetLogin() != "acme" || role.GetBaseRole() != "triage" {
			t.Fatalf("role %+v", role)
		}
		if _, resp, _ := owner.Organizations.CreateCustomOrgRole(ctx, "acme", github.CreateCustomOrgRoleRequest{
			Name: "Auditor", Permissions: []string{}}); status(resp) != http.StatusConflict {
			t.Fatalf("duplicate name: %d", status(resp))
		}
		if _, resp, _ := owner.Organizations.CreateCustomOrgRole(ctx, "acme", github.CreateCustomOrgRoleRequest{
			Name: "x", Permissions: []string{"fly"}}); status(resp) != http.StatusUnprocessableEntity {
			t.Fatalf("unknown permission: %d", status(resp))
		}
		role, _, err = owner.Organizations.UpdateCustomOrgRole(ctx, "acme", role.GetID(), github.UpdateCustomOrgRoleRequest{
			Name: github.Ptr("log-reader"), BaseRole: github.Ptr("write")})
		apptest.Must(t, "update", err)
		if role.GetName() != "log-reader" || role.GetBaseRole() != "write" || role.Permissions[0] != "read_audit_logs" {
			t.Fatalf("updated %+v", role)
		}
		_, err = owner.Organizations.AssignOrgRoleToUser(ctx, "acme", "dev", role.GetID())
		apptest.Must(t, "assign custom", err)
		if !canPush(t, devGH, "web") {
			t.Fatal("a custom role's base role is not enforced")
		}
		if _, _, err := owner.Organizations.UpdateCustomOrgRole(ctx, "acme", roleID["all_repo_read"],
			github.UpdateCustomOrgRoleRequest{Name: github.Ptr("mine")}); err == nil {
			t.Fatal("a predefined role changed")
		}
		_, err = owner.Organizations.DeleteCustomOrgRole(ctx, "acme", role.GetID())
		apptest.Must(t, "delete", err)
		if canPush(t, devGH, "web") {
			t.Fatal("dev writes after the role is deleted")
		}
		if _, resp, _ := owner.Organizations.GetOrgRole(ctx, "acme", role.GetID()); status(resp) != http.StatusNotFound {
			t.Fatalf("deleted role: %d", status(resp))
		}
	})
}

// TestCustomRepoRolesAndSecurityManagers drives custom repository roles
// and security manager teams through go-github.
func TestCustomRepoRolesAndSecurityManagers(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo, dev := env.User("octo"), env.User("dev")
	acme := env.Org("acme", octo, dev)
	env.Repo(acme, "api", apptest.RepoOpts{Private: true})
	owner := env.Client(env.Token(octo, "admin:org", "repo"))
	devGH := env.Client(env.Token(dev, "read:org", "repo"))

	apptest.Step(t, "custom repository roles", func(t *testing.T) {
		perms, _, err := owner.Organizations.ListRepositoryFineGrainedPermissions(ctx, "acme")
		apptest.Must(t, "repository permissions", err)
		if len(perms) == 0 {
			t.Fatal("no repository permissions")
		}
		role, _, err := owner.Organizations.CreateCustomRepoRole(ctx, "acme", github.CreateCustomRepoRoleRequest{
			Name: "labeler", BaseRole: "read", Permissions: []string{"add_label", "remove_label"}})
		apptest.Must(t, "create", err)
		if role.GetBaseRole() != "read" || len(role.Permissions) != 2 || role.GetOrg().GetLogin() != "acme" {
			t.Fatalf("role %+v", role)
		}
		for name, bad := range map[string]github.CreateCustomRepoRoleRequest{
			"duplicate":  {Name: "Labeler", BaseRole: "read", Permissions: []string{}},
			"admin base": {Name: "boss", BaseRole: "admin", Permissions: []string{}},
			"reserved":   {Name: "write", BaseRole: "read", Permissions: []string{}},
			"permission": {Name: "odd", BaseRole: "read", Permissions: []string{"fly"}},
		} {
			if _, resp, _ := owner.Organizations.CreateCustomRepoRole(ctx, "acme", bad); status(resp) != http.StatusUnprocessableEntity {
				t.Errorf("%s: %d", name, status(resp))
			}
		}
		role, _, err = owner.Organizations.UpdateCustomRepoRole(ctx, "acme", role.GetID(), github.UpdateCustomRepoRoleRequest{
			Description: github.Ptr("labels things"), BaseRole: github.Ptr("triage")})
		apptest.Must(t, "update", err)
		if role.GetBaseRole() != "triage" || role.GetDescription() != "labels things" {
			t.Fatalf("updated %+v", role)
		}
		list, _, err := owner.Organizations.ListCustomRepoRoles(ctx, "acme")
		apptest.Must(t, "list", err)
		if list.GetTotalCount() != 1 || list.CustomRepoRoles[0].GetName() != "labeler" {
			t.Fatalf("list %+v", list)
		}
		got, _, err := owner.Organizations.GetCustomRepoRole(ctx, "acme", role.GetID())
		apptest.Must(t, "get", err)
		if got.GetName() != "labeler" {
			t.Fatalf("get %+v", got)
		}
		_, err = owner.Organizations.DeleteCustomRepoRole(ctx, "acme", role.GetID())
		apptest.Must(t, "delete", err)
		list, _, err = owner.Organizations.ListCustomRepoRoles(ctx, "acme")
		apptest.Must(t, "list after delete", err)
		if list.GetTotalCount() != 0 {
			t.Fatalf("list %+v", list)
		}
	})

	apptest.Step(t, "a custom role's base role is granted to collaborators and teams", func(t *testing.T) {
		_, _, err := owner.Organizations.Edit(ctx, "acme", &github.Organization{DefaultRepoPermission: github.Ptr("none")})
		apptest.Must(t, "members see no repository by default", err)
		_, _, err = owner.Organizations.CreateCustomRepoRole(ctx, "acme", github.CreateCustomRepoRoleRequest{
			Name: "deployer", BaseRole: "write", Permissions: []string{"manage_deploy_keys"}})
		apptest.Must(t, "create deployer", err)
		env.Repo(acme, "site", apptest.RepoOpts{Private: true})
		push := func(repo string) bool {
			r, resp, _ := devGH.Repositories.Get(ctx, "acme", repo)
			return status(resp) == http.StatusOK && r.GetPermissions().GetPush()
		}
		if push("api") {
			t.Fatal("dev pushes before")
		}
		_, _, err = owner.Repositories.AddCollaborator(ctx, "acme", "api", "dev", &github.RepositoryAddCollaboratorOptions{Permission: "Deployer"})
		apptest.Must(t, "dev a deployer of api", err)
		if !push("api") {
			t.Fatal("a collaborator with a custom role does not get its base role")
		}
		_, _, err = owner.Teams.CreateTeam(ctx, "acme", github.CreateTeamRequest{Name: "deploy"})
		apptest.Must(t, "team", err)
		_, _, err = owner.Teams.AddTeamMembershipBySlug(ctx, "acme", "deploy", "dev", nil)
		apptest.Must(t, "dev in deploy", err)
		_, err = owner.Teams.AddTeamRepoBySlug(ctx, "acme", "deploy", "acme", "site", &github.TeamAddTeamRepoOptions{Permission: "deployer"})
		apptest.Must(t, "deploy team a deployer of site", err)
		if !push("site") {
			t.Fatal("a team with a custom role does not get its base role")
		}
		if _, resp, _ := owner.Repositories.AddCollaborator(ctx, "acme", "api", "dev",
			&github.RepositoryAddCollaboratorOptions{Permission: "astronaut"}); status(resp) != http.StatusUnprocessableEntity {
			t.Fatalf("unknown role: %d", status(resp))
		}
		_, _, err = owner.Organizations.Edit(ctx, "acme", &github.Organization{DefaultRepoPermission: github.Ptr("read")})
		apptest.Must(t, "members read again", err)
	})

	apptest.Step(t, "security manager teams", func(t *testing.T) {
		_, _, err := owner.Teams.CreateTeam(ctx, "acme", github.CreateTeamRequest{Name: "sec"})
		apptest.Must(t, "team", err)
		_, _, err = owner.Teams.AddTeamMembershipBySlug(ctx, "acme", "sec", "dev", nil)
		apptest.Must(t, "dev in sec", err)
		env.Repo(acme, "secret", apptest.RepoOpts{Private: true})
		_, _, err = owner.Organizations.Edit(ctx, "acme", &github.Organization{DefaultRepoPermission: github.Ptr("none")})
		apptest.Must(t, "members see no repository by default", err)
		if _, resp, _ := devGH.Repositories.Get(ctx, "acme", "secret"); status(resp) != http.StatusNotFound {
			t.Fatalf("dev sees secret before: %d", status(resp))
		}
		_, err = owner.Organizations.AddSecurityManagerTeam(ctx, "acme", "sec")
		apptest.Must(t, "add", err)
		list, _, err := owner.Organizations.ListSecurityManagerTeams(ctx, "acme")
		apptest.Must(t, "list", err)
		if len(list) != 1 || list[0].GetSlug() != "sec" {
			t.Fatalf("security managers %v", list)
		}
		r, _, err := devGH.Repositories.Get(ctx, "acme", "secret")
		apptest.Must(t, "a security manager reads every repository", err)
		if r.GetPermissions().GetPush() {
			t.Fatalf("a security manager pushes: %v", r.GetPermissions())
		}
		_, err = owner.Organizations.RemoveSecurityManagerTeam(ctx, "acme", "sec")
		apptest.Must(t, "remove", err)
		if _, resp, _ := devGH.Repositories.Get(ctx, "acme", "secret"); status(resp) != http.StatusNotFound {
			t.Fatalf("dev sees secret after: %d", status(resp))
		}
		list, _, err = owner.Organizations.ListSecurityManagerTeams(ctx, "acme")
		apptest.Must(t, "list after", err)
		if len(list) != 0 {
			t.Fatalf("security managers %v", list)
		}
	})
}
