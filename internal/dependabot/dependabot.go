// Package dependabot is Dependabot alerts: the vulnerable dependencies of
// a repository's default branch. Alerts are on for a repository once
// enabled (PUT .../vulnerability-alerts); enabling and each push of the
// default branch ask the leased Checker (in the change's transaction) to
// read the branch's manifests (package depreview), match their
// dependencies against the advisory database of dependency review
// (package advisorydb, `forgeapi advisories import`), and bring the
// alerts to what it found: new ones created, those whose dependency went
// away fixed, fixed ones that came back reintroduced; dependabot_alert
// webhooks in the same transaction. The alerts API lists them for a
// repository, an organization and an enterprise, and dismisses and
// reopens them.
package dependabot

import (
	"time"

	"forgeapi/internal/depreview"
	"forgeapi/internal/depreview/advisorydb"
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
var dismissReasons = map[string]bool{"fix_started": true, "inaccurate": true, "no_bandwidth": true, "not_used": true,
	"tolerable_risk": true}

// Alert is one advisory affecting one package of one manifest.
type Alert struct {
	ID               int64
	RepoID           int64
	Number           int64
	GHSAID           string
	Ecosystem        string // the platform's Dependabot name (rust, go, npm, ...)
	Package          string
	ManifestPath     string
	Scope            *string
	Severity         string
	Advisory         string // advisoryJSON
	Vulnerability    string // vulnerabilityJSON
	State            string
	DismissedByID    *int64
	DismissedAt      *time.Time
	DismissedReason  *string
	DismissedComment *string
	FixedAt          *time.Time
	CreatedAt        time.Time
	UpdatedAt        time.Time
}

// Service is Dependabot alerts over one store.
type Service struct {
	DB         *store.DB
	Events     *events.Bus
	Repos      *repos.Service
	Advisories *advisorydb.Source
	// BaseURL is the API base URL webhook payloads name (the checker
	// runs outside any request); the server sets it once it listens.
	BaseURL string

	extractor *depreview.Extractor
	wake      func() // the Checker's, set by NewChecker
}
