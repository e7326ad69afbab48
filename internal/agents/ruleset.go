package agents

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/git/githttp"
	"forgeapi/internal/githost"
	"forgeapi/internal/store"
)

// Ruleset is an enterprise ruleset that restricts file paths in the
// repositories it targets (an organization and a repository name).
type Ruleset struct {
	ID                  int64
	EnterpriseID        int64
	EnterpriseSlug      string
	Name                string
	Enforcement         string // active
	Target              string // push
	OrgID               int64
	RepositoryName      string
	RestrictedFilePaths []string
	CreatedAt           time.Time
	UpdatedAt           time.Time
}

// The ruleset the custom agents source creates.
const (
	// RulesetName is its name, which refused pushes quote.
	RulesetName = "Protect custom agents"
	// rulesetPurpose marks it as managed by the custom agents source:
	// one per enterprise, moved and removed with the source.
	rulesetPurpose = "custom_agents"
)

// ProtectedPaths are the file path patterns the ruleset restricts: the
// agent definitions and the same pattern under .service/. As in the
// platform's file path restrictions, `*` matches within one path segment
// and never crosses a `/`.
var ProtectedPaths = []string{"agents/*.md", ".service/agents/*.md"}

// Restricts reports whether the ruleset restricts the path.
func (rs *Ruleset) Restricts(p string) bool {
	for _, pattern := range rs.RestrictedFilePaths {
		if ok, err := path.Match(pattern, p); err == nil && ok {
			return true
		}
	}
	return false
}

const rulesetColumns = `r.id, r.enterprise_id, e.slug, r.name, r.enforcement, r.target, r.org_id,
	r.repository_name, r.restricted_file_paths, r.created_at, r.updated_at`

const rulesetFrom = ` FROM rulesets r JOIN enterprises e ON e.id = r.enterprise_id `

func scanRuleset(row interface{ Scan(...any) error }) (*Ruleset, error) {
	var rs Ruleset
	var paths string
	err := row.Scan(&rs.ID, &rs.EnterpriseID, &rs.EnterpriseSlug, &rs.Name, &rs.Enforcement, &rs.Target, &rs.OrgID,
		&rs.RepositoryName, &paths, &rs.CreatedAt, &rs.UpdatedAt)
	if err != nil {
		return nil, store.Normalize(err)
	}
	if err := json.Unmarshal([]byte(paths), &rs.RestrictedFilePaths); err != nil {
		return nil, fmt.Errorf("agents: ruleset %d: restricted paths: %w", rs.ID, err)
	}
	return &rs, nil
}

// managedRuleset returns the enterprise's custom agents ruleset, or nil
// when it has none.
func managedRuleset(ctx context.Context, q store.Q, enterpriseID int64) (*Ruleset, error) {
	rs, err := scanRuleset(q.QueryRowContext(ctx, `SELECT `+rulesetColumns+rulesetFrom+
		`WHERE r.enterprise_id = $1 AND r.purpose = $2`, enterpriseID, rulesetPurpose))
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	return rs, err
}

// putManagedRuleset creates the enterprise's custom agents ruleset on the
// organization's repository, or moves the existing one there (keeping its
// id), and returns its id.
func putManagedRuleset(ctx context.Context, q store.Q, enterpriseID, orgID int64, repoName string) (int64, error) {
	paths, err := json.Marshal(ProtectedPaths)
	if err != nil {
		return 0, err
	}
	var id int64
	err = q.QueryRowContext(ctx, `
		INSERT INTO rulesets (enterprise_id, purpose, name, enforcement, target, org_id, repository_name,
			restricted_file_paths, created_at, updated_at)
		VALUES ($1, $2, $3, 'active', 'push', $4, $5, $6, $7, $7)
		ON CONFLICT (enterprise_id, purpose) DO UPDATE SET org_id = excluded.org_id,
			repository_name = excluded.repository_name, restricted_file_paths = excluded.restricted_file_paths,
			enforcement = excluded.enforcement, updated_at = excluded.updated_at
		RETURNING id`,
		enterpriseID, rulesetPurpose, RulesetName, orgID, repoName, string(paths), store.Now()).Scan(&id)
	return id, store.Normalize(err)
}

// deleteManagedRuleset removes the enterprise's custom agents ruleset, if any.
func deleteManagedRuleset(ctx context.Context, q store.Q, enterpriseID int64) error {
	_, err := q.ExecContext(ctx, `DELETE FROM rulesets WHERE enterprise_id = $1 AND purpose = $2`, enterpriseID, rulesetPurpose)
	return err
}

// pushRulesets returns the active push rulesets that target the repository
// of an organization (by its id and the repository's name).
func pushRulesets(ctx context.Context, q store.Q, ownerID int64, repoName string) ([]*Ruleset, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+rulesetColumns+rulesetFrom+
		`WHERE r.org_id = $1 AND lower(r.repository_name) = lower($2) AND r.enforcement = 'active' AND r.target = 'push'
		ORDER BY r.id`, ownerID, repoName)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*Ruleset
	for rows.Next() {
		rs, err := scanRuleset(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, rs)
	}
	return out, rows.Err()
}

// CheckPush is the githost.PushCheck that enforces enterprise rulesets: a
// push to a targeted repository by anyone who is not an owner of the
// ruleset's enterprise is refused, with a message naming the ruleset and
// the paths, when one of its reference updates adds, changes or removes a
// restricted file, in any new commit or in the branch's files as a whole
// (so that a force push back to an older commit is caught too). Pushes to
// other repositories cost one indexed query.
func (s *Service) CheckPush(ctx context.Context, push *githost.Push) error {
	rulesets, err := pushRulesets(ctx, s.DB, push.Repo.Owner.ID, push.Repo.Name)
	if err != nil || len(rulesets) == 0 {
		return err
	}
	changes := &pushChanges{inspect: push.Inspect, byRef: map[string][]string{}}
	for _, rs := range rulesets {
		owner, err := accounts.IsEnterpriseOwner(ctx, s.DB, rs.EnterpriseID, push.Pusher.ID)
		if err != nil {
			return err
		}
		if owner {
			continue
		}
		for _, u := range push.Updates {
			paths, err := changes.of(ctx, u)
			if err != nil {
				return err
			}
			if hits := restrictedHits(rs, paths); len(hits) > 0 {
				return githttp.Refuse("%s", refusal(rs, u, hits))
			}
		}
	}
	return nil
}

// pushChanges computes, once per reference update, the paths it changes.
type pushChanges struct {
	inspect githttp.Inspector
	byRef   map[string][]string
}

func (c *pushChanges) of(ctx context.Context, u githttp.RefUpdate) ([]string, error) {
	if paths, ok := c.byRef[u.Ref]; ok {
		return paths, nil
	}
	paths, err := c.inspect.ChangedPaths(ctx, u)
	if err != nil {
		return nil, err
	}
	if u.IsBranch() {
		tree, err := c.inspect.TreeChanges(ctx, u)
		if err != nil {
			return nil, err
		}
		paths = append(paths, tree...)
	}
	c.byRef[u.Ref] = paths
	return paths, nil
}

// restrictedHits returns the distinct paths the ruleset restricts.
func restrictedHits(rs *Ruleset, paths []string) []string {
	var hits []string
	seen := map[string]bool{}
	for _, p := range paths {
		if !seen[p] && rs.Restricts(p) {
			seen[p] = true
			hits = append(hits, p)
		}
	}
	return hits
}

// maxListedHits bounds the paths a refusal message lists.
const maxListedHits = 10

// refusal is what the git client prints for a push a ruleset refuses.
func refusal(rs *Ruleset, u githttp.RefUpdate, hits []string) string {
	listed := hits
	more := ""
	if len(listed) > maxListedHits {
		listed, more = listed[:maxListedHits], fmt.Sprintf(" (and %d more)", len(hits)-maxListedHits)
	}
	return fmt.Sprintf("Repository rule violations found for %s.\n"+
		"Ruleset %q (id %d) of enterprise %s restricts the file paths %s: only enterprise owners may add, change or remove them.\n"+
		"Restricted files changed by this push: %s%s",
		u.Ref, rs.Name, rs.ID, rs.EnterpriseSlug, strings.Join(rs.RestrictedFilePaths, ", "), strings.Join(listed, ", "), more)
}
