package graphql_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	"forgeapi/internal/apptest"
)

// octokitGraphQLSummary is what testdata/node/octokit-graphql.mjs prints.
type octokitGraphQLSummary struct {
	Error  string `json:"error"`
	Viewer struct {
		Login      string `json:"login"`
		DatabaseID int64  `json:"databaseId"`
	} `json:"viewer"`
	Repository struct {
		NameWithOwner string `json:"nameWithOwner"`
		Description   string `json:"description"`
		IsPrivate     bool   `json:"isPrivate"`
		URL           string `json:"url"`
	} `json:"repository"`
	Pages      int      `json:"pages"`
	PageSizes  []int    `json:"pageSizes"`
	TotalCount int      `json:"totalCount"`
	Names      []string `json:"names"`
}

// TestOctokitGraphQL runs octokit.js's graphql() (@octokit/graphql and
// @octokit/plugin-paginate-graphql, pinned in testdata/node) against the
// server, through the validating proxy: the viewer, a repository asked
// with variables, and the viewer's five repositories paged two at a time
// by octokit.graphql.paginate, which follows pageInfo's endCursor.
func TestOctokitGraphQL(t *testing.T) {
	t.Parallel()
	dir := apptest.NodeModules(t, "@octokit/plugin-paginate-graphql")
	env := apptest.Start(t)
	octo := env.User("octo")
	for _, name := range []string{"e", "a", "d", "b", "c"} {
		env.Repo(octo, name, apptest.RepoOpts{Description: "repository " + name, Private: name == "d"})
	}
	env.Repo(env.User("bob"), "theirs")
	token := env.Token(octo, "repo")

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "octokit-graphql.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "FORGEAPI_URL="+env.ValidatingProxy()+"/api/v3", "FORGEAPI_TOKEN="+token,
		"OWNER=octo", "REPO=b", "PAGE_SIZE=2")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node octokit-graphql.mjs: %v\n%s", err, out)
	}
	t.Logf("octokit graphql summary: %s", out)
	var s octokitGraphQLSummary
	if err := json.Unmarshal(out, &s); err != nil {
		t.Fatalf("summary %q: %v", out, err)
	}
	if s.Error != "" {
		t.Fatalf("octokit: %s", s.Error)
	}
	if s.Viewer.Login != "octo" || s.Viewer.DatabaseID != octo.ID {
		t.Errorf("viewer: %+v, want octo (%d)", s.Viewer, octo.ID)
	}
	if r := s.Repository; r.NameWithOwner != "octo/b" || r.Description != "repository b" || r.IsPrivate || r.URL == "" {
		t.Errorf("repository: %+v", r)
	}
	if s.Pages != 3 || !slices.Equal(s.PageSizes, []int{2, 2, 1}) {
		t.Errorf("paginate.iterator: %d pages of %v, want 3 of [2 2 1]", s.Pages, s.PageSizes)
	}
	if s.TotalCount != 5 || !slices.Equal(s.Names, []string{"a", "b", "c", "d", "e"}) {
		t.Errorf("paginate: %v of %d, want a..e of 5", s.Names, s.TotalCount)
	}
}
