package depreview

import (
	"cmp"
	"slices"
	"strings"

	"forgeapi/internal/depreview/advisory"
)

// ManifestChange holds the dependencies of one manifest path before and
// after a comparison. Base is nil when the manifest did not exist at the base
// revision (added); Head is nil when it no longer exists at head (deleted).
// A moved manifest is given as two ManifestChanges: the old path with only
// Base and the new path with only Head, so its dependencies are reported as
// removed from the old path and added to the new one, as the platform does.
type ManifestChange struct {
	Path string
	Base []Dependency
	Head []Dependency
}

// Diff returns the change items of the given manifests.
//
// Dependencies are identified by ecosystem, name, version and package URL;
// an identical dependency in Base and Head produces nothing (a change of scope
// or license alone is not a change). A version change produces a "removed"
// item for the old version and an "added" item for the new one.
//
// Order (stable and deterministic): manifests by path; within a manifest all
// removed items, then all added items; within each group by name, version,
// ecosystem. Vulnerabilities are not set; see AttachVulnerabilities.
func Diff(manifests []ManifestChange) []Change {
	sorted := slices.Clone(manifests)
	slices.SortStableFunc(sorted, func(a, b ManifestChange) int { return cmp.Compare(a.Path, b.Path) })
	var changes []Change
	for _, m := range sorted {
		changes = diffManifest(changes, m)
	}
	return changes
}

// diffManifest appends the changes of one manifest.
func diffManifest(changes []Change, m ManifestChange) []Change {
	base, head := dedupe(m.Base), dedupe(m.Head)
	inBase := identitySet(base)
	inHead := identitySet(head)
	for _, d := range base {
		if !inHead[identityOf(d)] {
			changes = append(changes, Change{ChangeType: ChangeRemoved, Manifest: m.Path, Dependency: d})
		}
	}
	for _, d := range head {
		if !inBase[identityOf(d)] {
			changes = append(changes, Change{ChangeType: ChangeAdded, Manifest: m.Path, Dependency: d})
		}
	}
	return changes
}

// identity is what makes two dependency entries the same dependency.
type identity struct {
	ecosystem           Ecosystem
	name, version, purl string
}

func identityOf(d Dependency) identity {
	return identity{d.Ecosystem, d.Name, d.Version, d.PackageURL}
}

func identitySet(deps []Dependency) map[identity]bool {
	set := make(map[identity]bool, len(deps))
	for _, d := range deps {
		set[identityOf(d)] = true
	}
	return set
}

// dedupe returns deps sorted (see SortDependencies) with repeated identities
// removed. When the same dependency appears with different scopes (a lockfile
// that installs it twice) runtime wins over development over unknown, so a
// package needed at run time is never reported as development only. The
// first non-empty license and source repository are kept.
func dedupe(deps []Dependency) []Dependency {
	if len(deps) == 0 {
		return nil
	}
	out := slices.Clone(deps)
	SortDependencies(out)
	w := 0
	for _, d := range out {
		if w > 0 && identityOf(out[w-1]) == identityOf(d) {
			out[w-1] = merge(out[w-1], d)
			continue
		}
		out[w] = d
		w++
	}
	return out[:w]
}

func merge(a, b Dependency) Dependency {
	if scopeRank(b.Scope) < scopeRank(a.Scope) {
		a.Scope = b.Scope
	}
	a.License = cmp.Or(a.License, b.License)
	a.SourceRepositoryURL = cmp.Or(a.SourceRepositoryURL, b.SourceRepositoryURL)
	return a
}

func scopeRank(s Scope) int {
	switch s {
	case ScopeRuntime:
		return 0
	case ScopeDevelopment:
		return 1
	}
	return 2
}

// SortDependencies sorts deps in place by name, version, ecosystem, package
// URL and scope rank.
func SortDependencies(deps []Dependency) {
	slices.SortFunc(deps, compareDependencies)
}

// compareDependencies short-circuits on the first differing key (cmp.Or
// would evaluate every comparison; this is on the 5,000-package hot path).
func compareDependencies(a, b Dependency) int {
	if c := strings.Compare(a.Name, b.Name); c != 0 {
		return c
	}
	if c := strings.Compare(a.Version, b.Version); c != 0 {
		return c
	}
	if c := strings.Compare(string(a.Ecosystem), string(b.Ecosystem)); c != 0 {
		return c
	}
	if c := strings.Compare(a.PackageURL, b.PackageURL); c != 0 {
		return c
	}
	return cmp.Compare(scopeRank(a.Scope), scopeRank(b.Scope))
}

// Matcher finds the vulnerabilities of one package version; *advisory.Index
// implements it.
type Matcher interface {
	Match(ecosystem, name, version string) []advisory.Vulnerability
}

// AttachVulnerabilities sets the Vulnerabilities of every change (added and
// removed alike, as the platform reports both) using m. A nil m leaves the
// changes untouched.
func AttachVulnerabilities(changes []Change, m Matcher) {
	if m == nil {
		return
	}
	for i := range changes {
		c := &changes[i]
		c.Vulnerabilities = m.Match(string(c.Ecosystem), c.Name, c.Version)
	}
}
