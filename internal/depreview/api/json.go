package api

import (
	"forgeapi/internal/depreview"
	"forgeapi/internal/depreview/advisory"
)

// changeJSON is a Dependency change item as the platform sends it.
type changeJSON struct {
	ChangeType          string              `json:"change_type"`
	Manifest            string              `json:"manifest"`
	Ecosystem           string              `json:"ecosystem"`
	Name                string              `json:"name"`
	Version             string              `json:"version"`
	PackageURL          string              `json:"package_url"`
	License             *string             `json:"license"`
	SourceRepositoryURL *string             `json:"source_repository_url"`
	Scope               string              `json:"scope"`
	Vulnerabilities     []vulnerabilityJSON `json:"vulnerabilities"`
}

// vulnerabilityJSON is one item of a change's vulnerabilities.
type vulnerabilityJSON struct {
	Severity        string `json:"severity"`
	AdvisoryGHSAID  string `json:"advisory_ghsa_id"`
	AdvisorySummary string `json:"advisory_summary"`
	AdvisoryURL     string `json:"advisory_url"`
}

// UnknownSeverity is the severity reported for an advisory that states
// none (neither database_specific.severity nor a CVSS vector): "low", the
// value the platform's dependency review action itself assumes for a
// vulnerability without a severity. An empty string would break clients
// that validate severity against critical/high/moderate/low.
const UnknownSeverity = advisory.SeverityLow

// toJSON converts change items; vulnerabilities are never null.
func toJSON(changes []depreview.Change) []changeJSON {
	out := make([]changeJSON, 0, len(changes))
	for _, c := range changes {
		item := changeJSON{
			ChangeType:          string(c.ChangeType),
			Manifest:            c.Manifest,
			Ecosystem:           string(c.Ecosystem),
			Name:                c.Name,
			Version:             c.Version,
			PackageURL:          c.PackageURL,
			License:             nullable(c.License),
			SourceRepositoryURL: nullable(c.SourceRepositoryURL),
			Scope:               string(c.Scope),
			Vulnerabilities:     make([]vulnerabilityJSON, 0, len(c.Vulnerabilities)),
		}
		for _, v := range c.Vulnerabilities {
			item.Vulnerabilities = append(item.Vulnerabilities, toVulnerabilityJSON(v))
		}
		out = append(out, item)
	}
	return out
}

func toVulnerabilityJSON(v advisory.Vulnerability) vulnerabilityJSON {
	severity := v.Severity
	if severity == advisory.SeverityUnknown {
		severity = UnknownSeverity
	}
	return vulnerabilityJSON{Severity: severity, AdvisoryGHSAID: v.AdvisoryGHSAID,
		AdvisorySummary: v.AdvisorySummary, AdvisoryURL: v.AdvisoryURL}
}

// nullable is nil for "", so that unknown values are JSON null.
func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
