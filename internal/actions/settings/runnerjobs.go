package settings

import (
	"context"
	"time"

	"forgeapi/internal/actions"
)

// OfflineAfter is how long a runner that stopped asking for jobs (or
// renewing the lease of the job it runs) is still shown online: a runner
// asks at least every 20 seconds (runnerproto.MaxWait).
const OfflineAfter = time.Minute

// RunnerForJobs returns the runner whose credential this is as it takes
// jobs (store.ErrNotFound when none): its labels, its place, and for an
// organization's runner its group and, when the group does not serve all
// the organization's repositories, those it serves: a group of selected
// repositories serves those, a group of private repositories the
// private ones, and a group that does not allow public repositories
// (the default) no public one, as on the platform; a group restricted to
// selected workflows runs those workflows' jobs alone.
func (s *Service) RunnerForJobs(ctx context.Context, credential string) (*actions.RemoteRunner, error) {
	r, err := s.RunnerByCredential(ctx, credential)
	if err != nil {
		return nil, err
	}
	out := &actions.RemoteRunner{ID: r.ID, Name: r.Name, Ephemeral: r.Ephemeral}
	for _, l := range r.Labels {
		out.Labels = append(out.Labels, l.Name)
	}
	switch r.Place.Scope {
	case ScopeRepo:
		out.RepoID = r.Place.ID
		return out, nil
	case ScopeOrg:
		out.OrgID = r.Place.ID
	case ScopeEnterprise: // the repositories of the enterprise's organizations
		out.EnterpriseID = r.Place.ID
		out.Repos, err = int64s(ctx, s.DB, `SELECT r.id FROM repositories r JOIN enterprise_orgs e ON e.org_id = r.owner_id
			WHERE e.enterprise_id = $1`, r.Place.ID)
		if out.Repos == nil {
			out.Repos = []int64{}
		}
		return out, err
	}
	if r.GroupID == 0 {
		return out, nil
	}
	g, err := groupByID(ctx, s.DB, out.OrgID, r.GroupID)
	if err != nil {
		return nil, err
	}
	out.GroupID, out.GroupName = g.ID, g.Name
	if g.RestrictedToWorkflows {
		out.Workflows = append([]string{}, g.SelectedWorkflows...)
	}
	if g.Visibility == "all" && g.AllowsPublicRepositories {
		return out, nil
	}
	out.Repos, err = int64s(ctx, s.DB, `SELECT id FROM repositories WHERE owner_id = $1 AND (private OR $2)
		AND ($3 <> 'selected' OR id IN (SELECT repository_id FROM runner_group_repositories WHERE runner_group_id = $4))`,
		out.OrgID, g.AllowsPublicRepositories, g.Visibility, g.ID)
	if out.Repos == nil {
		out.Repos = []int64{}
	}
	return out, err
}

// shownStatus sets a runner's status as the API shows it: offline (and
// not busy) when it has not been seen for OfflineAfter.
func shownStatus(r *Runner, lastSeen *time.Time) {
	if r.Status == "online" && (lastSeen == nil || now().Sub(*lastSeen) > OfflineAfter) {
		r.Status = "offline"
	}
	if r.Status == "offline" {
		r.Busy = false
	}
}

var _ actions.Runners = (*Service)(nil)
