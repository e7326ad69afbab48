// Package issues serves a repository's issues with their comments,
// labels, assignees and milestones, and the issues, issue_comment, label
// and milestone webhook events (IssuesEvent and IssueCommentEvent in the
// feeds), emitted in the transaction of each change.
//
// Issue numbers are allocated per repository from a counter row updated
// in the creating transaction; pull requests will take their numbers
// from the same sequence (an issue row marked is_pull_request, shown with
// the pull_request key).
package issues

import (
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/events"
	"forgeapi/internal/reactions"
	"forgeapi/internal/store"
)

// The states of an issue or milestone, and the reasons of an issue's.
const (
	StateOpen   = "open"
	StateClosed = "closed"

	ReasonCompleted  = "completed"
	ReasonNotPlanned = "not_planned"
	ReasonDuplicate  = "duplicate"
	ReasonReopened   = "reopened"
)

// Limits of the strings, in characters, as the platform states them
// (a title of 256, bodies and comments of 65536, label names of 50 and
// descriptions of 100).
const (
	MaxTitle            = 256
	MaxBody             = 65536
	MaxLabelName        = 50
	MaxLabelDescription = 100
	MaxMilestoneTitle   = 255
)

// Issue is one issue of a repository.
type Issue struct {
	ID, RepoID, Number int64
	PullRequest        bool
	Title, Body        string
	State, StateReason string // StateReason "" when none
	Locked             bool
	LockReason         string // "" when none
	User, ClosedBy     *accounts.Account
	Milestone          *Milestone
	Labels             []*Label
	Assignees          []*accounts.Account
	Comments           int
	// Association is the author's association with the repository
	// (OWNER, MEMBER, COLLABORATOR, NONE).
	Association string
	CreatedAt   time.Time
	UpdatedAt   time.Time
	ClosedAt    *time.Time
	// MergedAt is when the pull request of this issue row was merged;
	// nil for issues and unmerged pull requests.
	MergedAt *time.Time
	// Reactions are the issue's reactions by content.
	Reactions reactions.Counts
	// Dependencies counts the issues blocking it and those it blocks.
	Dependencies DependencySummary

	userID, closedByID, milestoneID *int64
}

// Label is a repository's label.
type Label struct {
	ID, RepoID               int64
	Name, Color, Description string
	// Default is true for the labels the repository was created with
	// (CreateDefaultLabels).
	Default bool
}

// Milestone is a repository's milestone with its issue counts.
type Milestone struct {
	ID, RepoID, Number        int64
	Title, Description, State string
	DueOn, ClosedAt           *time.Time
	Creator                   *accounts.Account
	OpenIssues, ClosedIssues  int
	CreatedAt, UpdatedAt      time.Time
	creatorID                 *int64
}

// Comment is a comment on an issue.
type Comment struct {
	ID, RepoID, IssueID  int64
	IssueNumber          int64
	User                 *accounts.Account
	Body                 string
	Association          string
	CreatedAt, UpdatedAt time.Time
	// Reactions are the comment's reactions by content.
	Reactions reactions.Counts
	userID    *int64
}

// Service stores issues and emits their events.
type Service struct {
	DB     *store.DB
	Events *events.Bus
	// PullRequests sends the pull_request events of changes to pull
	// requests; nil sends issues events for them too.
	PullRequests PullRequestEvents
}
