package rulesets

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"forgeapi/internal/access"
	"forgeapi/internal/accounts"
	"forgeapi/internal/apps"
	"forgeapi/internal/auth"
	"forgeapi/internal/git/githttp"
	"forgeapi/internal/githost"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// Service holds the organization rulesets and enforces them.
type Service struct {
	DB *store.DB
}

// Repository roles a RepositoryRole bypass actor names by actor_id, as
// the platform numbers them; forgeapi's write role stands for maintain.
var repositoryRoles = map[int64]auth.Role{2: auth.RoleWrite, 4: auth.RoleWrite, 5: auth.RoleAdmin}

// CheckPush is the githost.PushCheck of rulesets: each reference update
// of a push is checked against the active rulesets that select the
// repository (its organization's, by their conditions, and its own) and
// the reference, unless the pusher is one of the ruleset's bypass actors (in
// mode always or exempt). A violation refuses the whole push with a
// message naming the reference, each ruleset and what it refuses. Rulesets
// in evaluate mode are evaluated but never refuse; disabled ones are not
// read. Each update that an active or evaluated ruleset applies to is
// recorded as a rule suite (one insert, refused or not). A push to a
// repository no ruleset selects costs one indexed query.
func (s *Service) CheckPush(ctx context.Context, push *githost.Push) error {
	all, err := ForRepo(ctx, s.DB, push.Repo.Owner.ID, push.Repo.ID, true, true)
	if err != nil {
		return err
	}
	in := newInspection(push.Inspect)
	for _, u := range push.Updates {
		suite := &Suite{Repo: push.Repo, Actor: push.Pusher, Update: u}
		var lines []string
		for _, rs := range all {
			msgs, err := s.evaluate(ctx, rs, push, in, u, suite)
			if err != nil {
				return err
			}
			for _, m := range msgs {
				lines = append(lines, fmt.Sprintf("- Ruleset %q (id %d): %s", rs.Name, rs.ID, m))
			}
		}
		if err := s.record(ctx, suite); err != nil {
			return err
		}
		if len(lines) > 0 {
			return githttp.Refuse("Repository rule violations found for %s.\n%s", u.Ref, strings.Join(lines, "\n"))
		}
	}
	return nil
}

// evaluate evaluates the ruleset's rules on the update into the suite and
// returns what it refuses: nothing when it does not apply, is only
// evaluated, or the pusher may bypass it.
func (s *Service) evaluate(ctx context.Context, rs *Ruleset, push *githost.Push, in *inspection, u githttp.RefUpdate, suite *Suite) ([]string, error) {
	if !rs.AppliesToRepo(push.Repo) || !rs.AppliesToRef(push.Repo, u) {
		return nil, nil
	}
	var msgs []string
	for _, r := range rs.Rules {
		msg, err := r.violation(ctx, in, u)
		if err != nil {
			return nil, err
		}
		suite.add(rs, r, msg)
		if msg != "" {
			msgs = append(msgs, msg)
		}
	}
	outcome := ResultPass
	if len(msgs) > 0 {
		bypass, err := s.CanBypass(ctx, rs, push.Repo, push.Pusher)
		if err != nil {
			return nil, err
		}
		outcome = ResultFail
		if bypass {
			outcome, msgs = ResultBypass, nil
		}
	}
	suite.conclude(rs.Enforcement, outcome)
	if rs.Enforcement != EnforcementActive {
		return nil, nil
	}
	return msgs, nil
}

// CanBypass reports whether the account is one of the ruleset's bypass
// actors for pushes (bypass mode always or exempt): an owner of the
// organization for OrganizationAdmin, a user with at least the role on
// the repository for RepositoryRole, the app's bot for Integration, the
// user for User, a member of the team or of one of its child teams for
// Team.
func (s *Service) CanBypass(ctx context.Context, rs *Ruleset, repo *repos.Repository, who *accounts.Account) (bool, error) {
	for _, a := range rs.BypassActors {
		if a.BypassMode == "pull_request" {
			continue
		}
		ok, err := s.isActor(ctx, a, repo, who)
		if err != nil || ok {
			return ok, err
		}
	}
	return false, nil
}

func (s *Service) isActor(ctx context.Context, a BypassActor, repo *repos.Repository, who *accounts.Account) (bool, error) {
	id := int64(0)
	if a.ActorID != nil {
		id = *a.ActorID
	}
	switch a.ActorType {
	case "OrganizationAdmin":
		role, err := accounts.MemberRole(ctx, s.DB, repo.Owner.ID, who.ID)
		return role == accounts.RoleOwner, err
	case "User":
		return id == who.ID, nil
	case "Team":
		return access.InTeam(ctx, s.DB, id, who.ID)
	case "Integration":
		app, err := apps.ByID(ctx, s.DB, id)
		if errors.Is(err, store.ErrNotFound) {
			return false, nil
		}
		return err == nil && app.BotID == who.ID, err
	case "RepositoryRole":
		p := &auth.Principal{Account: &auth.Account{ID: who.ID, Login: who.Login, Type: who.Type}}
		role, err := access.RepoRole(ctx, s.DB, p, repo)
		return err == nil && repositoryRoles[id] != auth.RoleNone && role >= repositoryRoles[id], err
	}
	return false, nil
}
