package graphql

import (
	"testing"

	gql "github.com/graph-gophers/graphql-go"
)

// TestResolversMatchSchema: every field of the served schema has its
// resolver, with the arguments and types the schema declares.
func TestResolversMatchSchema(t *testing.T) {
	if _, err := gql.ParseSchema(schemaSDL, &root{}, gql.UseStringDescriptions()); err != nil {
		t.Fatal(err)
	}
}
