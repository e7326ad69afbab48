package e2e_test

import (
	"net/http"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/webhooks"
)

// TestUserBlocks: a user blocks another, who stops following them and
// can no longer follow them, star or watch their repositories; listing,
// checking and unblocking work; blocking oneself is a 422.
func TestUserBlocks(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo")
	troll := env.User("troll")
	env.Repo(octo, "hello")
	me := env.Client(env.Token(octo, "user"))
	them := env.Client(env.Token(troll, "user", "repo"))
	_, err := them.Users.Follow(ctx, "octo")
	apptest.Must(t, "follow before the block", err)

	_, err = me.Users.BlockUser(ctx, "troll")
	apptest.Must(t, "block", err)
	if blocked, _, err := me.Users.IsBlocked(ctx, "troll"); err != nil || !blocked {
		t.Fatalf("is blocked: %v %v", blocked, err)
	}
	list, _, err := me.Users.ListBlockedUsers(ctx, nil)
	apptest.Must(t, "list", err)
	if len(list) != 1 || list[0].GetLogin() != "troll" {
		t.Fatalf("blocked users: %+v", list)
	}
	if following, _, _ := them.Users.IsFollowing(ctx, "troll", "octo"); following {
		t.Fatal("a blocked user still follows the blocker")
	}
	if resp, _ := them.Users.Follow(ctx, "octo"); apptest.ResponseStatus(resp) != http.StatusForbidden {
		t.Fatalf("blocked user follows: %d, want 403", apptest.ResponseStatus(resp))
	}
	if resp, _ := them.Activity.Star(ctx, "octo", "hello"); apptest.ResponseStatus(resp) != http.StatusForbidden {
		t.Fatalf("blocked user stars: %d, want 403", apptest.ResponseStatus(resp))
	}
	if _, resp, _ := them.Activity.SetRepositorySubscription(ctx, "octo", "hello", &github.Subscription{Subscribed: github.Ptr(true)}); apptest.ResponseStatus(resp) != http.StatusForbidden {
		t.Fatalf("blocked user watches: %d, want 403", apptest.ResponseStatus(resp))
	}
	if resp, _ := me.Users.BlockUser(ctx, "octo"); apptest.ResponseStatus(resp) != http.StatusUnprocessableEntity {
		t.Fatalf("blocking oneself: %d, want 422", apptest.ResponseStatus(resp))
	}

	_, err = me.Users.UnblockUser(ctx, "troll")
	apptest.Must(t, "unblock", err)
	if blocked, _, _ := me.Users.IsBlocked(ctx, "troll"); blocked {
		t.Fatal("still blocked after unblocking")
	}
	_, err = them.Activity.Star(ctx, "octo", "hello")
	apptest.Must(t, "star after the unblock", err)
}

// orgBlockEvent names an org_block delivery "action user in org".
func orgBlockEvent(d apptest.Delivery) string {
	if e, ok := d.Parsed.(*github.OrgBlockEvent); ok {
		return e.GetAction() + " " + e.GetBlockedUser().GetLogin() + " in " + e.GetOrganization().GetLogin()
	}
	return ""
}

// TestOrganizationBlocks: owners block a user on behalf of the
// organization (org_block events to its hooks); the blocked user cannot
// star its repositories nor be invited; members cannot be blocked, and
// members who are not owners cannot block.
func TestOrganizationBlocks(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	ctx := apptest.Ctx()
	octo := env.User("octo")
	hubot := env.User("hubot")
	troll := env.User("troll")
	acme := env.Org("acme", octo, hubot)
	env.Repo(acme, "rockets")
	owner := env.Client(env.Token(octo, "admin:org", "admin:org_hook"))
	rc := apptest.NewReceiver(t, "s")
	_, _, err := owner.Organizations.CreateHook(ctx, "acme", &github.Hook{Name: github.Ptr("web"), Events: []string{"org_block"},
		Config: &github.HookConfig{URL: github.Ptr(rc.URL), ContentType: github.Ptr("json"), Secret: github.Ptr("s")}})
	apptest.Must(t, "hook", err)

	_, err = owner.Organizations.BlockUser(ctx, "acme", "troll")
	apptest.Must(t, "block", err)
	if blocked, _, err := owner.Organizations.IsBlocked(ctx, "acme", "troll"); err != nil || !blocked {
		t.Fatalf("is blocked: %v %v", blocked, err)
	}
	if resp, _ := env.Client(env.Token(troll, "repo")).Activity.Star(ctx, "acme", "rockets"); apptest.ResponseStatus(resp) != http.StatusForbidden {
		t.Fatalf("blocked user stars the organization's repository: %d, want 403", apptest.ResponseStatus(resp))
	}
	if _, resp, _ := owner.Organizations.EditOrgMembership(ctx, "troll", "acme", nil); apptest.ResponseStatus(resp) != http.StatusUnprocessableEntity {
		t.Fatalf("inviting a blocked user: %d, want 422", apptest.ResponseStatus(resp))
	}
	if resp, _ := owner.Organizations.BlockUser(ctx, "acme", "hubot"); apptest.ResponseStatus(resp) != http.StatusUnprocessableEntity {
		t.Fatalf("blocking a member: %d, want 422", apptest.ResponseStatus(resp))
	}
	if resp, _ := env.Client(env.Token(hubot, "admin:org")).Organizations.BlockUser(ctx, "acme", "troll"); apptest.ResponseStatus(resp) != http.StatusForbidden {
		t.Fatalf("a member blocks: %d, want 403", apptest.ResponseStatus(resp))
	}
	list, _, err := owner.Organizations.ListBlockedUsers(ctx, "acme", nil)
	apptest.Must(t, "list", err)
	if len(list) != 1 || list[0].GetLogin() != "troll" {
		t.Fatalf("blocked: %+v", list)
	}
	_, err = owner.Organizations.UnblockUser(ctx, "acme", "troll")
	apptest.Must(t, "unblock", err)

	rc.WaitFor(t, orgBlockEvent, "blocked troll in acme", "unblocked troll in acme")
	if seen := rc.Described(orgBlockEvent); len(seen) != 2 {
		t.Fatalf("org_block events %v, want blocked and unblocked of troll in acme", seen)
	}
}
