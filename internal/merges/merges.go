// Package merges serves the merges a repository's branches take without a
// pull request: POST /repos/{owner}/{repo}/merges (a head, a branch or a
// commit, merged into a base branch) and POST .../merge-upstream (a
// fork's branch brought up to its upstream's, by a fast forward or a
// merge). Each writes its commit with git/gitmerge and moves the branch
// through githost.ServerPush, so it is a push: its events, the push
// checks (rulesets, protections) and the push log apply.
package merges

import (
	"context"
	"errors"
	"net/http"
	"regexp"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/git/gitcmd"
	"forgeapi/internal/git/githttp"
	"forgeapi/internal/git/gitmerge"
	"forgeapi/internal/git/gitread"
	"forgeapi/internal/githost"
	"forgeapi/internal/pulls"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// Service merges branches.
type Service struct {
	DB    *store.DB
	Repos *repos.Service
	Git   *githost.Handler
}

// Merge is what POST .../merges asks for.
type Merge struct {
	Base, Head, Message string
	HasMessage          bool
}

// ErrNothingToMerge is the 204 of a head that the base already holds.
var ErrNothingToMerge = errors.New("merges: nothing to merge")

var hexSHA = regexp.MustCompile(`^[0-9a-fA-F]{4,40}$`)

// Merge merges m.Head (a branch name, or a commit SHA) into the branch
// m.Base of the repository with a merge commit by actor (message "Merge
// HEAD into BASE" unless given), moved there by a server push, and
// returns the commit's SHA. ErrNothingToMerge when the base holds the
// head already; 404 "Base does not exist" or "Head does not exist"; 409
// "Merge conflict"; the push's refusals (409) as ServerPush answers them.
func (s *Service) Merge(ctx context.Context, repo *repos.Repository, actor *accounts.Account, m Merge) (string, error) {
	dir := s.Repos.GitDir(repo.ID)
	base, ok, err := resolve(ctx, dir, "refs/heads/"+m.Base)
	if err != nil {
		return "", err
	} else if !ok {
		return "", apierr.New(http.StatusNotFound, "Base does not exist")
	}
	head, ok, err := resolveHead(ctx, dir, m.Head)
	if err != nil {
		return "", err
	} else if !ok {
		return "", apierr.New(http.StatusNotFound, "Head does not exist")
	}
	if held, err := gitcmd.In(dir).IsAncestor(ctx, head, base); err != nil || held {
		if err == nil {
			err = ErrNothingToMerge
		}
		return "", err
	}
	message := "Merge " + m.Head + " into " + m.Base + "\n"
	if m.HasMessage {
		message = m.Message
	}
	who, err := pulls.Identity(ctx, s.DB, actor)
	if err != nil {
		return "", err
	}
	sha, err := gitmerge.Merge(ctx, dir, base, head, message, who, s.Git.WebFlow)
	if errors.Is(err, gitmerge.ErrConflict) {
		return "", apierr.New(http.StatusConflict, "Merge conflict")
	} else if err != nil {
		return "", err
	}
	update := githttp.RefUpdate{Ref: "refs/heads/" + m.Base, OldSHA: base, NewSHA: sha}
	if err := s.Git.ServerPush(ctx, repo, actor, []githttp.RefUpdate{update}); err != nil {
		return "", err
	}
	return sha, nil
}

// resolve is the commit rev names in the repository at dir; ok is false
// when it names none.
func resolve(ctx context.Context, dir, rev string) (sha string, ok bool, err error) {
	return gitread.ResolveCommit(ctx, gitcmd.In(dir), rev)
}

// resolveHead is the commit of a head: the branch of that name, else the
// commit of that (full or abbreviated) SHA.
func resolveHead(ctx context.Context, dir, head string) (string, bool, error) {
	if head == "" {
		return "", false, nil
	}
	if sha, ok, err := resolve(ctx, dir, "refs/heads/"+head); err != nil || ok {
		return sha, ok, err
	}
	if !hexSHA.MatchString(head) {
		return "", false, nil
	}
	return resolve(ctx, dir, head)
}
