package depreview

import (
	"context"
	"errors"
	"os"
	"path"
	"testing"
)

// wantDep is the expectation for one dependency of a manifest.
type wantDep struct {
	name, version, purl, license, source string
	scope                                Scope
}

func TestExtractManifests(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file  string // under testdata/manifests; also the manifest path
		eco   Ecosystem
		count int
		want  []wantDep
	}{
		{"go/go.mod", EcosystemGoMod, 3, []wantDep{
			{"github.com/gorilla/mux", "v1.8.1", "pkg:golang/github.com/gorilla/mux@v1.8.1", "", "https://github.com/gorilla/mux", ScopeRuntime},
			{"golang.org/x/text", "v0.14.0", "pkg:golang/golang.org/x/text@v0.14.0", "", "", ScopeRuntime},
		}},
		{"npm/package.json", EcosystemNPM, 4, []wantDep{
			{"@babel/core", "7.23.0", "pkg:npm/%40babel/core@7.23.0", "", "", ScopeRuntime},
			{"jest", "~29.7.0", "pkg:npm/jest@~29.7.0", "", "", ScopeDevelopment},
			{"fsevents", "2.3.3", "pkg:npm/fsevents@2.3.3", "", "", ScopeRuntime},
		}},
		{"npm/package-lock.json", EcosystemNPM, 5, []wantDep{
			{"@babel/core", "7.23.0", "pkg:npm/%40babel/core@7.23.0", "MIT", "", ScopeRuntime},
			{"jest", "29.7.0", "pkg:npm/jest@29.7.0", "MIT", "", ScopeDevelopment},
			{"debug", "2.6.9", "pkg:npm/debug@2.6.9", "MIT", "", ScopeRuntime},
			{"no-license", "1.0.0", "pkg:npm/no-license@1.0.0", "", "", ScopeRuntime},
		}},
		{"npmv2/package-lock.json", EcosystemNPM, 2, []wantDep{
			{"mocha", "10.2.0", "pkg:npm/mocha@10.2.0", "MIT", "", ScopeDevelopment},
		}},
		{"npmv1/package-lock.json", EcosystemNPM, 4, []wantDep{
			{"@types/node", "20.1.0", "pkg:npm/%40types/node@20.1.0", "", "", ScopeDevelopment},
			{"minimist", "1.2.5", "pkg:npm/minimist@1.2.5", "", "", ScopeDevelopment},
			{"lodash", "4.17.20", "pkg:npm/lodash@4.17.20", "", "", ScopeRuntime},
		}},
		{"yarn/yarn.lock", EcosystemNPM, 2, []wantDep{
			{"@babel/code-frame", "7.22.13", "pkg:npm/%40babel/code-frame@7.22.13", "", "", ScopeUnknown},
		}},
		{"pnpm/pnpm-lock.yaml", EcosystemNPM, 2, []wantDep{
			{"left-pad", "1.3.0", "pkg:npm/left-pad@1.3.0", "", "", ScopeRuntime},
			{"typescript", "5.2.2", "pkg:npm/typescript@5.2.2", "", "", ScopeDevelopment},
		}},
		{"python/requirements.txt", EcosystemPip, 3, []wantDep{
			{"Flask_Cors", "4.0.0", "pkg:pypi/flask-cors@4.0.0", "", "", ScopeRuntime},
			{"requests", "2.31.0", "pkg:pypi/requests@2.31.0", "", "", ScopeRuntime},
		}},
		{"python/Pipfile.lock", EcosystemPip, 2, []wantDep{
			{"urllib3", "2.0.7", "pkg:pypi/urllib3@2.0.7", "", "", ScopeRuntime},
			{"pytest", "7.4.3", "pkg:pypi/pytest@7.4.3", "", "", ScopeDevelopment},
		}},
		{"python/poetry.lock", EcosystemPip, 2, []wantDep{
			{"black", "23.10.1", "pkg:pypi/black@23.10.1", "", "", ScopeDevelopment},
			{"certifi", "2023.7.22", "pkg:pypi/certifi@2023.7.22", "", "", ScopeRuntime},
		}},
		{"python/pyproject.toml", EcosystemPip, 8, []wantDep{
			{"Pydantic_Core", "2.14.1", "pkg:pypi/pydantic-core@2.14.1", "", "", ScopeRuntime},
			{"rich", ">=13.0,<14", "pkg:pypi/rich@%3E%3D13.0%2C%3C14", "", "", ScopeRuntime},
			{"pytest", "7.4.3", "pkg:pypi/pytest@7.4.3", "", "", ScopeDevelopment},
			{"uvicorn", "0.24.0", "pkg:pypi/uvicorn@0.24.0", "", "", ScopeRuntime},
			{"mkdocs", "1.5.3", "pkg:pypi/mkdocs@1.5.3", "", "", ScopeDevelopment},
		}},
		{"rust/Cargo.toml", EcosystemCargo, 6, []wantDep{
			{"rand", "0.8.5", "pkg:cargo/rand@0.8.5", "", "", ScopeRuntime},
			{"proptest", "1.4.0", "pkg:cargo/proptest@1.4.0", "", "", ScopeDevelopment},
			{"cc", "1.0.83", "pkg:cargo/cc@1.0.83", "", "", ScopeDevelopment},
			{"libc", "0.2.150", "pkg:cargo/libc@0.2.150", "", "", ScopeRuntime},
		}},
		{"rust/Cargo.lock", EcosystemCargo, 2, []wantDep{
			{"regex", "1.10.2", "pkg:cargo/regex@1.10.2", "", "", ScopeUnknown},
		}},
		{"ruby/Gemfile.lock", EcosystemRubyGems, 2, []wantDep{
			{"rails", "7.1.2", "pkg:gem/rails@7.1.2", "", "", ScopeUnknown},
		}},
		{"php/composer.lock", EcosystemComposer, 3, []wantDep{
			{"monolog/monolog", "3.5.0", "pkg:composer/monolog/monolog@3.5.0", "MIT", "https://github.com/Seldaek/monolog", ScopeRuntime},
			{"Vendor/Dual", "1.0.0", "pkg:composer/vendor/dual@1.0.0", "MIT OR GPL-2.0-only", "", ScopeRuntime},
			{"phpunit/phpunit", "10.5.1", "pkg:composer/phpunit/phpunit@10.5.1", "BSD-3-Clause", "", ScopeDevelopment},
		}},
		// What the file resolves by itself: properties (its own and
		// ${project.version}), dependencyManagement, a range's lower bound,
		// the default profile of a project with a parent, Maven's scopes; a
		// version only the parent or a bom could give stays empty.
		{"maven/pom.xml", EcosystemMaven, 9, []wantDep{
			{"com.google.guava:guava", "32.1.3-jre", "pkg:maven/com.google.guava/guava@32.1.3-jre", "", "", ScopeRuntime},
			{"org.slf4j:slf4j-api", "2.0.9", "pkg:maven/org.slf4j/slf4j-api@2.0.9", "", "", ScopeRuntime},
			{"com.example:lib", "1.4.0", "pkg:maven/com.example/lib@1.4.0", "", "", ScopeRuntime},
			{"org.range:r1", "1.2", "pkg:maven/org.range/r1@1.2", "", "", ScopeRuntime},
			{"org.range:r2", "", "pkg:maven/org.range/r2", "", "", ScopeRuntime},
			{"junit:junit", "4.13.2", "pkg:maven/junit/junit@4.13.2", "", "", ScopeDevelopment},
			{"org.unknown:nov", "", "pkg:maven/org.unknown/nov", "", "", ScopeRuntime},
			{"org.prof:pdep", "9", "pkg:maven/org.prof/pdep@9", "", "", ScopeRuntime},
		}},
		{"java/pom.xml", EcosystemMaven, 2, []wantDep{
			{"com.fasterxml.jackson.core:jackson-databind", "2.16.0", "pkg:maven/com.fasterxml.jackson.core/jackson-databind@2.16.0", "", "", ScopeRuntime},
			{"junit:junit", "4.13.2", "pkg:maven/junit/junit@4.13.2", "", "", ScopeDevelopment},
		}},
		{".github/workflows/ci.yml", EcosystemActions, 3, []wantDep{
			{"actions/checkout", "v4", "pkg:githubactions/actions/checkout@v4", "", "https://github.com/actions/checkout", ScopeRuntime},
			{"octo-org/workflows", "main", "pkg:githubactions/octo-org/workflows@main", "", "https://github.com/octo-org/workflows", ScopeRuntime},
		}},
	}
	ex := NewExtractor()
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			content, err := os.ReadFile(path.Join("testdata/manifests", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			manifestPath := "sub/dir/" + tt.file // manifests are found in any directory
			if !ex.IsManifest(manifestPath) {
				t.Fatalf("IsManifest(%q) = false", manifestPath)
			}
			deps, err := ex.Extract(context.Background(), manifestPath, content)
			if err != nil {
				t.Fatalf("Extract: %v", err)
			}
			if len(deps) != tt.count {
				t.Errorf("got %d dependencies, want %d: %+v", len(deps), tt.count, deps)
			}
			for _, d := range deps {
				if d.Ecosystem != tt.eco {
					t.Errorf("%s: ecosystem %q, want %q", d.Name, d.Ecosystem, tt.eco)
				}
			}
			for _, w := range tt.want {
				assertHasDep(t, deps, w)
			}
		})
	}
}

func assertHasDep(t *testing.T, deps []Dependency, w wantDep) {
	t.Helper()
	for _, d := range deps {
		if d.Name != w.name {
			continue
		}
		got := wantDep{d.Name, d.Version, d.PackageURL, d.License, d.SourceRepositoryURL, d.Scope}
		if got != w {
			t.Errorf("dependency %s:\n got  %+v\n want %+v", w.name, got, w)
		}
		return
	}
	t.Errorf("dependency %s not found in %+v", w.name, deps)
}

func TestFormatOf(t *testing.T) {
	t.Parallel()
	tests := map[string]Format{
		"go.mod":                          FormatGoMod,
		"a/b/package-lock.json":           FormatPackageLock,
		".github/workflows/ci.yaml":       FormatActionWorkflow,
		"svc/.github/workflows/x.yml":     FormatActionWorkflow,
		".github/workflows/sub/ci.yml":    FormatNone,
		".github/ci.yml":                  FormatNone,
		"docs/requirements.md":            FormatNone,
		"README.md":                       FormatNone,
		"packages/web/pnpm-lock.yaml":     FormatPnpmLock,
		"services/api/pom.xml":            FormatPomXML,
		"crates/core/Cargo.toml":          FormatCargoToml,
		"python/requirements.txt":         FormatRequirements,
		"ruby/Gemfile.lock":               FormatGemfileLock,
		"deep/nested/dir/composer.lock":   FormatComposerLock,
		"deep/nested/dir/pyproject.toml":  FormatPyproject,
		"deep/nested/dir/Pipfile.lock":    FormatPipfileLock,
		"deep/nested/dir/poetry.lock":     FormatPoetryLock,
		"deep/nested/dir/yarn.lock":       FormatYarnLock,
		"deep/nested/dir/Cargo.lock":      FormatCargoLock,
		"deep/nested/dir/package.json":    FormatPackageJSON,
		"deep/nested/dir/go.sum":          FormatNone,
		"deep/nested/dir/package.json.md": FormatNone,
	}
	for p, want := range tests {
		if got := FormatOf(p); got != want {
			t.Errorf("FormatOf(%q) = %q, want %q", p, got, want)
		}
	}
}

func TestExtractErrors(t *testing.T) {
	t.Parallel()
	ex := NewExtractor()
	ctx := context.Background()
	if _, err := ex.Extract(ctx, "README.md", []byte("x")); !errors.Is(err, ErrUnsupportedManifest) {
		t.Errorf("unsupported path: err = %v", err)
	}
	malformed := map[string]string{
		"package-lock.json":            `{"packages": [`,
		"package.json":                 `{"dependencies": {"a": 1}}`,
		"composer.lock":                `not json`,
		"pyproject.toml":               `[project`,
		"Cargo.toml":                   `dependencies = = 1`,
		"go.mod":                       "module x\nrequire (\n",
		"Pipfile.lock":                 `{`,
		"pom.xml":                      `<project><dependencies>`,
		"Cargo.lock":                   `[[package]`,
		".github/workflows/ci.yml":     "jobs: [\n",
		"poetry.lock":                  `[[package]`,
		"pnpm-lock.yaml":               "packages: [\n",
		"deep/dir/composer.lock":       `{"packages": {}}`,
		"deep/dir/package.json":        `[]`,
		"deep/dir/Cargo.toml":          `[dependencies]` + "\n" + `a = [1`,
		"deep/dir/pyproject.toml":      "[project]\ndependencies = 3",
		"deep/dir/npm-shrinkwrap.json": `{"dependencies": {"a": {"dependencies": 5}}}`,
	}
	for p, content := range malformed {
		_, err := ex.Extract(ctx, p, []byte(content))
		var me *ManifestError
		if !errors.As(err, &me) || !errors.Is(err, ErrMalformedManifest) || me.Path != p {
			t.Errorf("%s: err = %v, want *ManifestError", p, err)
		}
	}
}

func TestExtractEmptyManifests(t *testing.T) {
	t.Parallel()
	ex := NewExtractor()
	for _, p := range []string{"requirements.txt", "yarn.lock", "Gemfile.lock", "go.mod"} {
		deps, err := ex.Extract(context.Background(), p, nil)
		if err != nil || len(deps) != 0 {
			t.Errorf("%s: deps %v err %v, want none", p, deps, err)
		}
	}
}

// TestPomEncodings reads pom files in the encodings they are written in
// (UTF-8 by default, Latin-1, HTML entities), and reports others as malformed.
func TestPomEncodings(t *testing.T) {
	t.Parallel()
	ex := NewExtractor()
	ctx := context.Background()
	latin1 := "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n<project><dependencies><dependency>" +
		"<groupId>g</groupId><artifactId>caf\xe9</artifactId><version>1.0</version></dependency></dependencies></project>"
	deps, err := ex.Extract(ctx, "pom.xml", []byte(latin1))
	if err != nil || len(deps) != 1 || deps[0].Name != "g:café" {
		t.Errorf("Latin-1: %+v, %v", deps, err)
	}
	entities := `<project>&nbsp;<dependencies><dependency><groupId>g&amp;h</groupId><artifactId>a</artifactId>` +
		`<version>1&#46;0</version></dependency></dependencies></project>`
	deps, err = ex.Extract(ctx, "pom.xml", []byte(entities))
	if err != nil || len(deps) != 1 || deps[0].Name != "g&h:a" || deps[0].Version != "1.0" {
		t.Errorf("entities: %+v, %v", deps, err)
	}
	sjis := "<?xml version=\"1.0\" encoding=\"Shift_JIS\"?>\n<project></project>"
	if _, err := ex.Extract(ctx, "pom.xml", []byte(sjis)); !errors.Is(err, ErrMalformedManifest) {
		t.Errorf("Shift_JIS: err = %v, want a malformed manifest", err)
	}
}
