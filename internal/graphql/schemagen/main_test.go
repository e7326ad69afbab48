package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommittedSchemaIsFresh: schema.graphql is what schemagen makes of
// the pinned npm package and served.txt (run `go generate
// ./internal/graphql` after changing either). Without the npm modules
// the test skips, except in CI, which installs them.
func TestCommittedSchemaIsFresh(t *testing.T) {
	pkg := filepath.Join("..", defaultPackage)
	if _, err := os.Stat(filepath.Join(pkg, "schema.graphql")); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI lacks the npm modules: %v", err)
		}
		t.Skip("npm modules not installed (testdata/node: npm ci)")
	}
	fresh, err := generate(pkg, filepath.Join("..", "served.txt"))
	if err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile(filepath.Join("..", "schema.graphql"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(fresh, committed) {
		t.Fatal("internal/graphql/schema.graphql is stale: run go generate ./internal/graphql")
	}
	if len(committed) > 1<<20 {
		t.Fatalf("schema.graphql is %d bytes, want well under 1 MiB", len(committed))
	}
}

// TestSubset: the subset keeps the listed fields with their arguments,
// the inputs and enums they use, and the interfaces an object serves all
// the fields of; it refuses a field the schema lacks and a field whose
// object type is not served.
func TestSubset(t *testing.T) {
	const schema = `
directive @preview(toggledBy: String!) on FIELD_DEFINITION
interface Node { id: ID! }
interface Named { name: String! }
input Order { field: Field! }
enum Field { NAME AGE }
enum Unused { X }
type Query { thing(order: Order): Thing other: Other }
type Thing implements Node & Named { id: ID! name: String! @preview(toggledBy: "x") secret: String old: Int @deprecated(reason: "gone") }
type Other { id: ID! }
`
	sdl, err := Subset(schema, map[string]map[string]bool{"Query": {"thing": true}, "Thing": {"id": true, "old": true},
		"Node": {"id": true}, "Named": {"name": true}})
	if err != nil {
		t.Fatal(err)
	}
	got := string(sdl)
	for _, want := range []string{"input Order", "enum Field", "type Thing implements Node {", `@deprecated(reason: "gone")`} {
		if !strings.Contains(got, want) {
			t.Errorf("subset lacks %q:\n%s", want, got)
		}
	}
	for _, unwanted := range []string{"Unused", "secret", "other", "@preview", "type Other"} {
		if strings.Contains(got, unwanted) {
			t.Errorf("subset has %q:\n%s", unwanted, got)
		}
	}
	for name, served := range map[string]map[string]map[string]bool{
		"missing field":    {"Query": {"thing": true}, "Thing": {"nope": true}},
		"unserved type":    {"Query": {"other": true}},
		"scalar as a type": {"ID": {"x": true}},
	} {
		if _, err := Subset(schema, served); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
