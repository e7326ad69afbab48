package depreview

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"testing/fstest"
	"time"

	"github.com/google/osv-scalibr/extractor"
	"github.com/google/osv-scalibr/extractor/filesystem"
	"github.com/google/osv-scalibr/extractor/filesystem/language/golang/gomod"
	"github.com/google/osv-scalibr/extractor/filesystem/language/javascript/pnpmlock"
	"github.com/google/osv-scalibr/extractor/filesystem/language/javascript/yarnlock"
	"github.com/google/osv-scalibr/extractor/filesystem/language/python/pipfilelock"
	"github.com/google/osv-scalibr/extractor/filesystem/language/python/poetrylock"
	"github.com/google/osv-scalibr/extractor/filesystem/language/python/requirements"
	"github.com/google/osv-scalibr/extractor/filesystem/language/ruby/gemfilelock"
	"github.com/google/osv-scalibr/extractor/filesystem/language/rust/cargolock"
	"github.com/google/osv-scalibr/extractor/filesystem/misc/githubactions"
	"go.yaml.in/yaml/v3"
)

// scalibrParser adapts one osv-scalibr filesystem extractor to Parser. The
// extractor sees an in-memory file system holding only the manifest, so it
// never touches the disk; extractors that look for sibling files (go.sum for
// go.mod < 1.17, "-r other.txt" includes of requirements.txt) find none.
type scalibrParser struct {
	format Format
	newFn  func() (filesystem.Extractor, error)
}

// newScalibrParser returns the scalibr-backed parser of format.
func newScalibrParser(format Format) scalibrParser {
	return scalibrParser{format: format, newFn: scalibrConstructor(format)}
}

// scalibrConstructor returns the constructor of the scalibr extractor for
// format. Extractors are created per call because some keep statistics.
func scalibrConstructor(format Format) func() (filesystem.Extractor, error) {
	switch format {
	case FormatGoMod:
		return func() (filesystem.Extractor, error) { return gomod.New(nil) }
	case FormatYarnLock:
		return func() (filesystem.Extractor, error) { return yarnlock.New(nil) }
	case FormatPnpmLock:
		return func() (filesystem.Extractor, error) { return pnpmlock.New(nil) }
	case FormatRequirements:
		return func() (filesystem.Extractor, error) { return requirements.New(nil) }
	case FormatPipfileLock:
		return func() (filesystem.Extractor, error) { return pipfilelock.New(nil) }
	case FormatPoetryLock:
		return func() (filesystem.Extractor, error) { return poetrylock.New(nil) }
	case FormatCargoLock:
		return func() (filesystem.Extractor, error) { return cargolock.New(nil) }
	case FormatGemfileLock:
		return func() (filesystem.Extractor, error) { return gemfilelock.New(nil) }
	case FormatActionWorkflow:
		return func() (filesystem.Extractor, error) { return githubactions.New(nil) }
	}
	panic(fmt.Sprintf("depreview: no scalibr extractor for %q", format)) // programming error, caught by tests
}

// Parse implements Parser.
func (p scalibrParser) Parse(ctx context.Context, filePath string, content []byte) (deps []Dependency, err error) {
	defer func() {
		if r := recover(); r != nil { // third-party code must not take the server down
			deps, err = nil, fmt.Errorf("extractor panicked: %v", r)
		}
	}()
	if err := p.validate(content); err != nil {
		return nil, err
	}
	ex, err := p.newFn()
	if err != nil {
		return nil, err
	}
	input, err := scanInput(filePath, content)
	if err != nil {
		return nil, err
	}
	inv, err := ex.Extract(ctx, input)
	if err != nil {
		return nil, err
	}
	deps = make([]Dependency, 0, len(inv.Packages))
	for _, pkg := range inv.Packages {
		if dep, ok := p.convert(pkg); ok {
			deps = append(deps, dep)
		}
	}
	return deps, nil
}

// validate rejects content that the scalibr extractor would silently treat
// as empty: scalibr skips workflow files that are not valid YAML (they may be
// templates), while dependency review reports them as malformed.
func (p scalibrParser) validate(content []byte) error {
	if p.format != FormatActionWorkflow {
		return nil
	}
	var doc yaml.Node
	return yaml.Unmarshal(content, &doc)
}

// scanInput builds the scalibr input for one in-memory file.
func scanInput(filePath string, content []byte) (*filesystem.ScanInput, error) {
	filePath = strings.TrimPrefix(path.Clean("/"+filePath), "/")
	fsys := fstest.MapFS{filePath: &fstest.MapFile{Data: content, Mode: 0o644, ModTime: time.Unix(0, 0)}}
	info, err := fs.Stat(fsys, filePath)
	if err != nil {
		return nil, err
	}
	return &filesystem.ScanInput{
		FS:     fsys,
		Path:   filePath,
		Root:   "/",
		Info:   info,
		Reader: bytes.NewReader(content),
	}, nil
}

// convert maps a scalibr package to a Dependency; ok is false for entries
// that are not dependencies (the Go "stdlib" pseudo-package).
func (p scalibrParser) convert(pkg *extractor.Package) (Dependency, bool) {
	eco := scalibrEcosystem(p.format)
	if pkg.Name == "" || (eco == EcosystemGoMod && pkg.Name == "stdlib") {
		return Dependency{}, false
	}
	version := pkg.Version
	if eco == EcosystemGoMod && version != "" && !strings.HasPrefix(version, "v") {
		version = "v" + version // scalibr strips it; Go versions are written with it
	}
	dep := newDependency(eco, pkg.Name, version, p.scope(pkg))
	if len(pkg.Licenses) > 0 {
		dep.License = strings.Join(pkg.Licenses, " AND ")
	}
	dep.SourceRepositoryURL = sourceRepository(eco, pkg)
	return dep, true
}

func scalibrEcosystem(format Format) Ecosystem {
	switch format {
	case FormatGoMod:
		return EcosystemGoMod
	case FormatYarnLock, FormatPnpmLock:
		return EcosystemNPM
	case FormatRequirements, FormatPipfileLock, FormatPoetryLock:
		return EcosystemPip
	case FormatCargoLock:
		return EcosystemCargo
	case FormatGemfileLock:
		return EcosystemRubyGems
	}
	return EcosystemActions
}

// depGrouper is implemented by the scalibr metadata types that carry the
// dependency groups of a package (npm, Python).
type depGrouper interface{ DepGroups() []string }

// scope derives the scope from scalibr's dependency groups. Formats that do
// not record groups (yarn.lock, Cargo.lock, Gemfile.lock) are unknown;
// go.mod, requirements.txt and workflow references are runtime.
func (p scalibrParser) scope(pkg *extractor.Package) Scope {
	switch p.format {
	case FormatYarnLock, FormatCargoLock, FormatGemfileLock:
		return ScopeUnknown
	case FormatGoMod, FormatRequirements, FormatActionWorkflow:
		return ScopeRuntime
	}
	g, ok := pkg.Metadata.(depGrouper)
	if !ok {
		return ScopeRuntime
	}
	return scopeFromGroups(g.DepGroups())
}

// scopeFromGroups is development when every group is a development group
// ("dev", "test", Poetry/Maven non-runtime groups), runtime otherwise.
func scopeFromGroups(groups []string) Scope {
	if len(groups) == 0 {
		return ScopeRuntime
	}
	for _, g := range groups {
		switch strings.ToLower(g) {
		case "", "main", "default", "optional", "prod", "compile", "runtime", "provided", "system", "import":
			return ScopeRuntime
		}
	}
	return ScopeDevelopment
}

// sourceRepository returns the repository URL when the package identity
// names one: Go modules hosted on github.com and GitHub Actions.
func sourceRepository(eco Ecosystem, pkg *extractor.Package) string {
	if pkg.SourceCode != nil && pkg.SourceCode.Repo != "" {
		return pkg.SourceCode.Repo
	}
	if eco == EcosystemGoMod {
		return goModuleRepository(pkg.Name)
	}
	return ""
}

// goModuleRepository returns https://github.com/owner/repo for a module path
// github.com/owner/repo[/...], else "".
func goModuleRepository(module string) string {
	parts := strings.SplitN(module, "/", 4)
	if len(parts) < 3 || parts[0] != "github.com" {
		return ""
	}
	return "https://github.com/" + parts[1] + "/" + parts[2]
}
