package e2e_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apptest"
)

// TestRulesetsTeamBypass checks a Team bypass actor: members of the team,
// and of its child teams as the platform counts them, push past the
// ruleset (a force push over git and a forced update through the git
// references API), while other members of the organization are refused.
// A Team actor needs an actor_id naming a team of the organization (422
// otherwise), and the ruleset reads back with it.
func TestRulesetsTeamBypass(t *testing.T) {
	t.Parallel()
	f := newRulesetFixture(t)
	ctx := context.Background()
	qa := f.env.User("qa")
	apptest.Must(t, "qa joins acme", accounts.SetMember(ctx, f.env.App.DB, f.acme.ID, qa.ID, accounts.RoleMember))
	qaToken := f.env.Token(qa, "repo")
	qaGH := f.env.Client(qaToken)
	qaURL := f.env.GitURL("acme", "app", "qa", qaToken)

	release, _, err := f.boss_.Teams.CreateTeam(ctx, "acme", github.CreateTeamRequest{Name: "Release", Privacy: new("closed")})
	apptest.Must(t, "create team", err)
	_, _, err = f.boss_.Teams.CreateTeam(ctx, "acme", github.CreateTeamRequest{Name: "Hotfix", ParentTeamID: new(release.GetID())})
	apptest.Must(t, "create child team", err)

	rs := noForcePushes()
	rs.BypassActors = []*github.BypassActor{{ActorID: new(int64(999999)), ActorType: new(github.BypassActorTypeTeam), BypassMode: new(github.BypassModeAlways)}}
	if _, resp, _ := f.boss_.Organizations.CreateRepositoryRuleset(ctx, "acme", rs); status(resp) != http.StatusUnprocessableEntity {
		t.Errorf("Team actor naming no team: %d, want 422", status(resp))
	}
	rs.BypassActors[0].ActorID = nil
	if _, resp, _ := f.boss_.Organizations.CreateRepositoryRuleset(ctx, "acme", rs); status(resp) != http.StatusUnprocessableEntity {
		t.Errorf("Team actor without actor_id: %d, want 422", status(resp))
	}
	rs.BypassActors[0].ActorID = new(release.GetID())
	created := f.create(t, rs)
	got, _, err := f.boss_.Organizations.GetRepositoryRuleset(ctx, "acme", created.GetID())
	apptest.Must(t, "read ruleset", err)
	if len(got.BypassActors) != 1 || *got.BypassActors[0].GetActorType() != github.BypassActorTypeTeam || got.BypassActors[0].GetActorID() != release.GetID() {
		t.Errorf("bypass actors = %v", got.BypassActors)
	}

	// A new commit on main, then a diverging one to force-push.
	base := strings.TrimSpace(apptest.Git(t, f.work, "rev-parse", "HEAD"))
	apptest.Commit(t, f.work, "one", map[string]string{"a.txt": "a"})
	apptest.Git(t, f.work, "push", "-q", f.url(f.dev, f.devToken), "HEAD:refs/heads/main")
	apptest.Git(t, f.work, "reset", "-q", "--hard", base)
	apptest.Commit(t, f.work, "other", map[string]string{"b.txt": "b"})

	// dev is in no team yet: refused, as qa is.
	refused(t, f, "HEAD:refs/heads/main", true, `Ruleset "No force pushes"`, "Cannot force-push to this branch")
	if out, err := apptest.TryGit(t, f.work, "push", "-q", "--force", qaURL, "HEAD:refs/heads/main"); err == nil ||
		!strings.Contains(out, "Cannot force-push to this branch") {
		t.Fatalf("qa's force push: %v %s", err, out)
	}
	// A member of the child team bypasses.
	_, _, err = f.boss_.Teams.AddTeamMembershipBySlug(ctx, "acme", "hotfix", "dev", &github.TeamAddTeamMembershipOptions{Role: "member"})
	apptest.Must(t, "add dev to the child team", err)
	apptest.Git(t, f.work, "push", "-q", "--force", f.url(f.dev, f.devToken), "HEAD:refs/heads/main")

	// Through the API: qa's forced update is refused, dev's goes through.
	_, resp, err := qaGH.Git.UpdateRef(ctx, "acme", "app", "heads/main", github.UpdateRef{SHA: base, Force: new(true)})
	if err == nil || resp.StatusCode != http.StatusConflict || !strings.Contains(err.Error(), `Ruleset "No force pushes"`) {
		t.Errorf("qa's forced ref update: %v", err)
	}
	_, _, err = f.dev_.Git.UpdateRef(ctx, "acme", "app", "heads/main", github.UpdateRef{SHA: base, Force: new(true)})
	apptest.Must(t, "dev's forced ref update", err)
}
