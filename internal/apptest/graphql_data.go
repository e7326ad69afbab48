package apptest

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/vektah/gqlparser/v2/ast"
)

// maxDataProblems bounds the mismatches reported for one response.
const maxDataProblems = 10

// checkData checks a response's data against the selections of the
// operation on its root type: every value fits its field's type (see
// dataWalker.value), and every object has exactly the keys selected for
// its type, @include and @skip applied with the variables.
func checkData(schema *ast.Schema, vars map[string]any, root *ast.Definition, sel ast.SelectionSet, data any) error {
	w := &dataWalker{schema: schema, vars: vars}
	w.object("data", root, sel, data)
	return w.err()
}

// dataWalker walks a response's data along the query's selections and
// records the values that do not fit.
type dataWalker struct {
	schema   *ast.Schema
	vars     map[string]any
	problems []string
}

// problem records a mismatch at the path.
func (w *dataWalker) problem(path, format string, args ...any) {
	if len(w.problems) < maxDataProblems {
		w.problems = append(w.problems, path+": "+fmt.Sprintf(format, args...))
	}
}

// err is the walk's mismatches as one error, nil when there are none.
func (w *dataWalker) err() error {
	if len(w.problems) == 0 {
		return nil
	}
	return errors.New(strings.Join(w.problems, "; "))
}

// value checks v against the type: null only where the type is nullable,
// a list for a list type (each item checked), a scalar of its JSON kind
// and form (graphQLScalars), an enum value of the enum, and an object
// for an object, interface or union type, with the selections sel.
func (w *dataWalker) value(path string, typ *ast.Type, sel ast.SelectionSet, v any) {
	if v == nil {
		if typ.NonNull {
			w.problem(path, "null, but the type %s is non-null", typ)
		}
		return
	}
	if typ.Elem != nil {
		list, ok := v.([]any)
		if !ok {
			w.problem(path, "%s, want a list (%s)", jsonKind(v), typ)
			return
		}
		for i, item := range list {
			w.value(fmt.Sprintf("%s[%d]", path, i), typ.Elem, sel, item)
		}
		return
	}
	def := w.schema.Types[typ.NamedType]
	switch def.Kind {
	case ast.Scalar:
		if err := checkScalar(def.Name, v); err != nil {
			w.problem(path, "%v", err)
		}
	case ast.Enum:
		if s, ok := v.(string); !ok || def.EnumValues.ForName(s) == nil {
			w.problem(path, "%s is not a value of the enum %s", jsonKind(v), def.Name)
		}
	case ast.Object:
		w.object(path, def, sel, v)
	case ast.Interface, ast.Union:
		w.abstract(path, def, sel, v)
	default:
		w.problem(path, "the type %s (%s) is not an output type", def.Name, def.Kind)
	}
}

// object checks v as an object of the object type def: the keys are
// exactly those that sel selects on def, each value fits its field.
func (w *dataWalker) object(path string, def *ast.Definition, sel ast.SelectionSet, v any) {
	obj, ok := v.(map[string]any)
	if !ok {
		w.problem(path, "%s, want an object (%s)", jsonKind(v), def.Name)
		return
	}
	fields := w.collect(def, sel)
	for _, f := range fields {
		val, present := obj[f.key]
		at := path + "." + f.key
		switch {
		case !present:
			w.problem(at, "missing, but the query selects it on %s", def.Name)
		case f.fields[0].Name == "__typename":
			if val != def.Name {
				w.problem(at, "%s, want %q", jsonKind(val), def.Name)
			}
		default:
			w.value(at, f.fields[0].Definition.Type, f.subselection(), val)
		}
	}
	for key := range obj {
		if !slices.ContainsFunc(fields, func(f selected) bool { return f.key == key }) {
			w.problem(path+"."+key, "the query does not select it on %s", def.Name)
		}
	}
}

// abstract checks v as an object of the interface or union def: of the
// object type its __typename names when it has one, else of any of def's
// object types (the keys that the query selects differ only by which
// fragments apply, so the types that apply the same fragments are tried
// once).
func (w *dataWalker) abstract(path string, def *ast.Definition, sel ast.SelectionSet, v any) {
	obj, ok := v.(map[string]any)
	if !ok {
		w.problem(path, "%s, want an object (%s)", jsonKind(v), def.Name)
		return
	}
	possible := w.schema.GetPossibleTypes(def)
	if name, ok := obj["__typename"].(string); ok {
		i := slices.IndexFunc(possible, func(d *ast.Definition) bool { return d.Name == name })
		if i < 0 {
			w.problem(path+".__typename", "%q is not an object type of %s", name, def.Name)
			return
		}
		w.object(path, possible[i], sel, v)
		return
	}
	var first []string
	tried := map[string]bool{}
	for _, t := range possible {
		shape := shapeOf(w.collect(t, sel))
		if tried[shape] {
			continue
		}
		tried[shape] = true
		try := &dataWalker{schema: w.schema, vars: w.vars}
		try.object(path, t, sel, v)
		if len(try.problems) == 0 {
			return
		}
		if first == nil {
			first = try.problems
		}
	}
	w.problem(path, "fits no object type of %s (as %s: %s)", def.Name, possible[0].Name, strings.Join(first, "; "))
}

// selected is one response key of an object: the fields of the query
// that it answers (several when fragments select the same key).
type selected struct {
	key    string
	fields []*ast.Field
}

// subselection is the merged selection set of the key's fields.
func (s selected) subselection() ast.SelectionSet {
	if len(s.fields) == 1 {
		return s.fields[0].SelectionSet
	}
	var sel ast.SelectionSet
	for _, f := range s.fields {
		sel = append(sel, f.SelectionSet...)
	}
	return sel
}

// shapeOf names the fields that a collection selected, to tell the
// object types that the query treats alike.
func shapeOf(fields []selected) string {
	var b strings.Builder
	for _, s := range fields {
		for _, f := range s.fields {
			fmt.Fprintf(&b, "%p,", f)
		}
	}
	return b.String()
}

// collect returns the response keys that sel selects on the object type
// def, in order: GraphQL's CollectFields, with fragments applied when
// their type condition holds for def and @skip and @include read with
// the variables.
func (w *dataWalker) collect(def *ast.Definition, sel ast.SelectionSet) []selected {
	var out []selected
	w.collectInto(def, sel, &out, map[string]bool{})
	return out
}

func (w *dataWalker) collectInto(def *ast.Definition, sel ast.SelectionSet, out *[]selected, spread map[string]bool) {
	for _, s := range sel {
		switch s := s.(type) {
		case *ast.Field:
			if !w.included(s.Directives) {
				continue
			}
			if i := slices.IndexFunc(*out, func(f selected) bool { return f.key == s.Alias }); i >= 0 {
				(*out)[i].fields = append((*out)[i].fields, s)
				continue
			}
			*out = append(*out, selected{key: s.Alias, fields: []*ast.Field{s}})
		case *ast.InlineFragment:
			if w.included(s.Directives) && w.applies(def, s.TypeCondition) {
				w.collectInto(def, s.SelectionSet, out, spread)
			}
		case *ast.FragmentSpread:
			if spread[s.Name] || !w.included(s.Directives) || s.Definition == nil || !w.applies(def, s.Definition.TypeCondition) {
				continue
			}
			spread[s.Name] = true
			w.collectInto(def, s.Definition.SelectionSet, out, spread)
		}
	}
}

// applies reports whether a fragment's type condition holds for the
// object type def: none, def itself, or an interface or union of def.
func (w *dataWalker) applies(def *ast.Definition, condition string) bool {
	if condition == "" || condition == def.Name {
		return true
	}
	cond := w.schema.Types[condition]
	if cond == nil {
		return false
	}
	return slices.ContainsFunc(w.schema.GetPossibleTypes(cond), func(d *ast.Definition) bool { return d.Name == def.Name })
}

// included applies @skip(if:) and @include(if:) with the variables.
func (w *dataWalker) included(directives ast.DirectiveList) bool {
	if d := directives.ForName("skip"); d != nil && d.ArgumentMap(w.vars)["if"] == true {
		return false
	}
	if d := directives.ForName("include"); d != nil && d.ArgumentMap(w.vars)["if"] != true {
		return false
	}
	return true
}

// graphQLScalars check a value of each scalar of the platform's schema:
// its JSON kind and, for the platform's own scalars, the form their
// descriptions give. A scalar missing here is a mismatch, so that a new
// one gets its check.
var graphQLScalars = map[string]func(v any) error{
	"Int":             intValue,
	"Float":           numberValue,
	"String":          stringValue,
	"ID":              stringValue,
	"Boolean":         boolValue,
	"DateTime":        utcTime,
	"PreciseDateTime": utcTime,
	"GitTimestamp":    formed("an RFC 3339 timestamp", func(s string) bool { _, err := time.Parse(time.RFC3339, s); return err == nil }),
	"Date":            formed("an ISO 8601 date", func(s string) bool { _, err := time.Parse(time.DateOnly, s); return err == nil }),
	"URI":             formed("an absolute URI or an absolute path", isURI),
	"GitObjectID":     formed("a 40-hex object id", gitObjectID.MatchString),
	"GitRefname":      formed("a full reference name", func(s string) bool { return strings.HasPrefix(s, "refs/") }),
	"GitSSHRemote":    stringValue,
	"HTML":            stringValue,
	"BigInt":          formed("a decimal integer in a string", bigInt.MatchString),
	"Base64String":    formed("base64", func(s string) bool { _, err := base64.StdEncoding.DecodeString(s); return err == nil }),
	"X509Certificate": stringValue,
}

var (
	gitObjectID = regexp.MustCompile(`^[0-9a-f]{40}$`)
	bigInt      = regexp.MustCompile(`^-?[0-9]+$`)
)

// checkScalar checks a non-null value of the scalar.
func checkScalar(name string, v any) error {
	check, ok := graphQLScalars[name]
	if !ok {
		return fmt.Errorf("no check for the scalar %s (add one to graphQLScalars)", name)
	}
	if err := check(v); err != nil {
		return fmt.Errorf("%s, want %v (%s)", jsonKind(v), err, name)
	}
	return nil
}

// errKind is a check's mismatch: what the value should have been.
type errKind string

func (e errKind) Error() string { return string(e) }

func intValue(v any) error {
	n, ok := v.(json.Number)
	if i, err := n.Int64(); !ok || err != nil || i < math.MinInt32 || i > math.MaxInt32 {
		return errKind("a 32-bit integer")
	}
	return nil
}

func numberValue(v any) error {
	if _, ok := v.(json.Number); !ok {
		return errKind("a number")
	}
	return nil
}

func stringValue(v any) error {
	if _, ok := v.(string); !ok {
		return errKind("a string")
	}
	return nil
}

func boolValue(v any) error {
	if _, ok := v.(bool); !ok {
		return errKind("a boolean")
	}
	return nil
}

// utcTime checks a DateTime: RFC 3339 in UTC ("...Z"), as the schema
// describes it ("An ISO-8601 encoded UTC date string").
func utcTime(v any) error {
	s, ok := v.(string)
	if t, err := time.Parse(time.RFC3339, s); !ok || err != nil || !strings.HasSuffix(s, "Z") || t.Location() != time.UTC {
		return errKind("an RFC 3339 timestamp in UTC")
	}
	return nil
}

// formed returns the check of a string of the form that valid tells.
func formed(form string, valid func(string) bool) func(any) error {
	return func(v any) error {
		if s, ok := v.(string); !ok || !valid(s) {
			return errKind(form)
		}
		return nil
	}
}

// isURI reports whether s is an absolute URI (https://..., git://...)
// or an absolute path (resourcePath's /owner/name).
func isURI(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme != "" || strings.HasPrefix(s, "/"))
}
