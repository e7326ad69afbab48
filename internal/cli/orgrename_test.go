package cli_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// TestCLIRenamesAnOrganization: `forgeapi org rename OLD NEW` renames
// through the API's service: the organization answers under NEW (printed
// as JSON), its old repository URLs redirect, the audit log has org.rename
// with the organization as actor; a taken login is refused and changes
// nothing.
func TestCLIRenamesAnOrganization(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo")
	env.User("hubot")
	env.Repo(env.Org("acme", octo), "rockets")
	flags := storeFlags(env)

	if code, _, _ := cliRun(t, append([]string{"org", "rename", "acme", "hubot"}, flags...)...); code == 0 {
		t.Fatal("renaming to a taken login succeeded")
	}
	var printed github.Organization
	apptest.Must(t, "printed organization", json.Unmarshal([]byte(cliOK(t, append([]string{"org", "rename", "acme", "acme-corp"}, flags...)...)), &printed))
	if printed.GetLogin() != "acme-corp" {
		t.Fatalf("printed %+v", printed)
	}
	owner := env.Client(env.Token(octo, "repo", "read:audit_log"))
	repo, _, err := owner.Repositories.Get(ctx, "acme", "rockets")
	apptest.Must(t, "old repository URL", err)
	if repo.GetFullName() != "acme-corp/rockets" {
		t.Fatalf("old repository URL leads to %q", repo.GetFullName())
	}
	entries, _, err := owner.Organizations.GetAuditLog(ctx, "acme-corp", &github.GetAuditLogOptions{Phrase: github.Ptr("action:org.rename")})
	apptest.Must(t, "audit log", err)
	if len(entries) != 1 || entries[0].GetActor() != "acme-corp" {
		t.Fatalf("org.rename entries: %+v", entries)
	}
}
