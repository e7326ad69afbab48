package deployments

import (
	"context"
	"regexp"
	"strings"

	"forgeapi/internal/store"
)

// BranchPolicy is a name pattern of an environment's custom deployment
// branch policy: branches (or tags) whose name matches may deploy there.
type BranchPolicy struct {
	ID            int64
	EnvironmentID int64
	Name          string
	Kind          string // branch | tag
}

// BranchPolicies returns the environment's name patterns, oldest first.
func (s *Service) BranchPolicies(ctx context.Context, envID int64) ([]*BranchPolicy, error) {
	return s.branchPolicies(ctx, s.DB, envID)
}

// branchPolicies is BranchPolicies read through q, the caller's
// transaction when it has one.
func (s *Service) branchPolicies(ctx context.Context, q store.Q, envID int64) ([]*BranchPolicy, error) {
	return s.queryPoliciesIn(ctx, q, `SELECT id, environment_id, name, kind FROM deployment_branch_policies
		WHERE environment_id = $1 ORDER BY id`, envID)
}

// BranchPolicyByID returns the environment's name pattern id
// (store.ErrNotFound when it has none).
func (s *Service) BranchPolicyByID(ctx context.Context, envID, id int64) (*BranchPolicy, error) {
	list, err := s.queryPolicies(ctx, `SELECT id, environment_id, name, kind FROM deployment_branch_policies
		WHERE environment_id = $1 AND id = $2`, envID, id)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, store.ErrNotFound
	}
	return list[0], nil
}

// CreateBranchPolicy adds the name pattern p to its environment. When
// the environment has the pattern already, it returns that one and
// created false.
func (s *Service) CreateBranchPolicy(ctx context.Context, p BranchPolicy) (*BranchPolicy, bool, error) {
	var existing []*BranchPolicy
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		var err error
		existing, err = s.queryPoliciesIn(ctx, tx, `SELECT id, environment_id, name, kind FROM deployment_branch_policies
			WHERE environment_id = $1 AND kind = $2 AND name = $3`, p.EnvironmentID, p.Kind, p.Name)
		if err != nil || len(existing) > 0 {
			return err
		}
		return store.Normalize(tx.QueryRowContext(ctx, `INSERT INTO deployment_branch_policies (environment_id, name, kind)
			VALUES ($1, $2, $3) RETURNING id`, p.EnvironmentID, p.Name, p.Kind).Scan(&p.ID))
	})
	if err != nil {
		return nil, false, err
	}
	if len(existing) > 0 {
		return existing[0], false, nil
	}
	return &p, true, nil
}

// RenameBranchPolicy changes the pattern of p to name.
func (s *Service) RenameBranchPolicy(ctx context.Context, p *BranchPolicy, name string) error {
	_, err := s.DB.ExecContext(ctx, `UPDATE deployment_branch_policies SET name = $1 WHERE id = $2`, name, p.ID)
	if err = store.Normalize(err); err == nil {
		p.Name = name
	}
	return err
}

// DeleteBranchPolicy removes the pattern.
func (s *Service) DeleteBranchPolicy(ctx context.Context, p *BranchPolicy) error {
	_, err := s.DB.ExecContext(ctx, `DELETE FROM deployment_branch_policies WHERE id = $1`, p.ID)
	return store.Normalize(err)
}

func (s *Service) queryPolicies(ctx context.Context, query string, args ...any) ([]*BranchPolicy, error) {
	return s.queryPoliciesIn(ctx, s.DB, query, args...)
}

func (s *Service) queryPoliciesIn(ctx context.Context, q store.Q, query string, args ...any) ([]*BranchPolicy, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, store.Normalize(err)
	}
	defer rows.Close()
	out := []*BranchPolicy{}
	for rows.Next() {
		p := &BranchPolicy{}
		if err := rows.Scan(&p.ID, &p.EnvironmentID, &p.Name, &p.Kind); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// MatchPattern reports whether name matches a branch policy's pattern,
// with the platform's fnmatch rules: `*` matches any characters but `/`,
// `**` any characters, `?` one character but `/`, `[...]` a character of
// the set.
func MatchPattern(pattern, name string) bool {
	re, err := patternRegexp(pattern)
	return err == nil && re.MatchString(name)
}

// patternRegexp compiles a branch policy pattern into an anchored
// regular expression.
func patternRegexp(pattern string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(pattern); i++ {
		switch c := pattern[i]; c {
		case '*':
			if i+1 < len(pattern) && pattern[i+1] == '*' {
				b.WriteString(".*")
				i++
			} else {
				b.WriteString("[^/]*")
			}
		case '?':
			b.WriteString("[^/]")
		case '[':
			end := strings.IndexByte(pattern[i+1:], ']')
			if end < 0 {
				b.WriteString(`\[`)
				continue
			}
			set := pattern[i+1 : i+1+end]
			if strings.HasPrefix(set, "!") {
				set = "^" + set[1:]
			}
			b.WriteString("[" + strings.ReplaceAll(set, `\`, `\\`) + "]")
			i += end + 1
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("$")
	return regexp.Compile(b.String())
}
