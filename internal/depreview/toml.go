package depreview

import (
	"context"
	"strings"

	"github.com/BurntSushi/toml"
)

// pyprojectParser parses pyproject.toml. The osv-scalibr pyprojecttoml
// extractor only reports the project itself (PEP 621 [project] name) and
// ignores Poetry tables and dependency groups, so this is a focused parser.
//
// Runtime: [project].dependencies, [project.optional-dependencies],
// [tool.poetry.dependencies] (without "python"). Development:
// [dependency-groups] (PEP 735), [tool.poetry.dev-dependencies] and
// [tool.poetry.group.<name>.dependencies].
type pyprojectParser struct{}

type pyprojectFile struct {
	Project struct {
		Dependencies         []string            `toml:"dependencies"`
		OptionalDependencies map[string][]string `toml:"optional-dependencies"`
	} `toml:"project"`
	DependencyGroups map[string][]any `toml:"dependency-groups"`
	Tool             struct {
		Poetry struct {
			Dependencies    map[string]any `toml:"dependencies"`
			DevDependencies map[string]any `toml:"dev-dependencies"`
			Group           map[string]struct {
				Dependencies map[string]any `toml:"dependencies"`
			} `toml:"group"`
		} `toml:"poetry"`
	} `toml:"tool"`
}

// Parse implements Parser.
func (pyprojectParser) Parse(_ context.Context, _ string, content []byte) ([]Dependency, error) {
	var f pyprojectFile
	if err := toml.Unmarshal(content, &f); err != nil {
		return nil, err
	}
	var deps []Dependency
	deps = appendRequirements(deps, f.Project.Dependencies, ScopeRuntime)
	for _, reqs := range f.Project.OptionalDependencies {
		deps = appendRequirements(deps, reqs, ScopeRuntime)
	}
	for _, group := range f.DependencyGroups {
		for _, item := range group {
			if req, ok := item.(string); ok { // {include-group = ...} tables name no package
				deps = appendRequirements(deps, []string{req}, ScopeDevelopment)
			}
		}
	}
	poetry := f.Tool.Poetry
	deps = appendPoetry(deps, poetry.Dependencies, ScopeRuntime)
	deps = appendPoetry(deps, poetry.DevDependencies, ScopeDevelopment)
	for _, g := range poetry.Group {
		deps = appendPoetry(deps, g.Dependencies, ScopeDevelopment)
	}
	return deps, nil
}

// appendRequirements appends PEP 508 requirement strings.
func appendRequirements(deps []Dependency, reqs []string, scope Scope) []Dependency {
	for _, req := range reqs {
		name, version := parsePEP508(req)
		if name != "" {
			deps = append(deps, newDependency(EcosystemPip, name, version, scope))
		}
	}
	return deps
}

// parsePEP508 splits a requirement such as "requests[socks]>=2.8; python_version<'3'"
// into its name and version specifier. An exact pin "==1.2" yields "1.2".
func parsePEP508(req string) (name, version string) {
	req, _, _ = strings.Cut(req, ";")
	req = strings.TrimSpace(req)
	end := strings.IndexFunc(req, func(r rune) bool {
		return !(r == '-' || r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	})
	if end < 0 {
		return req, ""
	}
	name, rest := req[:end], strings.TrimSpace(req[end:])
	if strings.HasPrefix(rest, "[") {
		if i := strings.Index(rest, "]"); i >= 0 {
			rest = strings.TrimSpace(rest[i+1:])
		}
	}
	rest = strings.Trim(strings.TrimSpace(rest), "()")
	if strings.HasPrefix(rest, "@") { // direct URL reference
		return name, ""
	}
	if v, ok := strings.CutPrefix(rest, "=="); ok && !strings.ContainsAny(v, ",*") {
		return name, strings.TrimSpace(v)
	}
	return name, strings.ReplaceAll(rest, " ", "")
}

// appendPoetry appends Poetry dependency tables, whose values are a version
// string or a table with a "version" key. "python" is the interpreter
// constraint, not a package.
func appendPoetry(deps []Dependency, table map[string]any, scope Scope) []Dependency {
	for name, spec := range table {
		if strings.EqualFold(name, "python") {
			continue
		}
		deps = append(deps, newDependency(EcosystemPip, name, tableVersion(spec), scope))
	}
	return deps
}

// tableVersion returns the version of a TOML dependency value written either
// as "1.0" or as {version = "1.0", ...}; other shapes yield "".
func tableVersion(spec any) string {
	switch v := spec.(type) {
	case string:
		return v
	case map[string]any:
		if s, ok := v["version"].(string); ok {
			return s
		}
	}
	return ""
}

// cargoTomlParser parses Cargo.toml. The osv-scalibr cargotoml extractor
// reports the crate itself and only [dependencies], dropping dev and build
// dependencies, so this is a focused parser. [dependencies] are runtime;
// [dev-dependencies] and [build-dependencies] are development; the same
// tables under [target.<cfg>] and [workspace.dependencies] are included.
type cargoTomlParser struct{}

type cargoDeps struct {
	Dependencies      map[string]any `toml:"dependencies"`
	DevDependencies   map[string]any `toml:"dev-dependencies"`
	DevDependencies2  map[string]any `toml:"dev_dependencies"`
	BuildDependencies map[string]any `toml:"build-dependencies"`
}

type cargoTomlFile struct {
	cargoDeps
	Target    map[string]cargoDeps `toml:"target"`
	Workspace struct {
		Dependencies map[string]any `toml:"dependencies"`
	} `toml:"workspace"`
}

// Parse implements Parser.
func (cargoTomlParser) Parse(_ context.Context, _ string, content []byte) ([]Dependency, error) {
	var f cargoTomlFile
	if err := toml.Unmarshal(content, &f); err != nil {
		return nil, err
	}
	deps := appendCargoTables(nil, f.cargoDeps)
	for _, t := range f.Target {
		deps = appendCargoTables(deps, t)
	}
	return appendCargo(deps, f.Workspace.Dependencies, ScopeRuntime), nil
}

func appendCargoTables(deps []Dependency, t cargoDeps) []Dependency {
	deps = appendCargo(deps, t.Dependencies, ScopeRuntime)
	deps = appendCargo(deps, t.DevDependencies, ScopeDevelopment)
	deps = appendCargo(deps, t.DevDependencies2, ScopeDevelopment)
	return appendCargo(deps, t.BuildDependencies, ScopeDevelopment)
}

// appendCargo appends a Cargo dependency table. A table value may rename the
// crate with package = "real-name".
func appendCargo(deps []Dependency, table map[string]any, scope Scope) []Dependency {
	for key, spec := range table {
		name := key
		if m, ok := spec.(map[string]any); ok {
			if pkg, ok := m["package"].(string); ok && pkg != "" {
				name = pkg
			}
		}
		if name != "" {
			deps = append(deps, newDependency(EcosystemCargo, name, tableVersion(spec), scope))
		}
	}
	return deps
}
