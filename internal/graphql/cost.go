package graphql

import (
	"fmt"
	"math"
	"strings"

	gqlerrors "github.com/graph-gophers/graphql-go/errors"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"
)

// The platform's limits on what one query may ask for: every connection
// needs first or last, of at most maxPageSize, and the nodes a query may
// reach (the page sizes multiplied down each path and summed) are at most
// maxNodes.
const (
	maxPageSize = 100
	maxNodes    = 500_000
	// nodeCap bounds the products of page sizes, which a deep query would
	// overflow; anything past maxNodes is refused anyway.
	nodeCap = 1 << 40
)

// queryCost is what a query costs as the platform counts it: the rate
// limit points it spends and the nodes it may reach; errs holds the
// refusals of its connections' page sizes (a query with errs does not
// run).
type queryCost struct {
	points, nodes int
	errs          []gqlError
}

// costOf measures the operation of a request. A query that does not
// parse, or that names no operation of its document, costs one point:
// the engine refuses it with its own error. Fields the schema lacks are
// skipped, for the same reason.
func costOf(schema *ast.Schema, query, operation string, vars map[string]any) queryCost {
	doc, err := parser.ParseQuery(&ast.Source{Input: query})
	if err != nil {
		return queryCost{points: 1}
	}
	op := operationNamed(doc, operation)
	if op == nil {
		return queryCost{points: 1}
	}
	w := &costWalk{schema: schema, doc: doc, vars: withDefaults(op, vars), visiting: map[string]bool{}}
	root := schema.Query
	if op.Operation == ast.Mutation {
		root = schema.Mutation
	}
	if root != nil {
		w.selections(op.SelectionSet, root.Name, 1)
	}
	return queryCost{points: max(1, int(math.Round(float64(w.requests)/100))), nodes: w.nodes, errs: w.errs}
}

// loadCostSchema parses the served schema for costOf.
func loadCostSchema(sdl string) *ast.Schema {
	s, err := validator.LoadSchema(validator.Prelude, &ast.Source{Name: "schema.graphql", Input: sdl})
	if err != nil {
		panic("graphql: the served schema does not load: " + err.Error())
	}
	return s
}

// operationNamed is the document's operation of that name, or its only
// one when name is empty.
func operationNamed(doc *ast.QueryDocument, name string) *ast.OperationDefinition {
	if name == "" {
		if len(doc.Operations) == 1 {
			return doc.Operations[0]
		}
		return nil
	}
	return doc.Operations.ForName(name)
}

// withDefaults adds the operation's variable defaults the request left out.
func withDefaults(op *ast.OperationDefinition, vars map[string]any) map[string]any {
	out := make(map[string]any, len(vars))
	for k, v := range vars {
		out[k] = v
	}
	for _, d := range op.VariableDefinitions {
		if _, ok := out[d.Variable]; !ok && d.DefaultValue != nil {
			if v, err := d.DefaultValue.Value(nil); err == nil {
				out[d.Variable] = v
			}
		}
	}
	return out
}

// costWalk walks an operation's selections, counting the requests each
// connection needs (one per node of the enclosing connections) and the
// nodes it may return.
type costWalk struct {
	schema           *ast.Schema
	doc              *ast.QueryDocument
	vars             map[string]any
	requests, nodes  int
	errs             []gqlError
	visiting         map[string]bool // fragments on the walk's path
	nodeLimitRefused bool
}

// selections walks a selection set on the type named typeName, each of
// whose selections is fetched mult times.
func (w *costWalk) selections(set ast.SelectionSet, typeName string, mult int) {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			w.field(s, typeName, mult)
		case *ast.InlineFragment:
			t := typeName
			if s.TypeCondition != "" {
				t = s.TypeCondition
			}
			w.selections(s.SelectionSet, t, mult)
		case *ast.FragmentSpread:
			f := w.doc.Fragments.ForName(s.Name)
			if f == nil || w.visiting[s.Name] {
				continue // the engine refuses unknown and cyclic fragments
			}
			w.visiting[s.Name] = true
			w.selections(f.SelectionSet, f.TypeCondition, mult)
			delete(w.visiting, s.Name)
		}
	}
}

// field counts one field: a connection costs mult requests and returns
// up to mult times its page size of nodes, which its selections are
// fetched for.
func (w *costWalk) field(f *ast.Field, parent string, mult int) {
	t := w.schema.Types[parent]
	if t == nil {
		return
	}
	def := t.Fields.ForName(f.Name)
	if def == nil {
		return
	}
	if isConnection(def) {
		w.requests = min(nodeCap, w.requests+mult)
		size, ok := w.pageSize(f)
		if !ok {
			return // no nodes: nothing below is fetched
		}
		mult = min(nodeCap, mult*size)
		w.nodes = min(nodeCap, w.nodes+mult)
		if w.nodes > maxNodes && !w.nodeLimitRefused {
			w.nodeLimitRefused = true
			w.refuse(f, "MAX_NODE_LIMIT_EXCEEDED", fmt.Sprintf("By the time this query traverses to the %s connection, it is requesting up to %s possible nodes which exceeds the maximum limit of %s.",
				f.Name, thousands(w.nodes), thousands(maxNodes)))
		}
	}
	w.selections(f.SelectionSet, def.Type.Name(), mult)
}

// isConnection reports whether the field is a paginated connection.
func isConnection(def *ast.FieldDefinition) bool {
	return def.Arguments.ForName("first") != nil && strings.HasSuffix(def.Type.Name(), "Connection")
}

// pageSize is the connection's first or last; false when it has neither
// (refused when it asks for nodes or edges) or asks for more than
// maxPageSize (refused).
func (w *costWalk) pageSize(f *ast.Field) (int, bool) {
	for _, name := range []string{"first", "last"} {
		arg := f.Arguments.ForName(name)
		if arg == nil {
			continue
		}
		v, err := arg.Value.Value(w.vars)
		n, isNumber := number(v)
		if err != nil || !isNumber {
			continue // null, or a value the engine refuses
		}
		if n > maxPageSize {
			w.refuse(f, "EXCESSIVE_PAGINATION", fmt.Sprintf("Requesting %d records on the `%s` connection exceeds the `%s` limit of %d records.",
				n, f.Name, name, maxPageSize))
			return 0, false
		}
		return max(n, 0), true
	}
	if w.selectsItems(f.SelectionSet) {
		w.refuse(f, "MISSING_PAGINATION_BOUNDARIES", fmt.Sprintf("You must provide a `first` or `last` value to properly paginate the `%s` connection.", f.Name))
	}
	return 0, false
}

// selectsItems reports whether a connection's selections ask for its
// nodes or edges: without first or last a connection answers only its
// totalCount and pageInfo (gh asks commits { totalCount }).
func (w *costWalk) selectsItems(set ast.SelectionSet) bool {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			if s.Name == "nodes" || s.Name == "edges" {
				return true
			}
		case *ast.InlineFragment:
			if w.selectsItems(s.SelectionSet) {
				return true
			}
		case *ast.FragmentSpread:
			if f := w.doc.Fragments.ForName(s.Name); f != nil && !w.visiting[s.Name] {
				w.visiting[s.Name] = true
				found := w.selectsItems(f.SelectionSet)
				delete(w.visiting, s.Name)
				if found {
					return true
				}
			}
		}
	}
	return false
}

// number reads an integer argument: a literal (int64) or a variable's
// JSON number (float64).
func number(v any) (int, bool) {
	switch n := v.(type) {
	case int64:
		return int(min(n, nodeCap)), true
	case float64:
		return int(min(n, nodeCap)), n == math.Trunc(n)
	case int:
		return n, true
	}
	return 0, false
}

func (w *costWalk) refuse(f *ast.Field, typ, msg string) {
	e := gqlError{Type: typ, Message: msg}
	if f.Position != nil {
		e.Locations = []gqlerrors.Location{{Line: f.Position.Line, Column: f.Position.Column}}
	}
	w.errs = append(w.errs, e)
}

// thousands writes n with comma separators, as the platform's messages do.
func thousands(n int) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
