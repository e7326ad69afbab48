package depreview

import (
	"context"
	"encoding/json"
	"strings"
)

// composerLockParser parses composer.lock. It is a focused parser because the
// osv-scalibr composerlock extractor drops the "license" and "source" fields.
type composerLockParser struct{}

type composerLockFile struct {
	Packages    []composerPackage `json:"packages"`
	PackagesDev []composerPackage `json:"packages-dev"`
}

type composerPackage struct {
	Name    string   `json:"name"`
	Version string   `json:"version"`
	License []string `json:"license"`
	Source  struct {
		Type string `json:"type"`
		URL  string `json:"url"`
	} `json:"source"`
}

// Parse implements Parser: "packages" are runtime, "packages-dev" development.
// Several licenses (a dual-licensed package) are joined with " OR ".
func (composerLockParser) Parse(_ context.Context, _ string, content []byte) ([]Dependency, error) {
	var lock composerLockFile
	if err := json.Unmarshal(content, &lock); err != nil {
		return nil, err
	}
	deps := make([]Dependency, 0, len(lock.Packages)+len(lock.PackagesDev))
	deps = appendComposer(deps, lock.Packages, ScopeRuntime)
	deps = appendComposer(deps, lock.PackagesDev, ScopeDevelopment)
	return deps, nil
}

func appendComposer(deps []Dependency, pkgs []composerPackage, scope Scope) []Dependency {
	for _, p := range pkgs {
		if p.Name == "" {
			continue
		}
		dep := newDependency(EcosystemComposer, p.Name, p.Version, scope)
		dep.License = strings.Join(p.License, " OR ")
		if p.Source.Type == "git" {
			dep.SourceRepositoryURL = strings.TrimSuffix(p.Source.URL, ".git")
		}
		deps = append(deps, dep)
	}
	return deps
}
