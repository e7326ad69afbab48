// Package checks serves the platform's Checks API: check suites, one per
// app and head commit of a repository, and the check runs an app reports
// in them (status, conclusion, output with annotations, actions).
//
// Only apps write checks: check runs and suites are created and updated
// with an installation token, and an app updates only its own runs. A
// push creates a suite (status queued) for each app installed on the
// repository that subscribes to check_suite, unless the repository's
// preferences turned that off for the app, and sends that app
// check_suite requested (PushSink, in the push's transaction); creating
// a run creates its suite when missing. A suite's status and conclusion
// roll up from the latest run of each name in it.
//
// Events: check_run created, completed (to repository and organization
// hooks and to the subscribed apps), rerequested and requested_action
// (to the run's app alone); check_suite completed (hooks and apps),
// requested and rerequested (the suite's app alone). The platform shows
// no feed event for checks, and neither does forgeapi.
//
// Outcomes gives other areas (branch protection) the state of each check
// and status context of a commit.
package checks

import (
	"encoding/json"
	"time"
)

// The statuses of a run (and of a suite: queued, in_progress, completed).
const (
	StatusQueued     = "queued"
	StatusInProgress = "in_progress"
	StatusCompleted  = "completed"
)

// The conclusions of a completed run.
const (
	ConclusionSuccess        = "success"
	ConclusionFailure        = "failure"
	ConclusionNeutral        = "neutral"
	ConclusionCancelled      = "cancelled"
	ConclusionSkipped        = "skipped"
	ConclusionTimedOut       = "timed_out"
	ConclusionActionRequired = "action_required"
)

// conclusions are the conclusions an app may set.
var conclusions = []string{ConclusionSuccess, ConclusionFailure, ConclusionNeutral, ConclusionCancelled,
	ConclusionSkipped, ConclusionTimedOut, ConclusionActionRequired}

// actionsOnlyStatuses are the statuses only the platform's Actions sets:
// an app that sends them gets a 422.
var actionsOnlyStatuses = []string{"waiting", "requested", "pending"}

// Limits of a run, as the platform documents them.
const (
	MaxAnnotationsPerRequest = 50
	MaxActions               = 3
	MaxActionLabel           = 20
	MaxActionDescription     = 40
	MaxActionIdentifier      = 20
	MaxOutputText            = 65535 // summary and text
	MaxNameLength            = 255   // forgeapi's
	MaxDetailsURLLength      = 2048  // forgeapi's
)

// Suite is a check suite: the checks of one app on one head commit.
type Suite struct {
	ID         int64
	RepoID     int64
	AppID      int64
	HeadSHA    string
	HeadBranch *string
	Before     *string
	After      *string
	// HeadCommit is the head's simple-commit object, as JSON.
	HeadCommit json.RawMessage
	Status     string
	Conclusion *string
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// Run is a check run.
type Run struct {
	ID               int64
	SuiteID          int64
	RepoID           int64
	AppID            int64
	HeadSHA          string
	Name             string
	ExternalID       string
	DetailsURL       string
	Status           string
	Conclusion       *string
	StartedAt        *time.Time
	CompletedAt      *time.Time
	Title            *string
	Summary          *string
	Text             *string
	AnnotationsCount int
	Actions          []Action
	CreatedAt        time.Time
	UpdatedAt        time.Time
}

// Completed reports whether the run has completed.
func (r *Run) Completed() bool { return r.Status == StatusCompleted }

// Action is a button an app offers on its run: pressing it sends the app
// check_run requested_action with the identifier.
type Action struct {
	Label       string `json:"label"`
	Description string `json:"description"`
	Identifier  string `json:"identifier"`
}

// Annotation is a note on lines of a file of the run's commit.
type Annotation struct {
	ID              int64
	Path            string
	StartLine       int
	EndLine         int
	StartColumn     *int
	EndColumn       *int
	AnnotationLevel string
	Title           *string
	Message         string
	RawDetails      *string
}
