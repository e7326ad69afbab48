package graphql

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	gqlerrors "github.com/graph-gophers/graphql-go/errors"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/formatter"
	"github.com/vektah/gqlparser/v2/parser"
)

// The platform accepts a query whose inline fragments on different
// object types select a field of the same name with different leaf
// types, as gh's issueOrPullRequest query does (`...on Issue{state}`,
// IssueState, beside `...on PullRequest{state}`, PullRequestState). The
// GraphQL specification refuses it (OverlappingFieldsCanBeMerged), and so
// does the engine. As no object is of both types, the selections can
// never meet: such a query runs with the later fragments' fields under
// aliases of their own, which the response then names back.

// overlapAlias starts the aliases the rewrite gives.
const overlapAlias = "forgeapiOverlap"

// hasTypeConflict reports whether the engine refused the query for
// fields of conflicting types.
func hasTypeConflict(errs []*gqlerrors.QueryError) bool {
	for _, e := range errs {
		if e.ResolverError == nil && strings.Contains(e.Message, "conflicting types") {
			return true
		}
	}
	return false
}

// objectTypes are the names of the schema's object types.
func objectTypes(sdl string) map[string]bool {
	doc, err := parser.ParseSchema(&ast.Source{Input: sdl})
	if err != nil {
		panic(err) // the embedded schema parses: the engine parsed it first
	}
	out := map[string]bool{}
	for _, d := range doc.Definitions {
		if d.Kind == ast.Object {
			out[d.Name] = true
		}
	}
	return out
}

// separateFragments rewrites the query: in each selection set, a field
// of an inline fragment on an object type whose response name an earlier
// inline fragment on another object type selected gets an alias of its
// own. It returns the query and the aliases' original response names;
// ok is false when the query does not parse or needs no alias.
func separateFragments(query string, objects map[string]bool) (string, map[string]string, bool) {
	doc, err := parser.ParseQuery(&ast.Source{Input: query})
	if err != nil {
		return "", nil, false
	}
	names := map[string]string{}
	for _, op := range doc.Operations {
		separate(op.SelectionSet, objects, names)
	}
	for _, f := range doc.Fragments {
		separate(f.SelectionSet, objects, names)
	}
	if len(names) == 0 {
		return "", nil, false
	}
	var b bytes.Buffer
	formatter.NewFormatter(&b).FormatQueryDocument(doc)
	return b.String(), names, true
}

// separate aliases the fields of set (and of the sets under it) as
// separateFragments says.
func separate(set ast.SelectionSet, objects map[string]bool, names map[string]string) {
	seen := map[string]string{} // response name -> the type condition that selected it first
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			separate(s.SelectionSet, objects, names)
		case *ast.FragmentSpread:
		case *ast.InlineFragment:
			for _, inner := range s.SelectionSet {
				f, ok := inner.(*ast.Field)
				if !ok || !objects[s.TypeCondition] {
					continue
				}
				name := f.Alias
				if name == "" {
					name = f.Name
				}
				if first, ok := seen[name]; !ok {
					seen[name] = s.TypeCondition
				} else if first != s.TypeCondition {
					f.Alias = overlapAlias + strconv.Itoa(len(names)+1)
					names[f.Alias] = name
				}
			}
			separate(s.SelectionSet, objects, names)
		}
	}
}

// restoreNames gives the response's keys and error paths the names the
// query asked, in place of the aliases of separateFragments. A key is
// `"alias":` in the JSON, which no string value holds unescaped.
func restoreNames(data json.RawMessage, errs []*gqlerrors.QueryError, names map[string]string) json.RawMessage {
	for alias, name := range names {
		data = bytes.ReplaceAll(data, []byte(strconv.Quote(alias)+":"), []byte(strconv.Quote(name)+":"))
	}
	for _, e := range errs {
		for i, p := range e.Path {
			if s, ok := p.(string); ok && names[s] != "" {
				e.Path[i] = names[s]
			}
		}
	}
	return data
}
