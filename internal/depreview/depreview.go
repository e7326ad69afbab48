// Package depreview implements the library behind the dependency review
// endpoint: it recognises dependency manifests by path, extracts their
// dependencies (ecosystem, name, version, package URL, license, source
// repository and scope), diffs the dependencies of two revisions of each
// changed manifest into "added"/"removed" change items, and attaches
// vulnerabilities found by an advisory matcher (see package advisory).
//
// The package has no dependency on the rest of forgeapi: callers hand it file
// paths and bytes and get plain values back. Third-party extractors
// (google/osv-scalibr) are used behind the Parser interface.
package depreview

import "forgeapi/internal/depreview/advisory"

// Ecosystem is a package ecosystem as the platform names it in dependency
// change items.
type Ecosystem string

// Ecosystems reported by the manifest parsers.
const (
	EcosystemNPM      Ecosystem = "npm"
	EcosystemPip      Ecosystem = "pip"
	EcosystemMaven    Ecosystem = "maven"
	EcosystemRubyGems Ecosystem = "rubygems"
	EcosystemCargo    Ecosystem = "cargo"
	EcosystemComposer Ecosystem = "composer"
	EcosystemGoMod    Ecosystem = "gomod"
	EcosystemActions  Ecosystem = "actions"
)

// Scope says whether a dependency is needed at run time or only for
// development (tests, builds, linters). ScopeUnknown is used when the
// manifest does not say (for example Gemfile.lock, yarn.lock, Cargo.lock).
type Scope string

// Scopes of a dependency.
const (
	ScopeRuntime     Scope = "runtime"
	ScopeDevelopment Scope = "development"
	ScopeUnknown     Scope = "unknown"
)

// Dependency is one package declared by a manifest.
//
// License and SourceRepositoryURL are empty when the manifest does not state
// them; the endpoint reports an empty value as JSON null.
type Dependency struct {
	Ecosystem           Ecosystem
	Name                string
	Version             string
	PackageURL          string
	License             string
	SourceRepositoryURL string
	Scope               Scope
}

// ChangeType is the kind of a dependency change item.
type ChangeType string

// Change types. A version change is reported as a removal of the old version
// and an addition of the new one.
const (
	ChangeRemoved ChangeType = "removed"
	ChangeAdded   ChangeType = "added"
)

// Change is one dependency change item of a comparison: a dependency that
// appears in or disappears from the manifest at path Manifest.
type Change struct {
	ChangeType ChangeType
	Manifest   string
	Dependency
	// Vulnerabilities is filled by AttachVulnerabilities; nil means none.
	Vulnerabilities []advisory.Vulnerability
}
