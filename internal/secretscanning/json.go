package secretscanning

import (
	"fmt"
	"net/url"
	"strings"

	"forgeapi/internal/accounts"
	"forgeapi/internal/repos"
	"forgeapi/internal/wire"
)

// alertJSON is the platform's secret-scanning-alert object (and, with
// Repository, organization-secret-scanning-alert).
type alertJSON struct {
	Number                   int64                `json:"number"`
	CreatedAt                wire.Time            `json:"created_at"`
	UpdatedAt                wire.Time            `json:"updated_at"`
	URL                      string               `json:"url"`
	HTMLURL                  string               `json:"html_url"`
	LocationsURL             string               `json:"locations_url"`
	State                    string               `json:"state"`
	Resolution               *string              `json:"resolution"`
	ResolvedAt               *wire.Time           `json:"resolved_at"`
	ResolvedBy               *accounts.SimpleUser `json:"resolved_by"`
	ResolutionComment        *string              `json:"resolution_comment"`
	SecretType               string               `json:"secret_type"`
	SecretTypeDisplayName    string               `json:"secret_type_display_name"`
	Secret                   *string              `json:"secret,omitempty"`
	Repository               *repos.SimpleJSON    `json:"repository,omitempty"`
	PushProtectionBypassed   bool                 `json:"push_protection_bypassed"`
	PushProtectionBypassedBy *accounts.SimpleUser `json:"push_protection_bypassed_by"`
	PushProtectionBypassedAt *wire.Time           `json:"push_protection_bypassed_at"`
	Validity                 string               `json:"validity"`
	PubliclyLeaked           bool                 `json:"publicly_leaked"`
	MultiRepo                bool                 `json:"multi_repo"`
	IsBase64Encoded          bool                 `json:"is_base64_encoded"`
	FirstLocationDetected    *commitLocationJSON  `json:"first_location_detected"`
	HasMoreLocations         bool                 `json:"has_more_locations"`
	AssignedTo               *accounts.SimpleUser `json:"assigned_to"`
}

// webhookAlertJSON is the platform's secret-scanning-alert-webhook
// object: the alert without its state and secret.
type webhookAlertJSON struct {
	Number                   int64                `json:"number"`
	CreatedAt                wire.Time            `json:"created_at"`
	UpdatedAt                wire.Time            `json:"updated_at"`
	URL                      string               `json:"url"`
	HTMLURL                  string               `json:"html_url"`
	LocationsURL             string               `json:"locations_url"`
	Resolution               *string              `json:"resolution"`
	ResolvedAt               *wire.Time           `json:"resolved_at"`
	ResolvedBy               *accounts.SimpleUser `json:"resolved_by"`
	ResolutionComment        *string              `json:"resolution_comment"`
	SecretType               string               `json:"secret_type"`
	SecretTypeDisplayName    string               `json:"secret_type_display_name"`
	Validity                 string               `json:"validity"`
	PushProtectionBypassed   bool                 `json:"push_protection_bypassed"`
	PushProtectionBypassedBy *accounts.SimpleUser `json:"push_protection_bypassed_by"`
	PushProtectionBypassedAt *wire.Time           `json:"push_protection_bypassed_at"`
	PubliclyLeaked           bool                 `json:"publicly_leaked"`
	MultiRepo                bool                 `json:"multi_repo"`
	AssignedTo               *accounts.SimpleUser `json:"assigned_to"`
}

// commitLocationJSON is the platform's secret-scanning-location-commit.
type commitLocationJSON struct {
	Path        string `json:"path"`
	StartLine   int    `json:"start_line"`
	EndLine     int    `json:"end_line"`
	StartColumn int    `json:"start_column"`
	EndColumn   int    `json:"end_column"`
	BlobSHA     string `json:"blob_sha"`
	BlobURL     string `json:"blob_url"`
	CommitSHA   string `json:"commit_sha"`
	CommitURL   string `json:"commit_url"`
	HTMLURL     string `json:"html_url"`
}

// locationJSON is the platform's secret-scanning-location.
type locationJSON struct {
	Type    string             `json:"type"`
	Details commitLocationJSON `json:"details"`
}

// view renders alerts of one request: its base URL and the accounts
// that resolved them.
type view struct {
	base  string
	users map[int64]*accounts.Account
	hide  bool // hide_secret
}

func alertURL(base string, repo *repos.Repository, number int64) string {
	return fmt.Sprintf("%s/repos/%s/secret-scanning/alerts/%d", base, repo.FullName(), number)
}

func (v view) user(id *int64) *accounts.SimpleUser {
	if id == nil || v.users[*id] == nil {
		return nil
	}
	u := accounts.ToSimpleUser(v.base, v.users[*id])
	return &u
}

func displayName(secretType string) string {
	if p, ok := PatternOf(secretType); ok {
		return p.DisplayName
	}
	return secretType
}

func (v view) alert(repo *repos.Repository, a *Alert) alertJSON {
	url := alertURL(v.base, repo, a.Number)
	j := alertJSON{
		Number: a.Number, CreatedAt: wire.T(a.CreatedAt), UpdatedAt: wire.T(a.UpdatedAt), URL: url,
		HTMLURL:      fmt.Sprintf("%s/%s/security/secret-scanning/%d", accounts.WebBase(v.base), repo.FullName(), a.Number),
		LocationsURL: url + "/locations", State: a.State, Resolution: a.Resolution, ResolvedAt: wire.TP(a.ResolvedAt),
		ResolvedBy: v.user(a.ResolvedByID), ResolutionComment: a.ResolutionComment, SecretType: a.SecretType,
		SecretTypeDisplayName: displayName(a.SecretType), Validity: "unknown", HasMoreLocations: a.Locations > 1,
	}
	if !v.hide {
		secret := a.Secret
		j.Secret = &secret
	}
	if a.First != nil {
		l := v.location(repo, a.First)
		j.FirstLocationDetected = &l
	}
	return j
}

func (v view) webhookAlert(repo *repos.Repository, a *Alert) webhookAlertJSON {
	j := v.alert(repo, a)
	return webhookAlertJSON{Number: j.Number, CreatedAt: j.CreatedAt, UpdatedAt: j.UpdatedAt, URL: j.URL, HTMLURL: j.HTMLURL,
		LocationsURL: j.LocationsURL, Resolution: j.Resolution, ResolvedAt: j.ResolvedAt, ResolvedBy: j.ResolvedBy,
		ResolutionComment: j.ResolutionComment, SecretType: j.SecretType, SecretTypeDisplayName: j.SecretTypeDisplayName,
		Validity: j.Validity}
}

func (v view) location(repo *repos.Repository, l *Location) commitLocationJSON {
	api := v.base + "/repos/" + repo.FullName()
	return commitLocationJSON{
		Path: l.Path, StartLine: l.StartLine, EndLine: l.EndLine, StartColumn: l.StartColumn, EndColumn: l.EndColumn,
		BlobSHA: l.BlobSHA, BlobURL: api + "/git/blobs/" + l.BlobSHA, CommitSHA: l.CommitSHA,
		CommitURL: api + "/git/commits/" + l.CommitSHA,
		HTMLURL: fmt.Sprintf("%s/%s/blob/%s/%s#L%d-L%d", accounts.WebBase(v.base), repo.FullName(), l.CommitSHA,
			escapePath(l.Path), l.StartLine, l.EndLine),
	}
}

// escapePath escapes each segment of a repository path for a URL.
func escapePath(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		parts[i] = url.PathEscape(s)
	}
	return strings.Join(parts, "/")
}
