package repos_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// TestSearchRepositories searches repositories through go-github as
// `gh search repos` does: words in the name, description and topics,
// owner, topic, stars and fork qualifiers, sorts; a private repository
// counts only for those who can read it; the text-match media type's
// fragments of name and description; unreadable values are a 422.
func TestSearchRepositories(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo")
	stranger := env.User("stranger")
	org := env.Org("acme", octo)
	env.Repo(octo, "hello-world", apptest.RepoOpts{Description: "My first repository"})
	env.Repo(octo, "rest-kit", apptest.RepoOpts{Description: "HTTP helpers"})
	env.Repo(org, "secret-hello", apptest.RepoOpts{Private: true, Description: "internal"})
	tools := env.Repo(org, "tools")
	env.Repo(stranger, "hello-fork", apptest.RepoOpts{ForkOf: tools})
	octoC := env.Client(env.Token(octo, "repo"))
	strangerC := env.Client(env.Token(stranger, "repo"))
	_, _, err := octoC.Repositories.ReplaceAllTopics(ctx, "octo", "rest-kit", []string{"api", "http"})
	apptest.Must(t, "topics", err)
	_, err = strangerC.Activity.Star(ctx, "octo", "rest-kit")
	apptest.Must(t, "star", err)

	names := func(t *testing.T, c *github.Client, q string, opts *github.SearchOptions) string {
		t.Helper()
		res, _, err := c.Search.Repositories(ctx, q, opts)
		apptest.Must(t, "search "+q, err)
		var out []string
		for _, r := range res.Repositories {
			out = append(out, r.GetFullName())
		}
		if res.GetTotal() != len(out) || res.GetIncompleteResults() {
			t.Fatalf("%s: total %d for %d", q, res.GetTotal(), len(out))
		}
		return strings.Join(out, "|")
	}
	byName := &github.SearchOptions{Sort: "updated", Order: "asc"}
	for _, tc := range []struct {
		q         string
		octo, not string // what octo finds, what the stranger finds
	}{
		{"hello", "octo/hello-world|acme/secret-hello", "octo/hello-world"},
		{"hello fork:true", "octo/hello-world|acme/secret-hello|stranger/hello-fork", "octo/hello-world|stranger/hello-fork"},
		{"fork:only", "stranger/hello-fork", "stranger/hello-fork"},
		{"user:octo", "octo/hello-world|octo/rest-kit", "octo/hello-world|octo/rest-kit"},
		{"org:acme", "acme/secret-hello|acme/tools", "acme/tools"},
		{"is:private", "acme/secret-hello", ""},
		{"topic:api", "octo/rest-kit", "octo/rest-kit"},
		{"api in:name", "", ""},
		{"helpers in:description", "octo/rest-kit", "octo/rest-kit"},
		{"stars:>=1", "octo/rest-kit", "octo/rest-kit"},
		{"topics:2", "octo/rest-kit", "octo/rest-kit"},
		{"repo:acme/tools", "acme/tools", "acme/tools"},
		{"hello -user:octo", "acme/secret-hello", ""},
		{"language:go", "", ""},
	} {
		if got := names(t, octoC, tc.q, byName); got != tc.octo {
			t.Errorf("octo %q: %s, want %s", tc.q, got, tc.octo)
		}
		if got := names(t, strangerC, tc.q, byName); got != tc.not {
			t.Errorf("stranger %q: %s, want %s", tc.q, got, tc.not)
		}
	}
	if got := names(t, octoC, "user:octo", &github.SearchOptions{Sort: "stars"}); got != "octo/rest-kit|octo/hello-world" {
		t.Errorf("by stars: %s", got)
	}
	res, _, err := octoC.Search.Repositories(ctx, "rest-kit", nil)
	apptest.Must(t, "search", err)
	if r := res.Repositories[0]; !r.GetPermissions().GetAdmin() || len(r.Topics) != 2 || r.GetStargazersCount() != 1 {
		t.Errorf("item = %+v", r)
	}
	res, _, err = octoC.Search.Repositories(ctx, "helpers", &github.SearchOptions{TextMatch: true})
	apptest.Must(t, "search with text matches", err)
	if len(res.Repositories) != 1 || len(res.Repositories[0].TextMatches) != 1 {
		t.Fatalf("text-match search: %+v", res.Repositories)
	}
	if m := res.Repositories[0].TextMatches[0]; m.GetProperty() != "description" || m.GetFragment() != "HTTP helpers" ||
		m.GetObjectType() != "Repository" || m.GetObjectURL() != env.URL+"/repos/octo/rest-kit" ||
		len(m.Matches) != 1 || m.Matches[0].GetText() != "helpers" || !slices.Equal(m.Matches[0].Indices, []int{5, 12}) {
		t.Errorf("text match %+v", m)
	}
	if res, _, err := octoC.Search.Repositories(ctx, "helpers", nil); err != nil || res.Repositories[0].TextMatches != nil {
		t.Errorf("text matches without the media type: %v", err)
	}
	for _, q := range []string{"", "is:secret", "stars:%3Emany", "repo:noslash", "hello&sort=size", "hello&order=up"} {
		resp, body := env.Do("GET", "/search/repositories?q="+q, "", nil)
		if resp.StatusCode != http.StatusUnprocessableEntity {
			t.Errorf("q=%s: %d %s", q, resp.StatusCode, body)
		}
	}
}

// TestSearchTopics finds the topics repositories carry, the most carried
// first; a private repository's topics count only for its readers.
func TestSearchTopics(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo, eve := env.User("octo"), env.User("eve")
	env.Repo(octo, "a")
	env.Repo(octo, "b")
	env.Repo(octo, "c", apptest.RepoOpts{Private: true})
	c := env.Client(env.Token(octo, "repo"))
	for name, topics := range map[string][]string{"a": {"go", "rest-api"}, "b": {"go", "graphql-api"}, "c": {"go", "secret-api"}} {
		_, _, err := c.Repositories.ReplaceAllTopics(ctx, "octo", name, topics)
		apptest.Must(t, "topics", err)
	}
	// go-github's TopicResult has no repository_count: read the JSON.
	found := func(token, q string) string {
		t.Helper()
		resp, body := env.Do("GET", "/search/topics?q="+url.QueryEscape(q), token, nil)
		var res struct {
			Total int `json:"total_count"`
			Items []struct {
				Name  string `json:"name"`
				Count int    `json:"repository_count"`
			} `json:"items"`
		}
		if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &res) != nil || res.Total != len(res.Items) {
			t.Fatalf("search %q: %d %s", q, resp.StatusCode, body)
		}
		var out []string
		for _, tp := range res.Items {
			out = append(out, tp.Name+":"+strconv.Itoa(tp.Count))
		}
		return strings.Join(out, "|")
	}
	octoToken, eveToken := env.Token(octo, "repo"), env.Token(eve, "repo")
	res, _, err := c.Search.Topics(ctx, "rest", nil) // what go-github reads of it
	if err != nil || res.GetTotal() != 1 || res.Topics[0].GetName() != "rest-api" || res.Topics[0].GetCurated() {
		t.Fatalf("go-github: %+v, %v", res, err)
	}
	for _, tc := range []struct{ q, octo, eve string }{
		{"api", "graphql-api:1|rest-api:1|secret-api:1", "graphql-api:1|rest-api:1"},
		{"go", "go:3", "go:2"},
		{"rest api", "rest-api:1", "rest-api:1"},
		{"go is:featured", "", ""},
	} {
		if got := found(octoToken, tc.q); got != tc.octo {
			t.Errorf("octo %q: %s, want %s", tc.q, got, tc.octo)
		}
		if got := found(eveToken, tc.q); got != tc.eve {
			t.Errorf("eve %q: %s, want %s", tc.q, got, tc.eve)
		}
	}
}
