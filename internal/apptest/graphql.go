package apptest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"
	gqlvalidator "github.com/vektah/gqlparser/v2/validator"
)

// GraphQLSchemaEnv names the environment variable with the platform's
// full GraphQL schema (schema.graphql of the npm package
// @octokit/graphql-schema). When it is set, or when testdata/node holds
// the package, every GraphQL exchange an apptest client makes is
// validated against it (checkGraphQL), and a mismatch fails the test as
// an OpenAPI mismatch does; without it, GraphQL exchanges are skipped.
const GraphQLSchemaEnv = "FORGEAPI_TEST_GRAPHQL_SCHEMA"

// graphQLSchemaFile returns the platform's GraphQL schema file:
// GraphQLSchemaEnv, else the package installed under testdata/node, else
// "".
func graphQLSchemaFile() string {
	if file := os.Getenv(GraphQLSchemaEnv); file != "" {
		return file
	}
	file := testdataDir("node", "node_modules", "@octokit", "graphql-schema", "schema.graphql")
	if _, err := os.Stat(file); file == "" || err != nil {
		return ""
	}
	return file
}

// graphQLSchema is the platform's full GraphQL schema (not forgeapi's
// served part), parsed the first time an exchange needs it: a response
// must fit the platform's types whatever forgeapi serves.
type graphQLSchema struct {
	file   string
	once   sync.Once
	schema *ast.Schema
	err    error
}

// load parses and validates the schema file once.
func (g *graphQLSchema) load() (*ast.Schema, error) {
	g.once.Do(func() {
		src, err := os.ReadFile(g.file)
		if err != nil {
			g.err = err
			return
		}
		doc, err := parser.ParseSchemas(gqlvalidator.Prelude, &ast.Source{Name: filepath.Base(g.file), Input: string(src)})
		if err != nil {
			g.err = fmt.Errorf("parse %s: %w", g.file, err)
			return
		}
		dropRepeatedFields(doc)
		if g.schema, err = gqlvalidator.ValidateSchemaDocument(doc); err != nil {
			g.err = fmt.Errorf("load %s: %w", g.file, err)
		}
	})
	return g.schema, g.err
}

// dropRepeatedFields keeps the last definition of a field that a type
// defines twice. The published schema has such a type
// (EnterpriseOwnerInfo's repositoryDeployKeySetting and
// repositoryDeployKeySettingOrganizations), which a strict loader
// refuses; forgeapi serves neither field.
func dropRepeatedFields(doc *ast.SchemaDocument) {
	for _, def := range doc.Definitions {
		at := make(map[string]int, len(def.Fields))
		kept := def.Fields[:0]
		for _, f := range def.Fields {
			if i, seen := at[f.Name]; seen {
				kept[i] = f
				continue
			}
			at[f.Name] = len(kept)
			kept = append(kept, f)
		}
		def.Fields = kept
	}
}

// graphQLPaths are the paths of the platform's GraphQL endpoint: the
// self-managed edition's and the hosted one's.
var graphQLPaths = map[string]bool{"/api/graphql": true, "/graphql": true}

// isGraphQL reports whether the request is to the GraphQL endpoint.
func isGraphQL(req *http.Request) bool { return graphQLPaths[req.URL.Path] }

// checkGraphQL validates an exchange with the GraphQL endpoint, or skips
// it when the schema is not installed. A 200 must be a JSON GraphQL
// response that fits the request's query (checkGraphQLResponse); any
// other status must be the platform's JSON error object (a 401 for bad
// credentials, a 400 for a body that is not JSON), and a 500 never
// passes.
func (v *Validator) checkGraphQL(req *http.Request, status int, header http.Header, body []byte) error {
	if v.graphQL == nil {
		v.skipped.Add(1)
		return nil
	}
	schema, err := v.graphQL.load()
	if err != nil {
		return err
	}
	v.validated.Add(1)
	v.graphQLValidated.Add(1)
	fail := func(err error) error {
		return fmt.Errorf("%s %s -> %d%s does not match the platform's GraphQL schema (%s): %s",
			req.Method, req.URL.Path, status, quotedMessage(status, body), filepath.Base(v.graphQL.file), shorten(err.Error()))
	}
	if status != http.StatusOK {
		if status >= 500 || !isErrorBody(body) {
			return fail(errors.New("a status other than 200 must be a 4xx with the platform's error object"))
		}
		return nil
	}
	if mt, _, _ := mime.ParseMediaType(header.Get("Content-Type")); mt != "application/json" {
		return fail(fmt.Errorf("Content-Type %q, want application/json", header.Get("Content-Type")))
	}
	request, err := requestBody(req)
	if err != nil {
		return fail(err)
	}
	if err := checkGraphQLResponse(schema, request, body); err != nil {
		return fail(err)
	}
	return nil
}

// requestBody returns the body of a sent request, read again through
// GetBody (validatingTransport makes sure a GraphQL request has one).
func requestBody(req *http.Request) ([]byte, error) {
	if req.GetBody == nil {
		return nil, errors.New("the request's body cannot be read again (no GetBody) to know its query")
	}
	rc, err := req.GetBody()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

// rereadable returns req, or a copy of it whose body GetBody can read
// again, for the validation of its response (requestBody).
func rereadable(req *http.Request) (*http.Request, error) {
	if req.Body == nil || req.Body == http.NoBody || req.GetBody != nil {
		return req, nil
	}
	b, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	out := req.Clone(req.Context())
	out.Body = io.NopCloser(bytes.NewReader(b))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	return out, nil
}

// graphQLRequest is the body of a request to the GraphQL endpoint.
type graphQLRequest struct {
	Query         string         `json:"query"`
	OperationName string         `json:"operationName"`
	Variables     map[string]any `json:"variables"`
}

// checkGraphQLResponse checks the body of a 200 against the request's
// query on the platform's schema. The body is an object of data, errors
// and extensions, no other key, with data or errors. A request that does
// not validate against the schema (its JSON, its query, its operation
// name, its variables) must be answered with errors and no data. data
// must fit the operation's selections (checkData). Every entry of errors
// has a message; its path, when it has one and data is not null, leads
// through data to a null: the field's own, or an ancestor's that its
// null made null.
func checkGraphQLResponse(schema *ast.Schema, request, body []byte) error {
	var resp map[string]any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&resp); err != nil {
		return fmt.Errorf("the body is not a JSON object: %v", err)
	}
	for key := range resp {
		if key != "data" && key != "errors" && key != "extensions" {
			return fmt.Errorf("the response has the key %q: only data, errors and extensions are allowed", key)
		}
	}
	data, hasData := resp["data"]
	if err := checkErrors(resp["errors"], data); err != nil {
		return err
	}
	if !hasData && resp["errors"] == nil {
		return errors.New("the response has neither data nor errors")
	}
	op, vars, invalid := operation(schema, request)
	if invalid != nil {
		if data != nil || resp["errors"] == nil {
			return fmt.Errorf("the request does not validate against the platform's schema (%v): the response must be errors without data", invalid)
		}
		return nil
	}
	if data == nil {
		if resp["errors"] == nil {
			return errors.New("data is null without errors")
		}
		return nil
	}
	root := rootType(schema, op.Operation)
	if root == nil {
		return fmt.Errorf("the schema has no %s type", op.Operation)
	}
	return checkData(schema, vars, root, op.SelectionSet, data)
}

// operation parses and validates the request's query against the schema
// and returns the operation to run, with its variables coerced; invalid
// says why the request does not validate.
func operation(schema *ast.Schema, request []byte) (op *ast.OperationDefinition, vars map[string]any, invalid error) {
	var r graphQLRequest
	if err := json.Unmarshal(request, &r); err != nil {
		return nil, nil, fmt.Errorf("the request body is not a GraphQL request: %v", err)
	}
	doc, err := parser.ParseQuery(&ast.Source{Input: r.Query})
	if err != nil {
		return nil, nil, err
	}
	if errs := slices.DeleteFunc(gqlvalidator.ValidateWithRules(schema, doc, nil), leafTypeConflict); len(errs) > 0 {
		return nil, nil, errs
	}
	switch {
	case r.OperationName != "":
		op = doc.Operations.ForName(r.OperationName)
	case len(doc.Operations) == 1:
		op = doc.Operations[0]
	}
	if op == nil {
		return nil, nil, fmt.Errorf("the query has no operation %q to run", r.OperationName)
	}
	vars, err = gqlvalidator.VariableValues(schema, op, r.Variables)
	if err != nil {
		return nil, nil, err
	}
	return op, vars, nil
}

// leafTypeConflict reports whether a validation error is only that
// fields of one response name return different types, which the
// platform accepts where the specification does not
// (OverlappingFieldsCanBeMerged): gh's `...on Issue{state}` beside
// `...on PullRequest{state}` (IssueState, PullRequestState) can never
// meet in one object. Fields that differ in name or arguments are still
// refused.
func leafTypeConflict(e *gqlerror.Error) bool {
	return e.Rule == "OverlappingFieldsCanBeMerged" && strings.Contains(e.Message, "conflicting types") &&
		!strings.Contains(e.Message, "are different fields") && !strings.Contains(e.Message, "differing arguments")
}

// rootType is the schema's type of the operation.
func rootType(schema *ast.Schema, op ast.Operation) *ast.Definition {
	switch op {
	case ast.Mutation:
		return schema.Mutation
	case ast.Subscription:
		return schema.Subscription
	default:
		return schema.Query
	}
}

// checkErrors checks a response's errors: absent, or a non-empty list of
// objects, each with a message, its locations (when it has them) lines
// and columns, and its path (when it has one) leading through data
// (when not null) to a null.
func checkErrors(list, data any) error {
	if list == nil {
		return nil
	}
	entries, ok := list.([]any)
	if !ok || len(entries) == 0 {
		return fmt.Errorf("errors is %s, want a non-empty list", jsonKind(list))
	}
	for i, entry := range entries {
		e, ok := entry.(map[string]any)
		if !ok {
			return fmt.Errorf("errors[%d] is %s, want an object", i, jsonKind(entry))
		}
		if m, ok := e["message"].(string); !ok || m == "" {
			return fmt.Errorf("errors[%d] has no message", i)
		}
		if err := checkLocations(e["locations"]); err != nil {
			return fmt.Errorf("errors[%d]: %w", i, err)
		}
		if path, has := e["path"]; has {
			if err := checkErrorPath(path, data); err != nil {
				return fmt.Errorf("errors[%d] (%s): %w", i, e["message"], err)
			}
		}
	}
	return nil
}

// checkLocations checks an error's locations: absent, or a list of
// {line, column}, both numbers.
func checkLocations(locations any) error {
	if locations == nil {
		return nil
	}
	list, ok := locations.([]any)
	if !ok {
		return fmt.Errorf("locations is %s, want a list", jsonKind(locations))
	}
	for _, l := range list {
		loc, ok := l.(map[string]any)
		if !ok {
			return fmt.Errorf("a location is %s, want an object", jsonKind(l))
		}
		for _, key := range []string{"line", "column"} {
			if _, ok := loc[key].(json.Number); !ok {
				return fmt.Errorf("a location's %s is %s, want a number", key, jsonKind(loc[key]))
			}
		}
	}
	return nil
}

// checkErrorPath checks a field error's path: a list of response keys
// and list indexes that leads through data to a null, the field's own or
// an ancestor's (a non-null field's null makes its parent null). A null
// data holds every path.
func checkErrorPath(path, data any) error {
	steps, ok := path.([]any)
	if !ok || len(steps) == 0 {
		return fmt.Errorf("path is %s, want a non-empty list", jsonKind(path))
	}
	at := data
	for i, step := range steps {
		if at == nil {
			return nil
		}
		where := pathString(steps[:i+1])
		switch s := step.(type) {
		case string:
			obj, ok := at.(map[string]any)
			if !ok {
				return fmt.Errorf("path %s: data holds %s there, not an object", where, jsonKind(at))
			}
			if at, ok = obj[s]; !ok {
				return fmt.Errorf("path %s: data has no such key", where)
			}
		case json.Number:
			list, ok := at.([]any)
			n, err := s.Int64()
			if !ok || err != nil || n < 0 || n >= int64(len(list)) {
				return fmt.Errorf("path %s: data has no such list item", where)
			}
			at = list[n]
		default:
			return fmt.Errorf("path %s: a step is %s, want a key or an index", where, jsonKind(step))
		}
	}
	if at != nil {
		return fmt.Errorf("path %s: a field error must leave null there, data holds %s", pathString(steps), jsonKind(at))
	}
	return nil
}

// pathString writes a response path as data.a.b[0].c.
func pathString(steps []any) string {
	var b strings.Builder
	b.WriteString("data")
	for _, s := range steps {
		if n, ok := s.(json.Number); ok {
			fmt.Fprintf(&b, "[%s]", n)
			continue
		}
		fmt.Fprintf(&b, ".%v", s)
	}
	return b.String()
}

// jsonKind names the JSON kind of a decoded value, for mismatches.
func jsonKind(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	case string:
		return fmt.Sprintf("the string %q", shortValue(v))
	case json.Number:
		return "the number " + v.String()
	case bool:
		return fmt.Sprintf("the boolean %t", v)
	default:
		return fmt.Sprintf("%T", v)
	}
}

// shortValue keeps a string value readable in a mismatch.
func shortValue(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}
