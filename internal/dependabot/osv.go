package dependabot

import (
	"encoding/json"
	"strings"

	"forgeapi/internal/depreview/advisory"
)

// osvDoc is the part of an OSV advisory document an alert shows.
type osvDoc struct {
	ID         string   `json:"id"`
	Summary    string   `json:"summary"`
	Details    string   `json:"details"`
	Aliases    []string `json:"aliases"`
	Published  string   `json:"published"`
	Modified   string   `json:"modified"`
	Withdrawn  string   `json:"withdrawn"`
	References []struct {
		URL string `json:"url"`
	} `json:"references"`
	Severity []struct {
		Type  string `json:"type"`
		Score string `json:"score"`
	} `json:"severity"`
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
	} `json:"affected"`
	DatabaseSpecific struct {
		Severity string   `json:"severity"`
		CWEIDs   []string `json:"cwe_ids"`
	} `json:"database_specific"`
}

// packageJSON is the platform's dependabot-alert-package.
type packageJSON struct {
	Ecosystem string `json:"ecosystem"`
	Name      string `json:"name"`
}

type identifierJSON struct {
	Identifier string `json:"identifier"`
}

// vulnerabilityJSON is the platform's
// dependabot-alert-security-vulnerability.
type vulnerabilityJSON struct {
	Package                packageJSON     `json:"package"`
	Severity               string          `json:"severity"`
	VulnerableVersionRange string          `json:"vulnerable_version_range"`
	FirstPatchedVersion    *identifierJSON `json:"first_patched_version"`
}

// advisoryJSON is the platform's dependabot-alert-security-advisory.
type advisoryJSON struct {
	GHSAID          string              `json:"ghsa_id"`
	CVEID           *string             `json:"cve_id"`
	Summary         string              `json:"summary"`
	Description     string              `json:"description"`
	Vulnerabilities []vulnerabilityJSON `json:"vulnerabilities"`
	Severity        string              `json:"severity"`
	CVSS            cvssJSON            `json:"cvss"`
	CWEs            []cweJSON           `json:"cwes"`
	Identifiers     []typedIDJSON       `json:"identifiers"`
	References      []urlJSON           `json:"references"`
	PublishedAt     string              `json:"published_at"`
	UpdatedAt       string              `json:"updated_at"`
	WithdrawnAt     *string             `json:"withdrawn_at"`
}

type cvssJSON struct {
	Score        float64 `json:"score"`
	VectorString *string `json:"vector_string"`
}

type cweJSON struct {
	CWEID string `json:"cwe_id"`
	Name  string `json:"name"`
}

type typedIDJSON struct {
	Type  string `json:"type"`
	Value string `json:"value"`
}

type urlJSON struct {
	URL string `json:"url"`
}

// alertEcosystem is the platform's Dependabot name of a dependency
// review ecosystem.
func alertEcosystem(eco string) string {
	switch eco {
	case "cargo":
		return "rust"
	case "gomod":
		return "go"
	}
	return eco
}

// alertSeverity is the platform's alert severity of an advisory's
// (moderate is medium; an advisory that states none shows medium).
func alertSeverity(s string) string {
	switch s {
	case advisory.SeverityCritical, advisory.SeverityHigh, advisory.SeverityLow:
		return s
	}
	return "medium"
}

// render builds the alert's advisory and vulnerability from the advisory
// document; doc nil (the document is not stored under that id) renders
// what the match said.
func render(doc *osvDoc, v advisory.Vulnerability, eco, name string) (advisoryJSON, vulnerabilityJSON) {
	sev := alertSeverity(v.Severity)
	a := advisoryJSON{GHSAID: v.AdvisoryGHSAID, Summary: v.AdvisorySummary, Severity: sev, Vulnerabilities: []vulnerabilityJSON{},
		CWEs: []cweJSON{}, Identifiers: []typedIDJSON{{Type: "GHSA", Value: v.AdvisoryGHSAID}}, References: []urlJSON{}}
	vuln := vulnerabilityJSON{Package: packageJSON{Ecosystem: alertEcosystem(eco), Name: name}, Severity: sev}
	if doc == nil {
		return a, vuln
	}
	a.Description, a.PublishedAt, a.UpdatedAt = doc.Details, doc.Published, doc.Modified
	if doc.Withdrawn != "" {
		a.WithdrawnAt = &doc.Withdrawn
	}
	for _, alias := range doc.Aliases {
		if strings.HasPrefix(alias, "CVE-") {
			cve := alias
			a.CVEID = &cve
			a.Identifiers = append(a.Identifiers, typedIDJSON{Type: "CVE", Value: alias})
		}
	}
	for _, r := range doc.References {
		a.References = append(a.References, urlJSON{URL: r.URL})
	}
	for _, id := range doc.DatabaseSpecific.CWEIDs {
		a.CWEs = append(a.CWEs, cweJSON{CWEID: id, Name: id})
	}
	for _, s := range doc.Severity {
		if strings.HasPrefix(s.Type, "CVSS_") {
			vector := s.Score
			a.CVSS.VectorString = &vector
		}
	}
	for _, aff := range doc.Affected {
		item := vulnerabilityJSON{Package: packageJSON{Ecosystem: alertEcosystem(platformEcosystem(aff.Package.Ecosystem)), Name: aff.Package.Name},
			Severity: sev}
		var ranges []string
		for _, r := range aff.Ranges {
			if r.Type != "SEMVER" && r.Type != "ECOSYSTEM" {
				continue
			}
			var lower string
			for _, e := range r.Events {
				switch {
				case e.Introduced != "":
					lower = e.Introduced
				case e.Fixed != "":
					ranges = append(ranges, bounds(lower, "< "+e.Fixed))
					if item.FirstPatchedVersion == nil {
						item.FirstPatchedVersion = &identifierJSON{Identifier: e.Fixed}
					}
					lower = ""
				case e.LastAffected != "":
					ranges = append(ranges, bounds(lower, "<= "+e.LastAffected))
					lower = ""
				}
			}
			if lower != "" {
				ranges = append(ranges, bounds(lower, ""))
			}
		}
		item.VulnerableVersionRange = strings.Join(ranges, " || ")
		a.Vulnerabilities = append(a.Vulnerabilities, item)
		if item.Package.Ecosystem == vuln.Package.Ecosystem && strings.EqualFold(item.Package.Name, name) {
			vuln.VulnerableVersionRange, vuln.FirstPatchedVersion = item.VulnerableVersionRange, item.FirstPatchedVersion
		}
	}
	return a, vuln
}

// bounds writes one range: ">= lower, upper" (no lower bound for "0").
func bounds(lower, upper string) string {
	var parts []string
	if lower != "" && lower != "0" {
		parts = append(parts, ">= "+lower)
	}
	if upper != "" {
		parts = append(parts, upper)
	}
	if len(parts) == 0 {
		return ">= 0"
	}
	return strings.Join(parts, ", ")
}

// platformEcosystem is dependency review's name of an OSV ecosystem.
func platformEcosystem(osv string) string {
	switch osv {
	case "npm":
		return "npm"
	case "PyPI":
		return "pip"
	case "Maven":
		return "maven"
	case "RubyGems":
		return "rubygems"
	case "crates.io":
		return "cargo"
	case "Packagist":
		return "composer"
	case "Go":
		return "gomod"
	case "GitHub Actions":
		return "actions"
	case "NuGet":
		return "nuget"
	}
	return strings.ToLower(osv)
}

func parseOSV(data []byte) (*osvDoc, error) {
	var d osvDoc
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, err
	}
	return &d, nil
}
