package advisory

import (
	"cmp"
	"slices"
	"strings"

	"github.com/google/osv-scalibr/semantic"
)

// Index maps packages to the advisories that affect some of their versions.
// It is built once with NewIndex and is then read-only, so it is safe for
// concurrent use. A server rebuilds it (and swaps the pointer) after an
// import.
type Index struct {
	byPackage map[packageKey][]*entry
	size      int
}

type packageKey struct{ ecosystem, name string }

// entry is one affected package of one advisory, with its range versions
// parsed once at build time.
type entry struct {
	advisory *Advisory
	versions map[string]bool
	ranges   []parsedRange
	osvEco   string
}

type parsedRange struct {
	semverOrdering bool
	events         []parsedEvent
}

type parsedEventKind int

const (
	eventIntroduced parsedEventKind = iota
	eventFixed
	eventLastAffected
)

type parsedEvent struct {
	kind    parsedEventKind
	version semantic.Version // nil for introduced "0": before every version
}

// NewIndex builds an index over advisories. Affected packages of ecosystems
// dependency review does not know, and range events whose version cannot be
// parsed in their ecosystem's ordering, are left out.
func NewIndex(advisories []Advisory) *Index {
	idx := &Index{byPackage: make(map[packageKey][]*entry), size: len(advisories)}
	for i := range advisories {
		adv := &advisories[i]
		for _, aff := range adv.Affected {
			if aff.Ecosystem == "" || aff.Name == "" {
				continue
			}
			key := packageKey{aff.Ecosystem, normalizeName(aff.Ecosystem, aff.Name)}
			idx.byPackage[key] = append(idx.byPackage[key], newEntry(adv, aff))
		}
	}
	return idx
}

// Len returns the number of advisories the index was built from.
func (idx *Index) Len() int { return idx.size }

func newEntry(adv *Advisory, aff Affected) *entry {
	e := &entry{advisory: adv, osvEco: aff.OSVEcosystem}
	if len(aff.Versions) > 0 {
		e.versions = make(map[string]bool, len(aff.Versions))
		for _, v := range aff.Versions {
			e.versions[v] = true
		}
	}
	for _, r := range aff.Ranges {
		if pr, ok := parseRange(r, aff.OSVEcosystem); ok {
			e.ranges = append(e.ranges, pr)
		}
	}
	return e
}

// parseRange parses the event versions of r; ok is false when one of them
// cannot be parsed, since a partial range could report wrong results.
func parseRange(r Range, osvEco string) (parsedRange, bool) {
	pr := parsedRange{semverOrdering: r.Type == "SEMVER"}
	for _, ev := range r.Events {
		var pe parsedEvent
		var raw string
		switch {
		case ev.Introduced != "":
			pe.kind, raw = eventIntroduced, ev.Introduced
		case ev.Fixed != "":
			pe.kind, raw = eventFixed, ev.Fixed
		case ev.LastAffected != "":
			pe.kind, raw = eventLastAffected, ev.LastAffected
		default:
			continue
		}
		if !(pe.kind == eventIntroduced && raw == "0") {
			v, err := parseVersion(raw, osvEco, pr.semverOrdering)
			if err != nil {
				return parsedRange{}, false
			}
			pe.version = v
		}
		pr.events = append(pr.events, pe)
	}
	slices.SortStableFunc(pr.events, compareEvents)
	return pr, true
}

// parseVersion parses v with the ordering of a SEMVER range or of the OSV
// ecosystem. GitHub Actions refs (v4, v4.1.0) use semver ordering.
func parseVersion(v, osvEco string, semverOrdering bool) (semantic.Version, error) {
	if semverOrdering {
		return semantic.ParseSemverVersion(strings.TrimPrefix(v, "v")), nil
	}
	switch eco, _, _ := strings.Cut(osvEco, ":"); eco {
	case "GitHub Actions":
		return semantic.ParseSemverVersion(strings.TrimPrefix(v, "v")), nil
	case "Go":
		v = strings.TrimPrefix(v, "v")
	}
	return semantic.Parse(v, osvEco)
}

// Match returns the vulnerabilities of the advisories that affect version of
// the package name in ecosystem (the platform's ecosystem names: "npm",
// "pip", "gomod", "cargo", "rubygems", "composer", "maven", "actions"),
// ordered by severity (critical first) and then GHSA id. Each advisory is
// reported once. A nil *Index matches nothing. A version that is empty or a requirement range (such as
// "^1.2" from package.json) matches only an advisory's explicit version list.
func (idx *Index) Match(ecosystem, name, version string) []Vulnerability {
	if idx == nil {
		return nil
	}
	entries := idx.byPackage[packageKey{ecosystem, normalizeName(ecosystem, name)}]
	if len(entries) == 0 || version == "" {
		return nil
	}
	var out []Vulnerability
	seen := make(map[string]bool)
	for _, e := range entries {
		if seen[e.advisory.ID] || !e.affects(version) {
			continue
		}
		seen[e.advisory.ID] = true
		out = append(out, e.advisory.Vulnerability())
	}
	slices.SortFunc(out, compareVulnerabilities)
	return out
}

func compareVulnerabilities(a, b Vulnerability) int {
	return cmp.Or(cmp.Compare(severityRank(a.Severity), severityRank(b.Severity)),
		cmp.Compare(a.AdvisoryGHSAID, b.AdvisoryGHSAID))
}

func severityRank(s string) int {
	switch s {
	case SeverityCritical:
		return 0
	case SeverityHigh:
		return 1
	case SeverityModerate:
		return 2
	case SeverityLow:
		return 3
	}
	return 4
}

// affects reports whether version is listed explicitly or falls in a range.
func (e *entry) affects(version string) bool {
	if e.versions[version] {
		return true
	}
	if !isConcreteVersion(version) {
		return false
	}
	for _, r := range e.ranges {
		v, err := parseVersion(version, e.osvEco, r.semverOrdering)
		if err != nil {
			continue
		}
		if r.contains(v) {
			return true
		}
	}
	return false
}

// contains evaluates the OSV range algorithm over the events sorted by
// version at build time: introduced opens the range, fixed closes it at the
// fix, last_affected closes it after that version.
func (r parsedRange) contains(v semantic.Version) bool {
	affected := false
	for _, ev := range r.events {
		switch ev.kind {
		case eventIntroduced:
			if ev.version == nil || compare(v, ev.version) >= 0 {
				affected = true
			}
		case eventFixed:
			if compare(v, ev.version) >= 0 {
				affected = false
			}
		case eventLastAffected:
			if compare(v, ev.version) > 0 {
				affected = false
			}
		}
	}
	return affected
}

// compareEvents orders events by version; introduced "0" comes first.
func compareEvents(a, b parsedEvent) int {
	switch {
	case a.version == nil && b.version == nil:
		return 0
	case a.version == nil:
		return -1
	case b.version == nil:
		return 1
	}
	return compare(a.version, b.version)
}

// compare returns a.Compare(b), treating incomparable versions as equal.
func compare(a, b semantic.Version) int {
	c, err := a.Compare(b)
	if err != nil {
		return 0
	}
	return c
}

// isConcreteVersion is false for requirement ranges and wildcards.
func isConcreteVersion(v string) bool {
	return v != "" && !strings.ContainsAny(v, "^~<>=*|, ")
}

// normalizeName returns the lookup form of a package name: PEP 503 for pip,
// lower case for composer and actions (case-insensitive registries), as-is
// for the rest.
func normalizeName(ecosystem, name string) string {
	switch ecosystem {
	case "pip":
		return pep503(name)
	case "composer", "actions":
		return strings.ToLower(name)
	}
	return name
}

func pep503(name string) string {
	var b strings.Builder
	lastSep := false
	for _, r := range strings.ToLower(name) {
		if r == '-' || r == '_' || r == '.' {
			if !lastSep {
				b.WriteByte('-')
			}
			lastSep = true
			continue
		}
		lastSep = false
		b.WriteRune(r)
	}
	return b.String()
}
