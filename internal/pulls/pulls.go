// Package pulls serves a repository's pull requests: create (from a
// branch of the repository or of a fork), get, list, update, merge
// (merge, squash and rebase through real git, the base branch moved as a
// push through githost.ServerPushWith, whose recording marks the pull
// request merged: see MergeIntent), the background mergeability check
// (a test merge kept at refs/pull/{n}/merge) and the pull_request webhook
// event (PullRequestEvent in the feeds), emitted in each change's
// transaction.
//
// A pull request is an issue row (internal/issues, is_pull_request: it
// shares the repository's numbers, labels, assignees and comments) plus a
// pull_requests row. refs/pull/{n}/head follows the head branch: it is
// written on create and by PushSink on every push to the head, which
// also sends synchronize and makes the mergeability stale.
package pulls

import (
	"context"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/events"
	"forgeapi/internal/git/gitwrite"
	"forgeapi/internal/githost"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/issues"
	"forgeapi/internal/protection"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// The mergeable states forgeapi computes.
const (
	StateUnknown = "unknown" // not checked yet
	StateClean   = "clean"   // merges without conflict
	StateDirty   = "dirty"   // conflicts
	StateDraft   = "draft"   // a draft that merges without conflict
)

// PullRequest is one pull request with its issue row.
type PullRequest struct {
	ID    int64
	Issue *issues.Issue
	// Repo is the base repository; HeadRepo the head's, nil when it was
	// deleted.
	Repo, HeadRepo   *repos.Repository
	HeadRef, HeadSHA string
	BaseRef, BaseSHA string
	Draft            bool
	MergedAt         *time.Time
	MergedBy         *accounts.Account
	MergeCommitSHA   string // the test merge while open, the merge once merged
	// Mergeable is nil until the background check ran since the head or
	// base last moved.
	Mergeable      *bool
	MergeableState string
	// RequestedReviewers are the users asked to review, by login.
	RequestedReviewers []*accounts.Account
	Commits            int
	Additions          int
	Deletions          int
	ChangedFiles       int

	headRepoID, mergedByID *int64
	checkDue               bool
}

// Number is the pull request's number (its issue's).
func (p *PullRequest) Number() int64 { return p.Issue.Number }

// Open reports whether the pull request is open.
func (p *PullRequest) Open() bool { return p.Issue.State == issues.StateOpen }

// Service stores pull requests, merges them and emits their events.
type Service struct {
	DB     *store.DB
	Events *events.Bus
	Repos  *repos.Service
	// Git moves the base branch of a merge as a push does; its BaseURL
	// renders the payloads of events emitted outside a request (pushes).
	Git *githost.Handler
	// Protection, when set, holds the branch protection that merges
	// obey and mergeable_state reports (see checkProtection).
	Protection *protection.Service
	// Checker, when set, is woken after a change makes a mergeability
	// stale.
	Checker *Checker
}

// base is the API base URL: the request's, else the git host's.
func (s *Service) base(ctx context.Context) string {
	if b := httpapi.BaseURL(ctx); b != "" {
		return b
	}
	if s.Git != nil {
		return s.Git.BaseURL
	}
	return ""
}

// webFlow signs the commits a merge writes (nil: unsigned).
func (s *Service) webFlow() gitwrite.Signer {
	if s.Git == nil {
		return nil
	}
	return s.Git.WebFlow
}

// urls is the addresses repository objects name, as base finds the base
// URL: the request's, or githost's outside a request.
func (s *Service) urls(ctx context.Context) repos.URLs {
	if b := httpapi.BaseURL(ctx); b != "" {
		return repos.URLsOf(ctx)
	}
	if s.Git != nil {
		return repos.URLs{Base: s.Git.BaseURL, SSHPort: s.Git.SSHPort}
	}
	return repos.URLs{}
}

// wake wakes the checker once tx commits.
func (s *Service) wake(tx *store.Tx) {
	if s.Checker != nil {
		tx.AfterCommit(s.Checker.Wake)
	}
}
