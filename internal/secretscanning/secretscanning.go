// Package secretscanning is secret scanning: the push sink that asks for
// the commits of a push to be scanned (in the push's transaction), the
// leased Scanner that reads the blobs those commits add and looks for the
// secrets of Patterns, and the alerts API (a repository's, an
// organization's and an enterprise's lists, an alert, its update and its
// locations) with the secret_scanning_alert and
// secret_scanning_alert_location webhooks.
//
// Secret scanning is on for the repositories with advanced security
// (security_and_analysis.advanced_security); the API answers 404 "Secret
// scanning is disabled on this repository." for the others, as the
// platform does.
package secretscanning

import (
	"time"

	"forgeapi/internal/events"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// The states and resolutions of an alert.
const (
	StateOpen     = "open"
	StateResolved = "resolved"
)

// resolutions are the resolutions a client may set.
var resolutions = map[string]bool{"false_positive": true, "wont_fix": true, "revoked": true, "used_in_tests": true}

// listResolutions are those a list may filter on (the platform's, with
// those of edited and deleted custom patterns, which forgeapi never sets).
var listResolutions = map[string]bool{"false_positive": true, "wont_fix": true, "revoked": true, "used_in_tests": true,
	"pattern_edited": true, "pattern_deleted": true}

// Alert is one distinct secret found in one repository.
type Alert struct {
	ID                int64
	RepoID            int64
	Number            int64
	SecretType        string
	Secret            string
	State             string
	Resolution        *string
	ResolutionComment *string
	ResolvedByID      *int64
	ResolvedAt        *time.Time
	CreatedAt         time.Time
	UpdatedAt         time.Time
	// Locations is how many places the secret was found in.
	Locations int
	// First is the first place it was found in (nil when none is kept).
	First *Location
}

// Location is one place a secret was found in: a file of a commit.
type Location struct {
	ID          int64
	AlertID     int64
	Path        string
	StartLine   int
	EndLine     int
	StartColumn int
	EndColumn   int
	BlobSHA     string
	CommitSHA   string
	CreatedAt   time.Time
}

// Service is secret scanning over one store.
type Service struct {
	DB     *store.DB
	Events *events.Bus
	Repos  *repos.Service
	// BaseURL is the API base URL webhook payloads name (the scanner
	// runs outside any request); the server sets it once it listens.
	BaseURL string
}

// Enabled reports whether secret scanning is on for the repository.
func Enabled(r *repos.Repository) bool { return r.AdvancedSecurity }
