package apps

import (
	"context"
	"slices"

	"forgeapi/internal/auth"
	"forgeapi/internal/repos"
)

// ProtectionRuleApps returns the apps that may gate the repository's
// deployments as custom deployment protection rules, as the platform
// offers them: installed (not suspended) on the repository's owner with
// a selection that reaches it, subscribed to the
// deployment_protection_rule event and holding Deployments read.
func (s *Service) ProtectionRuleApps(ctx context.Context, repo *repos.Repository) ([]*App, error) {
	all, err := loadReceiving(ctx, s.DB, repo.Owner.ID)
	if err != nil {
		return nil, err
	}
	var out []*App
	for _, r := range all {
		if !r.inst.Selects(repo) || !slices.Contains(r.app.Events, "deployment_protection_rule") ||
			!r.app.Permissions.Has(auth.Need{Name: "deployments", Level: auth.Read}) {
			continue
		}
		app, err := ByID(ctx, s.DB, r.inst.AppID)
		if err != nil {
			return nil, err
		}
		out = append(out, app)
	}
	return out, nil
}
