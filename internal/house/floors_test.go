package house_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"forgeapi/internal/house"
)

const module = "forgeapi/"

// moduleImports parses the non-test Go files of the module at root and
// returns each package's imports of the module's own packages, by path
// relative to the module.
func moduleImports(t *testing.T, root string) map[string][]string {
	t.Helper()
	imports := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (name == "testdata" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		pkg := filepath.ToSlash(rel)
		if _, ok := imports[pkg]; !ok {
			imports[pkg] = nil
		}
		for _, spec := range f.Imports {
			p, _ := strconv.Unquote(spec.Path.Value)
			if dep, ok := strings.CutPrefix(p, module); ok && !slices.Contains(imports[pkg], dep) {
				imports[pkg] = append(imports[pkg], dep)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return imports
}

// TestImportsGoDownTheFloors fails on a package missing from
// house.Floors, a package listed there that does not exist, and an import
// of a package on a higher floor than the importer's. (Go itself refuses
// a cycle.)
func TestImportsGoDownTheFloors(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root: %v", err)
	}
	floor := map[string]int{}
	for _, f := range house.Floors {
		for _, p := range f.Packages {
			if _, dup := floor[p]; dup {
				t.Errorf("%s is listed on two floors", p)
			}
			floor[p] = f.Level
		}
	}
	imports := moduleImports(t, root)
	for pkg, deps := range imports {
		level, ok := floor[pkg]
		if !ok {
			t.Errorf("%s is on no floor: add it to house.Floors (internal/house/floors.go), on the lowest floor that holds what it imports", pkg)
			continue
		}
		for _, dep := range deps {
			if floor[dep] > level {
				t.Errorf("%s (floor %d) imports %s (floor %d): an import runs up the house", pkg, level, dep, floor[dep])
			}
		}
	}
	for p := range floor {
		if _, ok := imports[p]; !ok {
			t.Errorf("house.Floors lists %s, which holds no Go package", p)
		}
	}
}

// TestFloorsAreNumberedFromTheGround keeps the table readable: levels 0,
// 1, 2, ... in order, each with packages.
func TestFloorsAreNumberedFromTheGround(t *testing.T) {
	for i, f := range house.Floors {
		if f.Level != i || len(f.Packages) == 0 || f.What == "" {
			t.Errorf("floor %d: level %d, %d packages, what %q", i, f.Level, len(f.Packages), f.What)
		}
	}
}
