package apptest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
)

// graphQLValidatorForTest returns the shared validator with the GraphQL
// schema; the test is skipped without it, except in CI, which installs
// it.
func graphQLValidatorForTest(t *testing.T) *Validator {
	t.Helper()
	v := validatorForTest(t)
	if v.graphQL == nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI runs without the GraphQL schema (%s unset, testdata/node not installed)", GraphQLSchemaEnv)
		}
		t.Skip("the platform's GraphQL schema is not installed (npm ci in testdata/node)")
	}
	return v
}

// checkGraphQLExchange validates a POST /api/graphql of the query with
// the variables answered with status and body.
func checkGraphQLExchange(t *testing.T, v *Validator, query string, vars map[string]any, status int, body string) error {
	t.Helper()
	request, err := json.Marshal(graphQLRequest{Query: query, Variables: vars})
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest("POST", "http://127.0.0.1:1/api/graphql", strings.NewReader(string(request)))
	if err != nil {
		t.Fatal(err)
	}
	return v.Check(req, status, http.Header{"Content-Type": {"application/json; charset=utf-8"}}, []byte(body))
}

// repositoryQuery selects fields of most kinds: scalars of the platform
// (DateTime, URI, GitObjectID), an enum, an alias, a fragment, an
// interface without __typename (author, target) and with it (node), a
// list, and a connection that @include keeps or drops.
const repositoryQuery = `query Repo($owner: String!, $withIssues: Boolean!) {
  viewer { login createdAt }
  repository(owner: $owner, name: "hello") {
    full: nameWithOwner
    visibility
    defaultBranchRef { target { oid } }
    issues(first: 2) @include(if: $withIssues) {
      totalCount
      nodes { title state author { login ... on User { name } } }
    }
    ...Popularity
  }
  node(id: "I_1") { __typename ... on Issue { number } }
}
fragment Popularity on Repository { url stargazerCount }`

// goodRepository is a response to repositoryQuery with withIssues true.
const goodRepository = `{"data":{
  "viewer":{"login":"octo","createdAt":"2024-01-02T03:04:05Z"},
  "repository":{
    "full":"octo/hello","visibility":"PUBLIC",
    "defaultBranchRef":{"target":{"oid":"0123456789abcdef0123456789abcdef01234567"}},
    "issues":{"totalCount":2,"nodes":[
      {"title":"a","state":"OPEN","author":{"login":"octo","name":"Octo Cat"}},
      {"title":"b","state":"CLOSED","author":{"login":"ci[bot]"}}]},
    "url":"https://forge.example/octo/hello","stargazerCount":3},
  "node":{"__typename":"Issue","number":1}}}`

// TestGraphQLValidatorCatchesMismatches: a response that fits the query on
// the platform's schema passes; a wrong enum value, a null in a
// non-null, a missing or unselected key, a malformed DateTime or object
// id, a list that is not one, an error without a message or whose path
// holds a value, and data for a query the schema refuses are caught.
func TestGraphQLValidatorCatchesMismatches(t *testing.T) {
	v := graphQLValidatorForTest(t)
	vars := map[string]any{"owner": "octo", "withIssues": true}
	validated, _ := v.Counts()
	graphQL := v.GraphQLCount()
	if err := checkGraphQLExchange(t, v, repositoryQuery, vars, 200, goodRepository); err != nil {
		t.Fatalf("a good response: %v", err)
	}
	if after, _ := v.Counts(); after != validated+1 || v.GraphQLCount() != graphQL+1 {
		t.Errorf("counts: validated %d, GraphQL %d; want %d, %d", after, v.GraphQLCount(), validated+1, graphQL+1)
	}
	for name, c := range map[string]struct {
		vars map[string]any
		body string
	}{
		"@include false drops the key": {map[string]any{"owner": "octo", "withIssues": false},
			strings.Replace(goodRepository, `"issues":{"totalCount":2,"nodes":[
      {"title":"a","state":"OPEN","author":{"login":"octo","name":"Octo Cat"}},
      {"title":"b","state":"CLOSED","author":{"login":"ci[bot]"}}]},`, "", 1)},
		"a field error leaves null": {vars, `{"data":{"viewer":{"login":"octo","createdAt":"2024-01-02T03:04:05Z"},"repository":null,"node":null},
			"errors":[{"type":"NOT_FOUND","path":["repository"],"locations":[{"line":3,"column":3}],"message":"Could not resolve to a Repository with the name 'octo/hello'."}]}`},
		"a non-null field's error nulls its parent": {vars, `{"data":{"viewer":{"login":"octo","createdAt":"2024-01-02T03:04:05Z"},"repository":null,"node":null},
			"errors":[{"type":"FORBIDDEN","path":["repository","visibility"],"message":"Resource not accessible"}]}`},
		"null data after a non-null root field's error": {vars, `{"data":null,"errors":[{"path":["viewer","login"],"message":"Something went wrong"}]}`},
	} {
		if err := checkGraphQLExchange(t, v, repositoryQuery, c.vars, 200, c.body); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	for name, c := range map[string]struct {
		old, new, want string
	}{
		"wrong enum value":        {`"PUBLIC"`, `"SECRET"`, "data.repository.visibility: the string \"SECRET\" is not a value of the enum RepositoryVisibility"},
		"null in a non-null":      {`"stargazerCount":3`, `"stargazerCount":null`, "data.repository.stargazerCount: null, but the type Int! is non-null"},
		"a string for an Int":     {`"stargazerCount":3`, `"stargazerCount":"3"`, "data.repository.stargazerCount: the string \"3\", want a 32-bit integer (Int)"},
		"missing selected key":    {`"full":"octo/hello",`, ``, "data.repository.full: missing"},
		"unselected key":          {`"visibility":"PUBLIC"`, `"visibility":"PUBLIC","description":"hi"`, "data.repository.description: the query does not select it on Repository"},
		"the field, not alias":    {`"full":`, `"nameWithOwner":`, "data.repository.full: missing"},
		"bad DateTime":            {`"2024-01-02T03:04:05Z"`, `"2024-01-02 03:04:05"`, "data.viewer.createdAt: the string \"2024-01-02 03:04:05\", want an RFC 3339 timestamp in UTC (DateTime)"},
		"DateTime not in UTC":     {`"2024-01-02T03:04:05Z"`, `"2024-01-02T03:04:05+02:00"`, "want an RFC 3339 timestamp in UTC (DateTime)"},
		"short object id":         {`"0123456789abcdef0123456789abcdef01234567"`, `"0123456"`, "data.repository.defaultBranchRef.target: fits no object type of GitObject"},
		"a URI that is no URI":    {`"https://forge.example/octo/hello"`, `"octo/hello"`, "want an absolute URI or an absolute path (URI)"},
		"an object for a list":    {`"nodes":[`, `"nodes":{},"more":[`, "data.repository.issues.nodes: an object, want a list ([Issue])"},
		"a key on no type":        {`"name":"Octo Cat"`, `"name":"Octo Cat","email":"o@x"`, "data.repository.issues.nodes[0].author: fits no object type of Actor"},
		"__typename of no type":   {`"__typename":"Issue"`, `"__typename":"Nope"`, "data.node.__typename: \"Nope\" is not an object type of Node"},
		"__typename and fields":   {`"__typename":"Issue","number":1`, `"__typename":"PullRequest","number":1`, "data.node.number: the query does not select it on PullRequest"},
		"a key beside data":       {`{"data":{`, `{"extra":1,"data":{`, `the response has the key "extra"`},
		"errors that are no list": {`{"data":{`, `{"errors":{},"data":{`, "errors is an object, want a non-empty list"},
	} {
		body := strings.Replace(goodRepository, c.old, c.new, 1)
		err := checkGraphQLExchange(t, v, repositoryQuery, vars, 200, body)
		switch {
		case err == nil:
			t.Errorf("%s: accepted", name)
		case !strings.Contains(err.Error(), "does not match the platform's GraphQL schema") || !strings.Contains(err.Error(), c.want):
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
	viewer := `{"viewer":{"login":"octo","createdAt":"2024-01-02T03:04:05Z"},"repository":null,"node":null}`
	for name, c := range map[string]struct {
		query, body, want string
	}{
		"an error without a message": {repositoryQuery, `{"data":` + viewer + `,"errors":[{"path":["repository"]}]}`, "errors[0] has no message"},
		"an error's path on a value": {repositoryQuery, `{"data":` + viewer + `,"errors":[{"message":"m","path":["viewer","login"]}]}`,
			"path data.viewer.login: a field error must leave null there, data holds the string \"octo\""},
		"an error's path off data": {repositoryQuery, `{"data":` + viewer + `,"errors":[{"message":"m","path":["nope"]}]}`, "path data.nope: data has no such key"},
		"neither data nor errors":  {repositoryQuery, `{}`, "neither data nor errors"},
		"data for a refused query": {"{ viewer { nope } }", `{"data":{"viewer":{"nope":1}}}`,
			`the request does not validate against the platform's schema (input:1:12: Cannot query field "nope" on type "User".`},
		"data for an unknown operation": {"query A { viewer { login } } query B { viewer { login } }", `{"data":{"viewer":{"login":"o"}}}`, "the query has no operation"},
	} {
		err := checkGraphQLExchange(t, v, c.query, vars, 200, c.body)
		switch {
		case err == nil:
			t.Errorf("%s: accepted", name)
		case !strings.Contains(err.Error(), c.want):
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}

// TestGraphQLValidatorRequestsAndStatuses: a request the platform's
// schema refuses (a field it lacks, variables missing) passes with errors
// and no data; a status other than 200 passes only as a 4xx with the
// platform's error object; the query is read from a request sent through
// the validating transport, whose body the client consumed.
func TestGraphQLValidatorRequestsAndStatuses(t *testing.T) {
	v := graphQLValidatorForTest(t)
	refused := `{"errors":[{"message":"Field 'nope' doesn't exist on type 'User'","locations":[{"line":1,"column":12}],"extensions":{"code":"undefinedField"}}]}`
	for name, query := range map[string]string{
		"a field the schema lacks": "{ viewer { nope } }",
		"a variable missing":       repositoryQuery,
		"not GraphQL":              "}{",
	} {
		if err := checkGraphQLExchange(t, v, query, nil, 200, refused); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	errorBody := `{"message":"Bad credentials","documentation_url":"https://docs.github.com/graphql"}`
	if err := checkGraphQLExchange(t, v, "{ viewer { login } }", nil, 401, errorBody); err != nil {
		t.Errorf("a 401: %v", err)
	}
	for name, c := range map[string]struct {
		status int
		body   string
	}{
		"a 500":                       {500, `{"message":"Internal Server Error","documentation_url":"https://x"}`},
		"a 401 without an error body": {401, `{"errors":[{"message":"no"}]}`},
		"a 200 that is not JSON":      {200, `<html>`},
	} {
		if err := checkGraphQLExchange(t, v, "{ viewer { login } }", nil, c.status, c.body); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}

	answer := `{"data":{"viewer":{"login":"octo"}}}`
	var seen string
	base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		b, _ := io.ReadAll(req.Body)
		seen = string(b)
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(strings.NewReader(answer)), Request: req}, nil
	})
	rec := &errorRecorder{TB: t}
	tr := &validatingTransport{base: base, v: v, t: rec}
	query := `{"query":"{ viewer { login createdAt } }"}`
	req, err := http.NewRequest("POST", "http://127.0.0.1:1/api/graphql", io.NopCloser(strings.NewReader(query)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.RoundTrip(req); err != nil {
		t.Fatal(err)
	}
	if seen != query || len(rec.errors) != 1 || !strings.Contains(rec.errors[0], "GraphQL: POST /api/graphql -> 200 does not match") ||
		!strings.Contains(rec.errors[0], "data.viewer.createdAt: missing") {
		t.Errorf("through the transport: the server read %q; the test was told %q", seen, rec.errors)
	}
}

// roundTripFunc is a transport of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// errorRecorder is a test that keeps the errors reported to it.
type errorRecorder struct {
	testing.TB
	errors []string
}

func (r *errorRecorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

// TestGraphQLValidatorOverlappingFragments: fragments on different object
// types may select one response name with different enum types, as the
// platform accepts (gh's issue or pull request query): the value must be
// of the type of the object the response has. Fields that differ in name
// under one response name are still refused.
func TestGraphQLValidatorOverlappingFragments(t *testing.T) {
	v := graphQLValidatorForTest(t)
	states := `{ node(id: "x") { ... on Issue { state } ... on PullRequest { state } } }`
	differentFields := `{ viewer { a: login a: name } }`
	for _, c := range []struct {
		query, body string
		ok          bool
	}{
		{states, `{"data":{"node":{"state":"MERGED"}}}`, true},
		{states, `{"data":{"node":{"state":"OPEN"}}}`, true},
		{states, `{"data":{"node":{}}}`, true}, // a node of another type
		{states, `{"data":{"node":{"state":"BOGUS"}}}`, false},
		{states, `{"data":{"node":{"__typename":"Issue","state":"MERGED"}}}`, false}, // __typename not selected
		{differentFields, `{"errors":[{"message":"Fields \"a\" conflict"}]}`, true},
		{differentFields, `{"data":{"viewer":{"a":"octo"}}}`, false},
	} {
		if err := checkGraphQLExchange(t, v, c.query, nil, 200, c.body); (err == nil) != c.ok {
			t.Errorf("%s for %s: %v", c.body, c.query, err)
		}
	}
}
