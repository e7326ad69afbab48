package merges

import (
	"context"
	"errors"
	"net/http"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/git/gitcmd"
	"forgeapi/internal/git/githttp"
	"forgeapi/internal/git/gitmerge"
	"forgeapi/internal/pulls"
	"forgeapi/internal/repos"
)

// The merge types of merge-upstream, as the platform names them.
const (
	TypeFastForward = "fast-forward"
	TypeMerge       = "merge"
	TypeNone        = "none"
)

// Upstreamed is the answer of merge-upstream: the platform's
// merged-upstream object.
type Upstreamed struct {
	Message    string `json:"message"`
	MergeType  string `json:"merge_type"`
	BaseBranch string `json:"base_branch"`
}

// MergeUpstream brings the fork's branch up to the branch of the same
// name of its upstream (the repository it was forked from): nothing
// (merge type none) when the branch holds the upstream's commit, a fast
// forward when the branch is behind, else a merge commit by actor. The
// upstream's commits are fetched into the fork first (forks hold copies),
// and the branch moves by a server push. 422 when the repository is not a
// fork or either branch does not exist; 409 when the merge conflicts.
func (s *Service) MergeUpstream(ctx context.Context, fork *repos.Repository, actor *accounts.Account, branch string) (*Upstreamed, error) {
	if fork.ForkOfID == 0 {
		return nil, apierr.Unprocessable("This repository is not a fork.")
	}
	upstream, err := repos.ByID(ctx, s.DB, fork.ForkOfID)
	if err != nil {
		return nil, err
	}
	label := upstream.Owner.Login + ":" + branch
	dir, upDir := s.Repos.GitDir(fork.ID), s.Repos.GitDir(upstream.ID)
	ours, ok, err := resolve(ctx, dir, "refs/heads/"+branch)
	if err != nil {
		return nil, err
	} else if !ok {
		return nil, apierr.Unprocessable("Branch %s does not exist.", branch)
	}
	theirs, ok, err := resolve(ctx, upDir, "refs/heads/"+branch)
	if err != nil {
		return nil, err
	} else if !ok {
		return nil, apierr.Unprocessable("Branch %s does not exist in the upstream %s.", branch, upstream.FullName())
	}
	if err := gitmerge.Fetch(ctx, dir, upDir, theirs); err != nil {
		return nil, err
	}
	git := gitcmd.In(dir)
	if held, err := git.IsAncestor(ctx, theirs, ours); err != nil {
		return nil, err
	} else if held {
		return &Upstreamed{Message: "This branch is not behind the upstream " + label + ".", MergeType: TypeNone, BaseBranch: label}, nil
	}
	result := &Upstreamed{Message: "Successfully fetched and fast-forwarded from upstream " + label + ".", MergeType: TypeFastForward, BaseBranch: label}
	newSHA := theirs
	if ff, err := git.IsAncestor(ctx, ours, theirs); err != nil {
		return nil, err
	} else if !ff {
		who, err := pulls.Identity(ctx, s.DB, actor)
		if err != nil {
			return nil, err
		}
		message := "Merge branch '" + branch + "' of " + upstream.FullName() + " into " + branch + "\n"
		newSHA, err = gitmerge.Merge(ctx, dir, ours, theirs, message, who, s.Git.WebFlow)
		if errors.Is(err, gitmerge.ErrConflict) {
			return nil, apierr.New(http.StatusConflict, "There are merge conflicts with the upstream %s.", label)
		} else if err != nil {
			return nil, err
		}
		result.Message, result.MergeType = "Successfully fetched and merged from upstream "+label+".", TypeMerge
	}
	update := githttp.RefUpdate{Ref: "refs/heads/" + branch, OldSHA: ours, NewSHA: newSHA}
	if err := s.Git.ServerPush(ctx, fork, actor, []githttp.RefUpdate{update}); err != nil {
		return nil, err
	}
	return result, nil
}
