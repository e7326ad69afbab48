package prereceive

import (
	"context"

	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// Level is where a hook's setting in force was made.
type Level int

// The levels of a setting, from the site down.
const (
	LevelSite Level = iota
	LevelOrg
	LevelRepo
)

// Setting is a hook's enforcement in force at an organization or a
// repository, whether the level below may override it, and the level that
// made it.
type Setting struct {
	Enforcement     string
	AllowDownstream bool
	Level           Level
}

// orgOverride is an organization's override of a hook.
type orgOverride struct {
	Enforcement     string
	AllowDownstream bool
}

// orgOverrides returns an organization's overrides by hook id.
func orgOverrides(ctx context.Context, q store.Q, orgID int64) (map[int64]orgOverride, error) {
	rows, err := q.QueryContext(ctx, `SELECT hook_id, enforcement, allow_downstream FROM pre_receive_org_hooks WHERE org_id = $1`, orgID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64]orgOverride{}
	for rows.Next() {
		var id int64
		var o orgOverride
		if err := rows.Scan(&id, &o.Enforcement, &o.AllowDownstream); err != nil {
			return nil, err
		}
		out[id] = o
	}
	return out, rows.Err()
}

// repoOverrides returns a repository's overrides (enforcement) by hook id.
func repoOverrides(ctx context.Context, q store.Q, repoID int64) (map[int64]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT hook_id, enforcement FROM pre_receive_repo_hooks WHERE repository_id = $1`, repoID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64]string{}
	for rows.Next() {
		var id int64
		var e string
		if err := rows.Scan(&id, &e); err != nil {
			return nil, err
		}
		out[id] = e
	}
	return out, rows.Err()
}

// siteSetting is a hook's own setting.
func siteSetting(h *Hook) Setting {
	return Setting{Enforcement: h.Enforcement, AllowDownstream: h.AllowDownstream, Level: LevelSite}
}

// orgSetting is the hook's setting in force at an organization: its
// override when the hook allows one, else the hook's own. An
// organization's override lets repositories override only when the hook
// lets organizations override.
func orgSetting(h *Hook, overrides map[int64]orgOverride) Setting {
	o, ok := overrides[h.ID]
	if !h.AllowDownstream || !ok {
		return siteSetting(h)
	}
	return Setting{Enforcement: o.Enforcement, AllowDownstream: o.AllowDownstream, Level: LevelOrg}
}

// repoSetting is the hook's setting in force at a repository: its
// override when the level above allows one, else the level above's.
func repoSetting(h *Hook, orgs map[int64]orgOverride, own map[int64]string) Setting {
	up := orgSetting(h, orgs)
	if e, ok := own[h.ID]; ok && up.AllowDownstream {
		return Setting{Enforcement: e, Level: LevelRepo}
	}
	return up
}

// repoScope is what a repository's settings are made from.
type repoScope struct {
	orgs map[int64]orgOverride
	own  map[int64]string
}

// loadRepoScope reads the overrides of a repository and of its owner
// when the owner is an organization.
func loadRepoScope(ctx context.Context, q store.Q, repo *repos.Repository) (repoScope, error) {
	var sc repoScope
	var err error
	if repo.Owner.IsOrg() {
		if sc.orgs, err = orgOverrides(ctx, q, repo.Owner.ID); err != nil {
			return sc, err
		}
	}
	sc.own, err = repoOverrides(ctx, q, repo.ID)
	return sc, err
}

// InForce returns the hooks whose setting at the repository is enabled or
// testing, by id, with their settings.
func (s *Service) InForce(ctx context.Context, repo *repos.Repository) ([]*Hook, []Setting, error) {
	hooks, err := Hooks(ctx, s.DB)
	if err != nil || len(hooks) == 0 {
		return nil, nil, err
	}
	sc, err := loadRepoScope(ctx, s.DB, repo)
	if err != nil {
		return nil, nil, err
	}
	var out []*Hook
	var settings []Setting
	for _, h := range hooks {
		if st := repoSetting(h, sc.orgs, sc.own); st.Enforcement != Disabled {
			out = append(out, h)
			settings = append(settings, st)
		}
	}
	return out, settings, nil
}
