package graphql_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"testing"

	"forgeapi/internal/apptest"
)

// docsQuery is the platform documentation's example of a query's cost:
// 1 request for the repositories, 100 for their issues, 5,000 for the
// issues' labels: 5,101 requests, 51 points; 305,100 nodes.
const docsQuery = `query($n: Int = 60) {
  viewer { repositories(first: 100) { nodes { issues(first: 50) { nodes { ...labels } } } } }
  rateLimit { cost nodeCount limit remaining used resetAt }
}
fragment labels on Issue { labels(first: $n) { nodes { name } } }`

// TestQueryCost: a query spends the points the platform's rules count
// from its connections' page sizes, from a GraphQL budget that is not
// the REST one, shown in rateLimit, the headers and GET /rate_limit.
func TestQueryCost(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithRateLimit())
	octo := env.User("octo")
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo")

	body, _ := json.Marshal(map[string]any{"query": docsQuery})
	resp, out := env.DoJSON("POST", "/api/graphql", token, string(body))
	var r struct {
		Data struct {
			RateLimit struct{ Cost, NodeCount, Limit, Remaining, Used int }
		}
		Errors []any
	}
	if err := json.Unmarshal(out, &r); err != nil || len(r.Errors) > 0 {
		t.Fatalf("%d %s", resp.StatusCode, out)
	}
	if rl := r.Data.RateLimit; rl.Cost != 51 || rl.NodeCount != 305_100 || rl.Limit != 5000 || rl.Used != 51 || rl.Remaining != 4949 {
		t.Fatalf("rateLimit %+v, want cost 51 of 5000 and 305,100 nodes", rl)
	}
	if h := resp.Header; h.Get("X-RateLimit-Resource") != "graphql" || h.Get("X-RateLimit-Used") != "51" || h.Get("X-RateLimit-Remaining") != "4949" {
		t.Fatalf("headers: resource %q used %q remaining %q", h.Get("X-RateLimit-Resource"), h.Get("X-RateLimit-Used"), h.Get("X-RateLimit-Remaining"))
	}
	resp, out = env.DoJSON("GET", "/rate_limit", token, "")
	var status struct {
		Resources map[string]struct{ Limit, Used, Remaining int }
	}
	if err := json.Unmarshal(out, &status); err != nil {
		t.Fatal(err)
	}
	if g, c := status.Resources["graphql"], status.Resources["core"]; g.Used != 51 || g.Limit != 5000 || c.Used != 0 {
		t.Fatalf("GET /rate_limit: graphql %+v, core %+v (%d)", g, c, resp.StatusCode)
	}
}

// TestQueryLimits: a connection without first or last, one asking for
// more than 100, and a query reaching more than 500,000 nodes are refused
// with the platform's types and messages before anything runs.
func TestQueryLimits(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octo := env.User("octo")
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo")
	for _, c := range []struct{ query, typ, msg string }{
		{`{ viewer { repositories { totalCount nodes { name } } } }`, "MISSING_PAGINATION_BOUNDARIES",
			"You must provide a `first` or `last` value to properly paginate the `repositories` connection."},
		{`query($n: Int!) { viewer { repositories(last: $n) { totalCount } } }`, "EXCESSIVE_PAGINATION",
			"Requesting 101 records on the `repositories` connection exceeds the `last` limit of 100 records."},
		{`{ viewer { repositories(first: 100) { nodes { issues(first: 100) { nodes { labels(first: 100) { totalCount } } } } } } }`, "MAX_NODE_LIMIT_EXCEEDED",
			"By the time this query traverses to the labels connection, it is requesting up to 1,010,100 possible nodes which exceeds the maximum limit of 500,000."},
	} {
		r := post(t, env, token, c.query, map[string]any{"n": 101})
		if len(r.Errors) != 1 || r.Errors[0].Type != c.typ || r.Errors[0].Message != c.msg || r.Data != nil {
			t.Errorf("%s:\n got %+v (data %v)\nwant %s %q", c.query, r.Errors, r.Data, c.typ, c.msg)
		}
	}
	// Without first or last a connection answers its count.
	if r := post(t, env, token, `{ viewer { repositories { totalCount } } }`, nil); len(r.Errors) != 0 || string(r.Data["viewer"]) != `{"repositories":{"totalCount":1}}` {
		t.Errorf("repositories { totalCount }: %+v %s", r.Errors, r.Data["viewer"])
	}
	// An invalid query is refused for what makes it invalid first.
	r := post(t, env, token, `{ viewer { repositories { nope } } }`, nil)
	if len(r.Errors) != 1 || r.Errors[0].Type != "" {
		t.Errorf("invalid query: %+v", r.Errors)
	}
}

// TestGraphQLBudgetSpent: once the points are spent, a query is refused
// as the platform refuses it (200, RATE_LIMITED), REST still answers,
// and a query that costs more than what is left spends nothing.
func TestGraphQLBudgetSpent(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithRateLimit())
	octo := env.User("octo")
	token := env.Token(octo, "repo")
	body, _ := json.Marshal(map[string]any{"query": docsQuery})
	used := 0
	for used+51 <= 5000 {
		resp, out := env.DoJSON("POST", "/api/graphql", token, string(body))
		if resp.StatusCode != http.StatusOK || resp.Header.Get("X-RateLimit-Used") != strconv.Itoa(used+51) {
			t.Fatalf("query at %d used: %d %s (used %s)", used, resp.StatusCode, out, resp.Header.Get("X-RateLimit-Used"))
		}
		used += 51
	}
	// 4,998 used: the 51 points are not there, one-point queries are.
	r := post(t, env, token, docsQuery, nil)
	want := "API rate limit exceeded for user ID " + strconv.FormatInt(octo.ID, 10) + "."
	if len(r.Errors) != 1 || r.Errors[0].Type != "RATE_LIMITED" || r.Errors[0].Message != want || r.Data != nil {
		t.Fatalf("over budget: %+v", r.Errors)
	}
	for range 2 {
		if r := post(t, env, token, `{ viewer { login } }`, nil); len(r.Errors) != 0 {
			t.Fatalf("one-point query with points left: %+v", r.Errors)
		}
	}
	if r := post(t, env, token, `{ viewer { login } }`, nil); len(r.Errors) != 1 || r.Errors[0].Type != "RATE_LIMITED" {
		t.Fatalf("spent budget: %+v", r.Errors)
	}
	if resp, out := env.DoJSON("GET", "/user", token, ""); resp.StatusCode != http.StatusOK {
		t.Fatalf("REST after the GraphQL budget: %d %s", resp.StatusCode, out)
	}
}
