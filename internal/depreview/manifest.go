package depreview

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
)

// Format identifies a supported manifest file format.
type Format string

// Supported manifest formats. FormatNone means "not a manifest".
const (
	FormatNone           Format = ""
	FormatGoMod          Format = "go.mod"
	FormatPackageJSON    Format = "package.json"
	FormatPackageLock    Format = "package-lock.json"
	FormatYarnLock       Format = "yarn.lock"
	FormatPnpmLock       Format = "pnpm-lock.yaml"
	FormatRequirements   Format = "requirements.txt"
	FormatPipfileLock    Format = "Pipfile.lock"
	FormatPoetryLock     Format = "poetry.lock"
	FormatPyproject      Format = "pyproject.toml"
	FormatCargoToml      Format = "Cargo.toml"
	FormatCargoLock      Format = "Cargo.lock"
	FormatGemfileLock    Format = "Gemfile.lock"
	FormatComposerLock   Format = "composer.lock"
	FormatPomXML         Format = "pom.xml"
	FormatActionWorkflow Format = "workflow"
)

// ErrMalformedManifest is wrapped by every error returned for manifest
// content that cannot be parsed. Use errors.As with *ManifestError to learn
// the path and format.
var ErrMalformedManifest = errors.New("malformed manifest")

// ManifestError reports a manifest that could not be parsed.
type ManifestError struct {
	Path   string
	Format Format
	Err    error
}

func (e *ManifestError) Error() string {
	return fmt.Sprintf("parse %s manifest %q: %v", e.Format, e.Path, e.Err)
}

// Unwrap returns both ErrMalformedManifest and the underlying cause.
func (e *ManifestError) Unwrap() []error { return []error{ErrMalformedManifest, e.Err} }

// Parser extracts the dependencies of one manifest format. Implementations
// must be safe for concurrent use and must return an error, never panic, on
// malformed content. path is slash-separated and relative to the repository
// root.
type Parser interface {
	Parse(ctx context.Context, path string, content []byte) ([]Dependency, error)
}

// FormatOf returns the manifest format of a slash-separated repository path,
// or FormatNone. Manifests are recognised in any directory; workflow files
// must sit directly in a ".github/workflows" directory and end in .yml or
// .yaml.
func FormatOf(p string) Format {
	base := path.Base(p)
	switch base {
	case "go.mod":
		return FormatGoMod
	case "package.json":
		return FormatPackageJSON
	case "package-lock.json", "npm-shrinkwrap.json":
		return FormatPackageLock
	case "yarn.lock":
		return FormatYarnLock
	case "pnpm-lock.yaml":
		return FormatPnpmLock
	case "requirements.txt":
		return FormatRequirements
	case "Pipfile.lock":
		return FormatPipfileLock
	case "poetry.lock":
		return FormatPoetryLock
	case "pyproject.toml":
		return FormatPyproject
	case "Cargo.toml":
		return FormatCargoToml
	case "Cargo.lock":
		return FormatCargoLock
	case "Gemfile.lock", "gems.locked":
		return FormatGemfileLock
	case "composer.lock":
		return FormatComposerLock
	case "pom.xml":
		return FormatPomXML
	}
	if isWorkflowPath(p) {
		return FormatActionWorkflow
	}
	return FormatNone
}

func isWorkflowPath(p string) bool {
	ext := path.Ext(p)
	if ext != ".yml" && ext != ".yaml" {
		return false
	}
	dir := path.Dir(p)
	return dir == ".github/workflows" || strings.HasSuffix(dir, "/.github/workflows")
}

// Extractor turns manifest files into dependency lists. The zero value is not
// usable; create one with NewExtractor. An Extractor is safe for concurrent
// use and holds no mutable state.
type Extractor struct {
	parsers map[Format]Parser
}

// NewExtractor returns an Extractor with a parser for every supported Format.
func NewExtractor() *Extractor {
	return &Extractor{parsers: map[Format]Parser{
		FormatGoMod:          newScalibrParser(FormatGoMod),
		FormatPackageJSON:    packageJSONParser{},
		FormatPackageLock:    packageLockParser{},
		FormatYarnLock:       newScalibrParser(FormatYarnLock),
		FormatPnpmLock:       newScalibrParser(FormatPnpmLock),
		FormatRequirements:   newScalibrParser(FormatRequirements),
		FormatPipfileLock:    newScalibrParser(FormatPipfileLock),
		FormatPoetryLock:     newScalibrParser(FormatPoetryLock),
		FormatPyproject:      pyprojectParser{},
		FormatCargoToml:      cargoTomlParser{},
		FormatCargoLock:      newScalibrParser(FormatCargoLock),
		FormatGemfileLock:    newScalibrParser(FormatGemfileLock),
		FormatComposerLock:   composerLockParser{},
		FormatPomXML:         pomParser{},
		FormatActionWorkflow: newScalibrParser(FormatActionWorkflow),
	}}
}

// IsManifest reports whether the slash-separated repository path names a
// supported manifest.
func (e *Extractor) IsManifest(p string) bool {
	_, ok := e.parsers[FormatOf(p)]
	return ok
}

// Extract returns the dependencies declared by the manifest at path p with
// the given content, deduplicated and in a stable order (see SortDependencies).
// It returns an error wrapping ErrUnsupportedManifest when p is not a
// manifest, and a *ManifestError (wrapping ErrMalformedManifest) when the
// content cannot be parsed. An empty manifest yields no dependencies.
func (e *Extractor) Extract(ctx context.Context, p string, content []byte) ([]Dependency, error) {
	format := FormatOf(p)
	parser, ok := e.parsers[format]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnsupportedManifest, p)
	}
	deps, err := parser.Parse(ctx, p, content)
	if err != nil {
		var me *ManifestError
		if errors.As(err, &me) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return nil, err
		}
		return nil, &ManifestError{Path: p, Format: format, Err: err}
	}
	return dedupe(deps), nil
}

// ErrUnsupportedManifest is returned by Extract for a path that is not a
// supported manifest.
var ErrUnsupportedManifest = errors.New("not a supported manifest")
