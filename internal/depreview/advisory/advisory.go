// Package advisory reads security advisories in the OSV format (as the public
// advisory database publishes them, one JSON document per advisory), and
// matches packages against them with each ecosystem's own version ordering.
//
// Parse decodes one advisory; ParseDir, ParseFS and ParseZip read a whole
// database for the import command and return each advisory with its content
// hash. NewIndex builds the in-memory, read-only lookup that the dependency
// review endpoint queries with Index.Match.
package advisory

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// ErrInvalidAdvisory is wrapped by every error about an advisory document
// that is not valid OSV JSON or lacks an id.
var ErrInvalidAdvisory = errors.New("invalid OSV advisory")

// Severity values of a vulnerability item, lower case as the platform sends
// them. SeverityUnknown is used when the advisory states none.
const (
	SeverityCritical = "critical"
	SeverityHigh     = "high"
	SeverityModerate = "moderate"
	SeverityLow      = "low"
	SeverityUnknown  = ""
)

// Advisory is the part of an OSV advisory that dependency review uses.
type Advisory struct {
	ID       string
	Summary  string
	Aliases  []string
	Severity string // one of the Severity constants
	Affected []Affected
}

// Affected is one affected package of an advisory.
type Affected struct {
	// OSVEcosystem is the ecosystem as written in the advisory ("PyPI",
	// "crates.io", ...); Ecosystem is the platform's name for it ("pip",
	// "cargo", ...) or "" when the ecosystem is not one dependency review knows.
	OSVEcosystem string
	Ecosystem    string
	Name         string
	Ranges       []Range
	Versions     []string
}

// Range is an OSV range of type SEMVER or ECOSYSTEM (GIT ranges are dropped
// because manifests name versions, not commits).
type Range struct {
	Type   string
	Events []Event
}

// Event is one OSV range event; exactly one field is set.
type Event struct {
	Introduced   string
	Fixed        string
	LastAffected string
}

// Vulnerability is the vulnerability item of a dependency change.
type Vulnerability struct {
	Severity        string // "critical", "high", "moderate", "low" or "" when unknown
	AdvisoryGHSAID  string
	AdvisorySummary string
	AdvisoryURL     string
}

// Vulnerability returns the vulnerability item of a. AdvisoryGHSAID is the id
// when it is a GHSA id, else the first GHSA alias, else the advisory id
// itself (for databases without GHSA ids, e.g. RUSTSEC or GO ids).
func (a *Advisory) Vulnerability() Vulnerability {
	id := a.GHSAID()
	return Vulnerability{
		Severity:        a.Severity,
		AdvisoryGHSAID:  id,
		AdvisorySummary: a.Summary,
		AdvisoryURL:     "https://github.com/advisories/" + id,
	}
}

// GHSAID returns the GHSA id of a (see Vulnerability).
func (a *Advisory) GHSAID() string {
	if isGHSA(a.ID) {
		return a.ID
	}
	for _, alias := range a.Aliases {
		if isGHSA(alias) {
			return alias
		}
	}
	return a.ID
}

func isGHSA(id string) bool { return strings.HasPrefix(id, "GHSA-") }

// osvDocument mirrors the OSV JSON schema fields that are read.
type osvDocument struct {
	ID               string   `json:"id"`
	Summary          string   `json:"summary"`
	Details          string   `json:"details"`
	Aliases          []string `json:"aliases"`
	Withdrawn        string   `json:"withdrawn"`
	DatabaseSpecific struct {
		Severity string `json:"severity"`
	} `json:"database_specific"`
	Affected []struct {
		Package struct {
			Ecosystem string `json:"ecosystem"`
			Name      string `json:"name"`
		} `json:"package"`
		Ranges []struct {
			Type   string `json:"type"`
			Events []struct {
				Introduced   string `json:"introduced"`
				Fixed        string `json:"fixed"`
				LastAffected string `json:"last_affected"`
			} `json:"events"`
		} `json:"ranges"`
		Versions []string `json:"versions"`
	} `json:"affected"`
}

// Parse decodes one OSV advisory document. It returns an error wrapping
// ErrInvalidAdvisory for invalid JSON or a missing id. A withdrawn advisory
// parses with no affected packages, so it never matches.
func Parse(data []byte) (Advisory, error) {
	var doc osvDocument
	if err := json.Unmarshal(data, &doc); err != nil {
		return Advisory{}, fmt.Errorf("%w: %v", ErrInvalidAdvisory, err)
	}
	if doc.ID == "" {
		return Advisory{}, fmt.Errorf("%w: missing id", ErrInvalidAdvisory)
	}
	adv := Advisory{
		ID:       doc.ID,
		Summary:  doc.Summary,
		Aliases:  doc.Aliases,
		Severity: normalizeSeverity(doc.DatabaseSpecific.Severity),
	}
	if adv.Summary == "" {
		adv.Summary, _, _ = strings.Cut(strings.TrimSpace(doc.Details), "\n")
	}
	if doc.Withdrawn != "" {
		return adv, nil
	}
	for _, a := range doc.Affected {
		aff := Affected{
			OSVEcosystem: a.Package.Ecosystem,
			Ecosystem:    platformEcosystem(a.Package.Ecosystem),
			Name:         a.Package.Name,
			Versions:     a.Versions,
		}
		for _, r := range a.Ranges {
			if r.Type != "SEMVER" && r.Type != "ECOSYSTEM" {
				continue
			}
			rng := Range{Type: r.Type}
			for _, e := range r.Events {
				rng.Events = append(rng.Events, Event{Introduced: e.Introduced, Fixed: e.Fixed, LastAffected: e.LastAffected})
			}
			aff.Ranges = append(aff.Ranges, rng)
		}
		adv.Affected = append(adv.Affected, aff)
	}
	return adv, nil
}

// normalizeSeverity maps GHSA/OSV severities to the platform's lower-case
// values: MODERATE and MEDIUM become "moderate"; unknown values become "".
func normalizeSeverity(s string) string {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "critical":
		return SeverityCritical
	case "high":
		return SeverityHigh
	case "moderate", "medium":
		return SeverityModerate
	case "low":
		return SeverityLow
	}
	return SeverityUnknown
}

// platformEcosystem maps an OSV ecosystem name (with an optional ":suffix")
// to the platform's ecosystem name, or "" when unsupported.
func platformEcosystem(osv string) string {
	osv, _, _ = strings.Cut(osv, ":")
	switch osv {
	case "npm":
		return "npm"
	case "PyPI":
		return "pip"
	case "Go":
		return "gomod"
	case "crates.io":
		return "cargo"
	case "RubyGems":
		return "rubygems"
	case "Packagist":
		return "composer"
	case "Maven":
		return "maven"
	case "GitHub Actions":
		return "actions"
	}
	return ""
}

// ContentHash returns a hash of the advisory document that ignores
// insignificant JSON whitespace, so that re-formatted files count as
// unchanged on import. It returns an error wrapping ErrInvalidAdvisory for
// invalid JSON.
func ContentHash(data []byte) (string, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, data); err != nil {
		return "", fmt.Errorf("%w: %v", ErrInvalidAdvisory, err)
	}
	sum := sha256.Sum256(buf.Bytes())
	return hex.EncodeToString(sum[:]), nil
}
