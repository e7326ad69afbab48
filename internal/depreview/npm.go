package depreview

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
)

// packageLockParser parses package-lock.json and npm-shrinkwrap.json files of
// lockfile versions 1, 2 and 3. It is a focused parser rather than the
// osv-scalibr extractor because the scalibr extractor drops the "license"
// field of v2/v3 entries and decodes more than the endpoint needs.
type packageLockParser struct{}

type packageLockFile struct {
	LockfileVersion int                           `json:"lockfileVersion"`
	Packages        map[string]packageLockPackage `json:"packages"`
	Dependencies    map[string]packageLockV1Dep   `json:"dependencies"`
}

type packageLockPackage struct {
	Name        string          `json:"name"`
	Version     string          `json:"version"`
	License     json.RawMessage `json:"license"`
	Dev         bool            `json:"dev"`
	Link        bool            `json:"link"`
	InBundle    bool            `json:"inBundle"`
	Extraneous  bool            `json:"extraneous"`
	DevOptional bool            `json:"devOptional"`
}

type packageLockV1Dep struct {
	Version      string                      `json:"version"`
	Dev          bool                        `json:"dev"`
	Dependencies map[string]packageLockV1Dep `json:"dependencies"`
}

// Parse implements Parser.
func (packageLockParser) Parse(_ context.Context, _ string, content []byte) ([]Dependency, error) {
	var lock packageLockFile
	if err := json.Unmarshal(content, &lock); err != nil {
		return nil, err
	}
	if len(lock.Packages) > 0 {
		return packageLockV2Deps(lock.Packages), nil
	}
	var deps []Dependency
	appendPackageLockV1Deps(&deps, lock.Dependencies)
	return deps, nil
}

// packageLockV2Deps returns the installed packages listed under "packages"
// (lockfile v2 and v3). The root entry, workspace links and workspace
// sources (keys without node_modules/) are skipped.
func packageLockV2Deps(packages map[string]packageLockPackage) []Dependency {
	deps := make([]Dependency, 0, len(packages))
	for key, pkg := range packages {
		i := strings.LastIndex(key, "node_modules/")
		if i < 0 || pkg.Link || pkg.Version == "" {
			continue
		}
		name := pkg.Name
		if name == "" {
			name = key[i+len("node_modules/"):]
		}
		if name == "" {
			continue
		}
		dep := newDependency(EcosystemNPM, name, pkg.Version, npmScope(pkg.Dev))
		dep.License = npmLicense(pkg.License)
		deps = append(deps, dep)
	}
	return deps
}

// appendPackageLockV1Deps walks the nested "dependencies" tree of lockfile v1.
func appendPackageLockV1Deps(deps *[]Dependency, tree map[string]packageLockV1Dep) {
	for name, d := range tree {
		if name != "" && d.Version != "" {
			*deps = append(*deps, newDependency(EcosystemNPM, name, d.Version, npmScope(d.Dev)))
		}
		appendPackageLockV1Deps(deps, d.Dependencies)
	}
}

func npmScope(dev bool) Scope {
	if dev {
		return ScopeDevelopment
	}
	return ScopeRuntime
}

// npmLicense reads a license that is either an SPDX string or a legacy
// {"type": "MIT"} object; anything else yields "".
func npmLicense(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' && !bytes.ContainsAny(raw[1:n-1], `\"`) {
		return string(raw[1 : n-1]) // fast path: plain SPDX string without escapes
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var obj struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(raw, &obj) == nil {
		return obj.Type
	}
	return ""
}

// packageJSONParser parses the direct dependencies declared by package.json.
// The osv-scalibr packagejson extractor reports the package described by the
// file (for installed node_modules), not its dependencies, so it does not fit.
type packageJSONParser struct{}

type packageJSONFile struct {
	Dependencies         map[string]string `json:"dependencies"`
	DevDependencies      map[string]string `json:"devDependencies"`
	OptionalDependencies map[string]string `json:"optionalDependencies"`
}

// Parse implements Parser. dependencies and optionalDependencies are runtime,
// devDependencies are development. Versions are the declared ranges.
func (packageJSONParser) Parse(_ context.Context, _ string, content []byte) ([]Dependency, error) {
	var f packageJSONFile
	if err := json.Unmarshal(content, &f); err != nil {
		return nil, err
	}
	var deps []Dependency
	deps = appendDeclared(deps, EcosystemNPM, f.Dependencies, ScopeRuntime)
	deps = appendDeclared(deps, EcosystemNPM, f.OptionalDependencies, ScopeRuntime)
	deps = appendDeclared(deps, EcosystemNPM, f.DevDependencies, ScopeDevelopment)
	return deps, nil
}

// appendDeclared appends one dependency per name → version requirement.
func appendDeclared(deps []Dependency, eco Ecosystem, declared map[string]string, scope Scope) []Dependency {
	for name, version := range declared {
		deps = append(deps, newDependency(eco, name, version, scope))
	}
	return deps
}
