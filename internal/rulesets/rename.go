package rulesets

import (
	"context"
	"strings"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// CheckRepositoryUpdate is a repos.Service.AfterUpdate check: a
// repository that an active ruleset targets with a repository_name
// condition marked protected cannot be renamed (the description:
// "whether renaming of target repositories is prevented"), unless the
// actor is one of the ruleset's bypass actors. A change of letter case
// only keeps the name and passes; rulesets in evaluate mode do not refuse.
func (s *Service) CheckRepositoryUpdate(ctx context.Context, tx store.Q, before, after *repos.Repository, actor *accounts.Account) error {
	if strings.EqualFold(before.Name, after.Name) || !before.Owner.IsOrg() {
		return nil
	}
	all, err := List(ctx, tx, before.Owner.ID, true)
	if err != nil {
		return err
	}
	for _, rs := range all {
		names := rs.Conditions.RepositoryName
		if rs.Enforcement != EnforcementActive || names == nil || !names.Protected || !rs.AppliesToRepo(before) {
			continue
		}
		if actor != nil {
			bypass, err := s.CanBypass(ctx, rs, before, actor)
			if err != nil {
				return err
			}
			if bypass {
				continue
			}
		}
		msg := "Repository rule violations found: ruleset \"" + rs.Name + "\" protects the name of " + before.FullName() +
			" from renaming."
		e := apierr.Custom("Repository", "name", "%s", msg)
		e.Message = msg
		return e
	}
	return nil
}
