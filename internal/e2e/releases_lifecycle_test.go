package e2e_test

import (
	"encoding/json"
	"io/fs"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/webhooks"
)

// describeRelease names a release delivery "release ACTION TAG".
func describeRelease(d apptest.Delivery) string {
	if d.Event != "release" {
		return ""
	}
	var p struct {
		Action  string `json:"action"`
		Release struct {
			TagName string `json:"tag_name"`
		} `json:"release"`
	}
	_ = json.Unmarshal(d.Body, &p)
	return "release " + p.Action + " " + p.Release.TagName
}

// TestReleaseLifecycle runs a project's releases as semantic-release and
// release-please do: published releases with their tags made at once, a
// prerelease, make_latest true/false/legacy deciding the latest, edits,
// generated notes listing the pull request merged since the previous
// release, listing with pages, deletion; each change's release event.
// Repository deletion removes the assets' bytes.
func TestReleaseLifecycle(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	ctx := apptest.Ctx()
	octo, dir, token := releaseProject(t, env)
	remote := env.GitURL("octo", "hello", "octo", token)
	c := env.Client(token)
	rc := apptest.NewReceiver(t, "s")
	_, _, err := c.Repositories.CreateHook(ctx, "octo", "hello", &github.Hook{Events: []string{"release"},
		Config: &github.HookConfig{URL: github.Ptr(rc.URL), ContentType: github.Ptr("json"), Secret: github.Ptr("s")}})
	apptest.Must(t, "hook", err)
	create := func(t *testing.T, req github.CreateReleaseRequest) *github.RepositoryRelease {
		t.Helper()
		rel, resp, err := c.Repositories.CreateRelease(ctx, "octo", "hello", req)
		apptest.Must(t, "create "+req.TagName, err)
		if resp.StatusCode != http.StatusCreated || resp.Header.Get("Location") != rel.GetURL() {
			t.Fatalf("created %d %s", resp.StatusCode, resp.Header.Get("Location"))
		}
		return rel
	}
	latestIs := func(t *testing.T, tag string) {
		t.Helper()
		l, _, err := c.Repositories.GetLatestRelease(ctx, "octo", "hello")
		apptest.Must(t, "latest", err)
		if l.GetTagName() != tag {
			t.Fatalf("latest is %s, want %s", l.GetTagName(), tag)
		}
	}
	var v1, v11, v2 *github.RepositoryRelease

	apptest.Step(t, "published releases and a prerelease", func(t *testing.T) {
		v1 = create(t, github.CreateReleaseRequest{TagName: "v1.0.0", Name: github.Ptr("One")})
		v11 = create(t, github.CreateReleaseRequest{TagName: "v1.1.0-rc.1", Prerelease: github.Ptr(true)})
		if v1.PublishedAt == nil || v1.GetTarballURL() == "" || !v11.GetPrerelease() {
			t.Fatalf("v1 %+v, v1.1 %+v", v1, v11)
		}
		latestIs(t, "v1.0.0")
		team := create(t, github.CreateReleaseRequest{TagName: "team/v1", Prerelease: github.Ptr(true)})
		got, _, err := c.Repositories.GetReleaseByTag(ctx, "octo", "hello", "team/v1")
		apptest.Must(t, "a tag with a slash", err)
		if got.GetID() != team.GetID() {
			t.Fatalf("release of team/v1: %d, want %d", got.GetID(), team.GetID())
		}
		_, err = c.Repositories.DeleteRelease(ctx, "octo", "hello", team.GetID())
		apptest.Must(t, "delete team/v1", err)
		out := apptest.Git(t, dir, "ls-remote", "--tags", remote)
		if !strings.Contains(out, "refs/tags/v1.0.0") || !strings.Contains(out, "refs/tags/v1.1.0-rc.1") {
			t.Fatalf("tags: %s", out)
		}
		rc.WaitFor(t, describeRelease, "release created v1.0.0", "release published v1.0.0", "release released v1.0.0",
			"release created v1.1.0-rc.1", "release published v1.1.0-rc.1", "release prereleased v1.1.0-rc.1")
	})
	apptest.Step(t, "make_latest", func(t *testing.T) {
		v2 = create(t, github.CreateReleaseRequest{TagName: "v2.0.0", MakeLatest: github.Ptr("false")})
		latestIs(t, "v1.0.0")
		_, _, err := c.Repositories.UpdateRelease(ctx, "octo", "hello", v2.GetID(), github.UpdateReleaseRequest{MakeLatest: github.Ptr("true")})
		apptest.Must(t, "make v2 latest", err)
		latestIs(t, "v2.0.0")
		_, _, err = c.Repositories.UpdateRelease(ctx, "octo", "hello", v1.GetID(), github.UpdateReleaseRequest{MakeLatest: github.Ptr("true")})
		apptest.Must(t, "make v1 latest", err)
		latestIs(t, "v1.0.0")
		_, _, err = c.Repositories.UpdateRelease(ctx, "octo", "hello", v1.GetID(), github.UpdateReleaseRequest{MakeLatest: github.Ptr("legacy")})
		apptest.Must(t, "legacy", err)
		latestIs(t, "v2.0.0") // the newest created
	})
	apptest.Step(t, "edited", func(t *testing.T) {
		rel, _, err := c.Repositories.UpdateRelease(ctx, "octo", "hello", v1.GetID(), github.UpdateReleaseRequest{Name: github.Ptr("Uno"), Body: github.Ptr("Notes")})
		apptest.Must(t, "edit", err)
		if rel.GetName() != "Uno" || rel.GetBody() != "Notes" {
			t.Fatalf("edited %+v", rel)
		}
		// v2 and v1 were made the latest explicitly, then v1 renamed.
		rc.WaitFor(t, describeRelease, "release edited v2.0.0", "release edited v1.0.0", "release edited v1.0.0")
		var renamed, madeLatest bool
		for _, d := range rc.Deliveries() {
			if describeRelease(d) == "release edited v1.0.0" {
				renamed = renamed || strings.Contains(string(d.Body), `"changes":{"body":{"from":""},"name":{"from":"One"}}`)
				madeLatest = madeLatest || strings.Contains(string(d.Body), `"changes":{"make_latest":{"to":true}}`)
			}
		}
		if !renamed || !madeLatest {
			t.Errorf("edited changes: renamed %v, made latest %v", renamed, madeLatest)
		}
	})
	apptest.Step(t, "bad requests", func(t *testing.T) {
		for _, tc := range []struct{ body, field string }{
			{`{"name":"x"}`, "tag_name"},
			{`{"tag_name":"a..b"}`, "tag_name"},
			{`{"tag_name":"v1.0.0"}`, "tag_name"},
			{`{"tag_name":"v9","target_commitish":"nope"}`, "target_commitish"},
			{`{"tag_name":"v9","make_latest":"maybe"}`, "make_latest"},
		} {
			resp, body := env.DoJSON("POST", "/repos/octo/hello/releases", token, tc.body)
			if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(string(body), `"field":"`+tc.field+`"`) {
				t.Errorf("%s: %d %s", tc.body, resp.StatusCode, body)
			}
		}
	})
	apptest.Step(t, "generated notes list the merged pull request", func(t *testing.T) {
		apptest.Git(t, dir, "checkout", "-q", "-b", "feature")
		apptest.Commit(t, dir, "Add the parser", map[string]string{"parser.go": "package main\n"})
		apptest.Git(t, dir, "push", "-q", remote, "feature")
		pr, _, err := c.PullRequests.Create(ctx, "octo", "hello", github.CreatePullRequest{Title: github.Ptr("Add the parser"), Head: "feature", Base: "main"})
		apptest.Must(t, "open", err)
		_, _, err = c.PullRequests.Merge(ctx, "octo", "hello", pr.GetNumber(), "", nil)
		apptest.Must(t, "merge", err)
		notes, _, err := c.Repositories.GenerateReleaseNotes(ctx, "octo", "hello", github.GenerateNotesRequest{TagName: "v2.1.0"})
		apptest.Must(t, "generate notes", err)
		web := env.URL + "/octo/hello"
		want := "## What's Changed\n* Add the parser by @octo in " + web + "/pull/" + itoa(int64(pr.GetNumber())) +
			"\n\n\n**Full Changelog**: " + web + "/compare/v2.0.0...v2.1.0"
		if notes.Name != "v2.1.0" || notes.Body != want {
			t.Fatalf("notes %q\n%s\nwant\n%s", notes.Name, notes.Body, want)
		}
		rel := create(t, github.CreateReleaseRequest{TagName: "v2.1.0", GenerateReleaseNotes: github.Ptr(true)})
		if rel.GetName() != "v2.1.0" || rel.GetBody() != want {
			t.Fatalf("generated on create: %q %q", rel.GetName(), rel.GetBody())
		}
	})
	apptest.Step(t, "listed in pages, newest first", func(t *testing.T) {
		list, resp, err := c.Repositories.ListReleases(ctx, "octo", "hello", &github.ListOptions{PerPage: 2})
		apptest.Must(t, "list", err)
		if len(list) != 2 || list[0].GetTagName() != "v2.1.0" || resp.NextPage != 2 {
			t.Fatalf("page 1: %d releases, next %d", len(list), resp.NextPage)
		}
	})
	apptest.Step(t, "GraphQL", func(t *testing.T) {
		q := `{"query":"{ repository(owner: \"octo\", name: \"hello\") { latestRelease { tagName isLatest } ` +
			`release(tagName: \"v1.0.0\") { databaseId name isDraft isLatest } ` +
			`releases(first: 2) { totalCount nodes { tagName isPrerelease isLatest author { login } } } } ` +
			`node(id: \"` + v11.GetNodeID() + `\") { ... on Release { tagName isPrerelease } } }"}`
		resp, body := env.DoJSON("POST", "/api/graphql", token, q)
		want := `{"data":{"repository":{"latestRelease":{"tagName":"v2.1.0","isLatest":true},` +
			`"release":{"databaseId":` + itoa(v1.GetID()) + `,"name":"Uno","isDraft":false,"isLatest":false},` +
			`"releases":{"totalCount":4,"nodes":[{"tagName":"v2.1.0","isPrerelease":false,"isLatest":true,"author":{"login":"octo"}},` +
			`{"tagName":"v2.0.0","isPrerelease":false,"isLatest":false,"author":{"login":"octo"}}]}},` +
			`"node":{"tagName":"v1.1.0-rc.1","isPrerelease":true}}}`
		if resp.StatusCode != http.StatusOK || strings.TrimSpace(string(body)) != want {
			t.Fatalf("GraphQL: %d\n%s\nwant\n%s", resp.StatusCode, body, want)
		}
	})
	apptest.Step(t, "deleted", func(t *testing.T) {
		_, err := c.Repositories.DeleteRelease(ctx, "octo", "hello", v11.GetID())
		apptest.Must(t, "delete", err)
		if _, resp, _ := c.Repositories.GetRelease(ctx, "octo", "hello", v11.GetID()); resp == nil || resp.StatusCode != http.StatusNotFound {
			t.Fatalf("the deleted release is still there")
		}
		rc.WaitFor(t, describeRelease, "release deleted v1.1.0-rc.1")
	})
	apptest.Step(t, "repository deletion removes the assets' bytes", func(t *testing.T) {
		_, _, err := c.Repositories.UploadReleaseAssetFromRelease(ctx, v2, &github.UploadOptions{Name: "a.bin"}, strings.NewReader("bytes"), 5)
		apptest.Must(t, "upload", err)
		if n := assetFiles(t, env); n != 1 {
			t.Fatalf("%d asset files before, want 1", n)
		}
		_, err = env.Client(env.Token(env.User("octo2"), "repo")).Repositories.Delete(ctx, "octo", "hello")
		if err == nil {
			t.Fatalf("a stranger deleted the repository")
		}
		_, err = env.Client(env.Token(octo, "delete_repo")).Repositories.Delete(ctx, "octo", "hello")
		apptest.Must(t, "delete the repository", err)
		if n := assetFiles(t, env); n != 0 {
			t.Fatalf("%d asset files after the repository's deletion", n)
		}
	})
}

// assetFiles counts the files of the local blob store's release assets.
func assetFiles(t *testing.T, env *apptest.Env) int {
	t.Helper()
	n := 0
	root := filepath.Join(env.DataDir, "blobs", "release-assets")
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		return nil
	})
	return n
}
