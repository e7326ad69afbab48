// Package codescanning is code scanning: SARIF uploads
// (POST .../code-scanning/sarifs), processed by a leased Processor into
// analyses, alerts and their instances; the analyses API (list, get,
// delete), the alerts API (a repository's and an organization's lists,
// get, dismiss and reopen, instances) and the code_scanning_alert
// webhooks (created, fixed, reopened, closed_by_user, reopened_by_user)
// in the change's transaction.
//
// An alert is one finding of a tool's rule at one place (the SARIF
// result's primaryLocationLineHash, else its place and message). It is
// open while the latest analysis of some set (ref, tool, category) it was
// seen in still has it, fixed once none does, and dismissed when a user
// says so. Code scanning needs advanced security on the repository
// (security_and_analysis.advanced_security); without it the API answers
// the platform's 403.
package codescanning

import (
	"time"

	"forgeapi/internal/events"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// The states of an alert.
const (
	StateOpen      = "open"
	StateFixed     = "fixed"
	StateDismissed = "dismissed"
)

// dismissReasons are the reasons an alert is dismissed for.
var dismissReasons = map[string]bool{"false positive": true, "won't fix": true, "used in tests": true}

// Upload is a SARIF upload and its processing status.
type Upload struct {
	ID         string
	RepoID     int64
	CommitSHA  string
	Ref        string
	ToolName   string
	Status     string // pending, complete, failed
	Errors     []string
	UploaderID *int64
	CreatedAt  time.Time
}

// Analysis is one run of one upload.
type Analysis struct {
	ID           int64
	RepoID       int64
	SARIFID      string
	Ref          string
	CommitSHA    string
	Category     string
	ToolName     string
	ToolVersion  *string
	ToolGUID     *string
	ResultsCount int
	RulesCount   int
	CreatedAt    time.Time
	// Deletable reports that it is the latest of its set.
	Deletable bool
}

// Alert is a finding of a tool's rule at one place.
type Alert struct {
	ID               int64
	RepoID           int64
	Number           int64
	ToolName         string
	ToolVersion      *string
	ToolGUID         *string
	Rule             Rule
	Fingerprint      string
	State            string
	Dismissed        bool
	DismissedByID    *int64
	DismissedAt      *time.Time
	DismissedReason  *string
	DismissedComment *string
	FixedAt          *time.Time
	CreatedAt        time.Time
	UpdatedAt        time.Time
	// Recent is the instance of the latest analysis that saw it.
	Recent *Instance
}

// Instance is an alert as one analysis saw it.
type Instance struct {
	AlertID   int64
	Analysis  Analysis
	Message   string
	Path      string
	StartLine int
	EndLine   int
	StartCol  int
	EndCol    int
	// Open reports that the analysis is still the latest of its set.
	Open bool
}

// Service is code scanning over one store.
type Service struct {
	DB     *store.DB
	Events *events.Bus
	Repos  *repos.Service
	// BaseURL is the API base URL webhook payloads name (the processor
	// runs outside any request); the server sets it once it listens.
	BaseURL string

	wake func() // the Processor's, set by NewProcessor
}

// Enabled reports whether code scanning is on for the repository.
func Enabled(r *repos.Repository) bool { return r.AdvancedSecurity }
