package settings

import (
	"context"
	"errors"

	"forgeapi/internal/store"
)

// RunValues returns what a job of the repository repoID sees as its
// secrets (opened) and variables, for the environment named environment
// ("" for none): the organization's values visible to the repository,
// overridden by the repository's, overridden by the environment's. An
// environment the repository does not have adds nothing. A secret that no
// longer opens (its key replaced) is left out.
func (s *Service) RunValues(ctx context.Context, repoID int64, environment string) (secrets, variables map[string]string, err error) {
	var ownerID int64
	var private, isOrg bool
	err = s.DB.QueryRowContext(ctx, `SELECT r.owner_id, r.private, a.type = 'Organization' FROM repositories r
		JOIN accounts a ON a.id = r.owner_id WHERE r.id = $1`, repoID).Scan(&ownerID, &private, &isOrg)
	if err != nil {
		return nil, nil, store.Normalize(err)
	}
	layers, err := s.layers(ctx, repoID, ownerID, private, isOrg, environment)
	if err != nil {
		return nil, nil, err
	}
	secrets, variables = map[string]string{}, map[string]string{}
	keys := map[Place]*keyPair{}
	for _, layer := range layers {
		for _, v := range layer {
			if v.Kind == KindVariable {
				variables[v.Name] = v.Value
				continue
			}
			plain, ok, err := s.openValue(ctx, keys, v)
			if err != nil {
				return nil, nil, err
			}
			if ok {
				secrets[v.Name] = plain
			}
		}
	}
	return secrets, variables, nil
}

// layers are the repository's Actions secrets and variables from the
// widest place to the narrowest.
func (s *Service) layers(ctx context.Context, repoID, ownerID int64, private, isOrg bool, environment string) ([][]*Value, error) {
	var out [][]*Value
	if isOrg {
		for _, kind := range []string{KindSecret, KindVariable} {
			list, err := orgValuesFor(ctx, s.DB, kind, ownerID, repoID, private)
			if err != nil {
				return nil, err
			}
			out = append(out, list)
		}
	}
	places := []Place{RepoPlace(repoID, 0)}
	if environment != "" {
		var envID int64
		err := s.DB.QueryRowContext(ctx, `SELECT id FROM environments WHERE repository_id = $1 AND lower(name) = lower($2)`,
			repoID, environment).Scan(&envID)
		if err := store.Normalize(err); err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, err
		} else if err == nil {
			places = append(places, EnvPlace(envID, repoID, 0))
		}
	}
	for _, p := range places {
		list, err := scanValues(ctx, s.DB, p, `SELECT `+valueColumns+` FROM actions_values WHERE kind IN ('secret', 'variable')
			AND scope = $1 AND scope_id = $2 ORDER BY name`, p.Scope, p.ID)
		if err != nil {
			return nil, err
		}
		out = append(out, list)
	}
	return out, nil
}

// openValue opens a secret with its place's key pair, loaded once.
func (s *Service) openValue(ctx context.Context, keys map[Place]*keyPair, v *Value) (string, bool, error) {
	kp := v.Place
	if kp.Scope == ScopeEnv {
		kp = Place{Scope: ScopeRepo}
		if err := s.DB.QueryRowContext(ctx, `SELECT repository_id FROM environments WHERE id = $1`, v.Place.ID).Scan(&kp.ID); err != nil {
			return "", false, store.Normalize(err)
		}
	}
	kp = Place{Scope: kp.Scope, ID: kp.ID}
	k, ok := keys[kp]
	if !ok {
		var err error
		if k, err = s.loadKey(ctx, s.DB, kp); err != nil && !errors.Is(err, store.ErrNotFound) {
			return "", false, err
		}
		keys[kp] = k
	}
	if k == nil {
		return "", false, nil
	}
	plain, opened := k.open(v.Value)
	return plain, opened, nil
}
