package graphql

import (
	"fmt"
	"time"

	"forgeapi/internal/wire"
)

// dateTime is the DateTime scalar: ISO 8601 in UTC to the second, as
// wire.Time writes REST timestamps.
type dateTime struct{ wire.Time }

// ImplementsGraphQLType reports that dateTime is DateTime.
func (dateTime) ImplementsGraphQLType(name string) bool { return name == "DateTime" }

// UnmarshalGraphQL reads a DateTime argument.
func (t *dateTime) UnmarshalGraphQL(input any) error {
	s, ok := input.(string)
	if !ok {
		return fmt.Errorf("DateTime: want a string, got %T", input)
	}
	parsed, err := time.Parse(time.RFC3339, s)
	t.Time = wire.T(parsed)
	return err
}

// at is the DateTime of t.
func at(t time.Time) dateTime { return dateTime{wire.T(t)} }

// uri is the URI scalar: an absolute address.
type uri string

// ImplementsGraphQLType reports that uri is URI.
func (uri) ImplementsGraphQLType(name string) bool { return name == "URI" }

// UnmarshalGraphQL reads a URI argument.
func (u *uri) UnmarshalGraphQL(input any) error {
	s, ok := input.(string)
	if !ok {
		return fmt.Errorf("URI: want a string, got %T", input)
	}
	*u = uri(s)
	return nil
}

// gitSSHRemote is the GitSSHRemote scalar: git@host:owner/name.git.
type gitSSHRemote string

// ImplementsGraphQLType reports that gitSSHRemote is GitSSHRemote.
func (gitSSHRemote) ImplementsGraphQLType(name string) bool { return name == "GitSSHRemote" }

// UnmarshalGraphQL reads a GitSSHRemote argument.
func (g *gitSSHRemote) UnmarshalGraphQL(input any) error {
	s, ok := input.(string)
	if !ok {
		return fmt.Errorf("GitSSHRemote: want a string, got %T", input)
	}
	*g = gitSSHRemote(s)
	return nil
}
