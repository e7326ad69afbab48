package agents

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/git/gitread"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// CheckRepositoryUpdate is the check that repos.Service runs, in the
// updating transaction, before a repository update (PATCH
// /repos/{owner}/{repo}) is kept, so that the API cannot sidestep what
// CheckPush enforces. For anyone who is not an owner of the ruleset's
// enterprise it refuses with a 422 naming the ruleset:
//
//   - renaming or transferring a repository that an active ruleset
//     targets (renaming it away, pushing restricted files and renaming it
//     back would otherwise change them), and renaming or transferring a
//     repository to a name a ruleset targets;
//   - changing the default branch of a targeted repository to a branch
//     whose restricted files differ (what the custom agents list shows).
//
// A change of letter case only keeps the target and passes.
func (s *Service) CheckRepositoryUpdate(ctx context.Context, tx store.Q, before, after *repos.Repository, actor *accounts.Account) error {
	if !strings.EqualFold(before.Name, after.Name) || before.Owner.ID != after.Owner.ID {
		for _, r := range []*repos.Repository{before, after} {
			if err := s.refuseUpdate(ctx, tx, r.Owner.ID, r.Name, actor, func(rs *Ruleset) error {
				return updateRefusal(rs, "name", "The repository %s cannot be renamed to %s", before.FullName(), after.FullName())
			}); err != nil {
				return err
			}
		}
	}
	if before.DefaultBranch == after.DefaultBranch {
		return nil
	}
	return s.refuseUpdate(ctx, tx, after.Owner.ID, after.Name, actor, func(rs *Ruleset) error {
		hits, err := s.branchDifferences(ctx, after, before.DefaultBranch, after.DefaultBranch, rs)
		if err != nil || len(hits) == 0 {
			return err
		}
		return updateRefusal(rs, "default_branch", "Making %s the default branch of %s would change the files %s",
			after.DefaultBranch, after.FullName(), strings.Join(hits, ", "))
	})
}

// refuseUpdate calls refuse for each active ruleset that targets the
// repository name of the owner and whose enterprise the actor does not
// own, and returns its first error.
func (s *Service) refuseUpdate(ctx context.Context, tx store.Q, ownerID int64, name string, actor *accounts.Account,
	refuse func(*Ruleset) error) error {
	rulesets, err := pushRulesets(ctx, tx, ownerID, name)
	if err != nil {
		return err
	}
	for _, rs := range rulesets {
		if actor != nil {
			owner, err := accounts.IsEnterpriseOwner(ctx, tx, rs.EnterpriseID, actor.ID)
			if err != nil {
				return err
			}
			if owner {
				continue
			}
		}
		if err := refuse(rs); err != nil {
			return err
		}
	}
	return nil
}

// branchDifferences returns the restricted paths whose entries differ
// between two branches of the repository; a branch that does not exist
// has no files.
func (s *Service) branchDifferences(ctx context.Context, repo *repos.Repository, from, to string, rs *Ruleset) ([]string, error) {
	g, err := gitread.Open(s.Repos.GitDir(repo.ID))
	if err != nil {
		return nil, err
	}
	defer g.Close()
	resolve := func(branch string) (string, error) {
		sha, err := g.Resolve("refs/heads/" + branch)
		if errors.Is(err, gitread.ErrRevisionNotFound) {
			return "", nil
		}
		return sha, err
	}
	base, err := resolve(from)
	if err != nil {
		return nil, err
	}
	head, err := resolve(to)
	if err != nil || head == "" { // no branch at all: repos refuses a missing one otherwise
		return nil, err
	}
	var dirs []string
	for _, p := range rs.RestrictedFilePaths {
		dirs = append(dirs, path.Dir(p))
	}
	changes, err := g.ChangedPaths(ctx, base, head, dirs...)
	if err != nil {
		return nil, err
	}
	paths := make([]string, 0, len(changes))
	for _, c := range changes {
		paths = append(paths, c.Path)
	}
	return restrictedHits(rs, paths), nil
}

// updateRefusal is the 422 of a repository update that a ruleset refuses.
func updateRefusal(rs *Ruleset, field, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...) + fmt.Sprintf(
		": ruleset %q (id %d) of enterprise %s protects the file paths %s of this repository, and only enterprise owners may change them.",
		rs.Name, rs.ID, rs.EnterpriseSlug, strings.Join(rs.RestrictedFilePaths, ", "))
	err := apierr.Custom("Repository", field, "%s", msg)
	err.Message = msg
	return err
}
