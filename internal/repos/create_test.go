package repos_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// TestCreateAutoInitWithTemplates: auto_init with gitignore_template and
// license_template makes one root commit, "Initial commit" by the
// creator, holding README.md ("# name" and the description), the
// platform's .gitignore template and the license's text with the year
// and the owner's name filled; the contents API and a git clone see it,
// and the repository object counts its size. Unknown templates are 422s
// and create nothing.
func TestCreateAutoInitWithTemplates(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo")
	token := env.Token(octo, "repo")
	c := env.Client(token)

	repo, _, err := c.Repositories.Create(ctx, "", &github.Repository{Name: github.Ptr("hello"),
		Description: github.Ptr("my first repository"), AutoInit: github.Ptr(true),
		GitignoreTemplate: github.Ptr("Go"), LicenseTemplate: github.Ptr("mit")})
	apptest.Must(t, "create", err)
	if repo.GetDefaultBranch() != "main" || repo.GetSize() <= 0 {
		t.Fatalf("created: default_branch %q size %d, want main and > 0", repo.GetDefaultBranch(), repo.GetSize())
	}

	readme := fileContent(t, c, "octo", "hello", "README.md")
	if readme != "# hello\nmy first repository\n" {
		t.Fatalf("README.md = %q", readme)
	}
	gitignore, _, err := c.Gitignores.Get(ctx, "Go")
	apptest.Must(t, "gitignore template", err)
	if got := fileContent(t, c, "octo", "hello", ".gitignore"); got != gitignore.GetSource() {
		t.Fatalf(".gitignore = %q, want the Go template", got)
	}
	license := fileContent(t, c, "octo", "hello", "LICENSE")
	year := fmt.Sprint(time.Now().Year())
	if !strings.HasPrefix(license, "MIT License\n\nCopyright (c) "+year+" octo\n") || strings.Contains(license, "[") {
		t.Fatalf("LICENSE starts %q", license[:min(len(license), 80)])
	}
	// The license is detected from the initial commit, as from a push.
	got, _, err := c.Repositories.Get(ctx, "octo", "hello")
	apptest.Must(t, "get", err)
	if got.GetLicense().GetSPDXID() != "MIT" {
		t.Fatalf("the created repository's license %+v, want MIT", got.GetLicense())
	}

	clone := filepath.Join(t.TempDir(), "hello")
	apptest.Git(t, t.TempDir(), "clone", "-q", env.GitURL("octo", "hello", "octo", token), clone)
	log := apptest.Git(t, clone, "log", "--format=%s|%an|%P", "main")
	if log != "Initial commit|octo|\n" {
		t.Fatalf("git log = %q, want one root commit by octo", log)
	}
	for _, name := range []string{"README.md", ".gitignore", "LICENSE"} {
		if _, err := os.Stat(filepath.Join(clone, name)); err != nil {
			t.Fatalf("clone lacks %s: %v", name, err)
		}
	}

	for _, bad := range []string{`{"name":"x1","gitignore_template":"NoSuchLanguage"}`, `{"name":"x2","license_template":"no-such-license"}`} {
		resp, body := env.DoJSON("POST", "/user/repos", token, bad)
		apptest.WantError(t, bad, resp, body, http.StatusUnprocessableEntity)
	}
	if _, resp, err := c.Repositories.Get(ctx, "octo", "x1"); apptest.ResponseStatus(resp) != http.StatusNotFound {
		t.Fatalf("refused creation made x1: %v", err)
	}
}

// fileContent reads a file of the default branch through the contents API.
func fileContent(t *testing.T, c *github.Client, owner, repo, path string) string {
	t.Helper()
	f, _, _, err := c.Repositories.GetContents(apptest.Ctx(), owner, repo, path, nil)
	apptest.Must(t, "get "+path, err)
	s, err := f.GetContent()
	apptest.Must(t, "decode "+path, err)
	return s
}

// TestCreateHasDefaultLabels: a new repository, of a user or of an
// organization, lists the platform's nine default labels with their
// colors and descriptions, marked default.
func TestCreateHasDefaultLabels(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo")
	env.Org("acme", octo)
	c := env.Client(env.Token(octo, "repo"))
	_, _, err := c.Repositories.Create(ctx, "", &github.Repository{Name: github.Ptr("mine")})
	apptest.Must(t, "create", err)
	_, _, err = c.Repositories.Create(ctx, "acme", &github.Repository{Name: github.Ptr("theirs")})
	apptest.Must(t, "create in org", err)
	want := "bug d73a4a Something isn't working|documentation 0075ca Improvements or additions to documentation|" +
		"duplicate cfd3d7 This issue or pull request already exists|enhancement a2eeef New feature or request|" +
		"good first issue 7057ff Good for newcomers|help wanted 008672 Extra attention is needed|" +
		"invalid e4e669 This doesn't seem right|question d876e3 Further information is requested|" +
		"wontfix ffffff This will not be worked on"
	for _, full := range []string{"octo/mine", "acme/theirs"} {
		owner, name, _ := strings.Cut(full, "/")
		labels, _, err := c.Issues.ListLabels(ctx, owner, name, nil)
		apptest.Must(t, "labels of "+full, err)
		var got []string
		for _, l := range labels {
			if !l.GetDefault() {
				t.Fatalf("%s: label %q is not default", full, l.GetName())
			}
			got = append(got, l.GetName()+" "+l.GetColor()+" "+l.GetDescription())
		}
		if strings.Join(got, "|") != want {
			t.Fatalf("%s labels:\n%s\nwant\n%s", full, strings.Join(got, "|"), want)
		}
	}
}

// TestTopics: PUT .../topics replaces the topics (lower-cased, duplicates
// dropped), GET and the repository object show them, [] clears them; a
// name with other characters, over 50 characters, or more than 20 names
// are 422s that change nothing.
func TestTopics(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo")
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo")
	c := env.Client(token)

	got, _, err := c.Repositories.ReplaceAllTopics(ctx, "octo", "hello", []string{"Go", "api", "go", "rest-api"})
	apptest.Must(t, "replace topics", err)
	if strings.Join(got, ",") != "go,api,rest-api" {
		t.Fatalf("topics = %q", got)
	}
	listed, _, err := c.Repositories.ListAllTopics(ctx, "octo", "hello", nil)
	apptest.Must(t, "list topics", err)
	repo, _, err := c.Repositories.Get(ctx, "octo", "hello")
	apptest.Must(t, "get", err)
	if strings.Join(listed, ",") != "go,api,rest-api" || strings.Join(repo.Topics, ",") != "go,api,rest-api" {
		t.Fatalf("listed %q, repository object %q", listed, repo.Topics)
	}

	many := make([]string, 21)
	for i := range many {
		many[i] = fmt.Sprintf("t%d", i)
	}
	manyJSON, _ := json.Marshal(map[string]any{"names": many})
	for _, bad := range []string{`{"names":["has space"]}`, `{"names":["-leading"]}`, `{"names":["under_score"]}`,
		`{"names":["` + strings.Repeat("a", 51) + `"]}`, string(manyJSON), `{}`} {
		resp, body := env.DoJSON("PUT", "/repos/octo/hello/topics", token, bad)
		apptest.WantStatus(t, bad, resp, body, http.StatusUnprocessableEntity)
	}
	listed, _, err = c.Repositories.ListAllTopics(ctx, "octo", "hello", nil)
	apptest.Must(t, "list topics", err)
	if strings.Join(listed, ",") != "go,api,rest-api" {
		t.Fatalf("after refusals: %q", listed)
	}
	if _, _, err := c.Repositories.ReplaceAllTopics(ctx, "octo", "hello", []string{strings.Repeat("b", 50)}); err != nil {
		t.Fatalf("a 50-character topic: %v", err)
	}
	got, _, err = c.Repositories.ReplaceAllTopics(ctx, "octo", "hello", []string{})
	apptest.Must(t, "clear topics", err)
	if len(got) != 0 {
		t.Fatalf("cleared: %q", got)
	}
	reader := env.User("reader")
	resp, body := env.DoJSON("PUT", "/repos/octo/hello/topics", env.Token(reader, "repo"), `{"names":["x"]}`)
	if resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusNotFound {
		t.Fatalf("a non-admin's PUT: %d %s", resp.StatusCode, body)
	}
}

// TestGenerateFromTemplate: PATCH is_template makes a template; POST
// .../generate makes a repository whose default branch holds the
// template's files in one root commit by the caller (not the template's
// history), whose template_repository is the template, and whose branches
// were pushed (a PushEvent in its feed); include_all_branches copies every
// branch. A repository that is not a template is a 422.
func TestGenerateFromTemplate(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo")
	env.Org("acme", octo)
	env.Repo(octo, "tmpl")
	token := env.Token(octo, "repo")
	c := env.Client(token)

	work := apptest.WorkTree(t, map[string]string{"README.md": "template\n"})
	apptest.Commit(t, work, "second", map[string]string{"src/main.go": "package main\n"})
	apptest.Git(t, work, "branch", "-M", "main")
	apptest.Git(t, work, "push", "-q", env.GitURL("octo", "tmpl", "octo", token), "main", "main:extra")

	req := github.TemplateRepoRequest{Name: "gen", Description: github.Ptr("generated")}
	_, resp, err := c.Repositories.CreateFromTemplate(ctx, "octo", "tmpl", req)
	if apptest.ResponseStatus(resp) != http.StatusUnprocessableEntity {
		t.Fatalf("generate from a non-template: %v", err)
	}
	tmpl, _, err := c.Repositories.Edit(ctx, "octo", "tmpl", &github.Repository{IsTemplate: github.Ptr(true)})
	apptest.Must(t, "make a template", err)
	if !tmpl.GetIsTemplate() {
		t.Fatal("is_template not set")
	}

	gen, _, err := c.Repositories.CreateFromTemplate(ctx, "octo", "tmpl", req)
	apptest.Must(t, "generate", err)
	if gen.GetTemplateRepository().GetFullName() != "octo/tmpl" || gen.GetDescription() != "generated" ||
		gen.GetDefaultBranch() != "main" || gen.GetIsTemplate() {
		t.Fatalf("generated: template %q description %q default branch %q is_template %v",
			gen.GetTemplateRepository().GetFullName(), gen.GetDescription(), gen.GetDefaultBranch(), gen.GetIsTemplate())
	}
	got, _, err := c.Repositories.Get(ctx, "octo", "gen")
	apptest.Must(t, "get generated", err)
	if got.GetTemplateRepository().GetFullName() != "octo/tmpl" || got.GetSize() <= 0 {
		t.Fatalf("GET: template %q size %d", got.GetTemplateRepository().GetFullName(), got.GetSize())
	}
	clone := filepath.Join(t.TempDir(), "gen")
	apptest.Git(t, t.TempDir(), "clone", "-q", env.GitURL("octo", "gen", "octo", token), clone)
	if log := apptest.Git(t, clone, "log", "--format=%s|%an|%P"); log != "Initial commit|octo|\n" {
		t.Fatalf("generated history %q, want one root commit", log)
	}
	if b, err := os.ReadFile(filepath.Join(clone, "src", "main.go")); err != nil || string(b) != "package main\n" {
		t.Fatalf("src/main.go: %q %v", b, err)
	}
	if branches := apptest.Git(t, clone, "branch", "-r"); strings.Contains(branches, "extra") {
		t.Fatalf("default branch only, got %q", branches)
	}
	if objects := apptest.Git(t, clone, "rev-list", "--all", "--objects"); strings.Count(objects, "\n") != 5 {
		t.Fatalf("the clone has objects beyond the commit, 2 trees and 2 blobs:\n%s", objects)
	}
	evs, _, err := c.Activity.ListRepositoryEvents(ctx, "octo", "gen", nil)
	apptest.Must(t, "events", err)
	pushed := false
	for _, e := range evs {
		pushed = pushed || e.GetType() == "PushEvent"
	}
	if !pushed {
		t.Fatalf("no PushEvent in the generated repository's feed (%d events)", len(evs))
	}

	all, _, err := c.Repositories.CreateFromTemplate(ctx, "octo", "tmpl", github.TemplateRepoRequest{
		Name: "gen-all", Owner: github.Ptr("acme"), IncludeAllBranches: github.Ptr(true), Private: github.Ptr(true)})
	apptest.Must(t, "generate all branches into an organization", err)
	if all.GetFullName() != "acme/gen-all" || !all.GetPrivate() {
		t.Fatalf("generated %q private %v", all.GetFullName(), all.GetPrivate())
	}
	branches, _, err := c.Repositories.ListBranches(ctx, "acme", "gen-all", nil)
	apptest.Must(t, "branches", err)
	if len(branches) != 2 {
		t.Fatalf("%d branches, want main and extra", len(branches))
	}
}

// TestUpdateSettings: the settings the repository object shows are
// settable by PATCH and kept; an unknown merge commit title is a 422.
func TestUpdateSettings(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo")
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo")
	c := env.Client(token)
	repo, _, err := c.Repositories.Get(ctx, "octo", "hello")
	apptest.Must(t, "get", err)
	if !repo.GetAllowForking() || repo.GetAllowAutoMerge() || repo.GetSquashMergeCommitTitle() != "COMMIT_OR_PR_TITLE" ||
		repo.GetMergeCommitMessage() != "PR_TITLE" || repo.GetWebCommitSignoffRequired() {
		t.Fatalf("defaults: %+v", repo)
	}
	_, _, err = c.Repositories.Edit(ctx, "octo", "hello", &github.Repository{AllowAutoMerge: github.Ptr(true),
		DeleteBranchOnMerge: github.Ptr(true), AllowUpdateBranch: github.Ptr(true), UseSquashPRTitleAsDefault: github.Ptr(true),
		SquashMergeCommitTitle: github.Ptr("PR_TITLE"), SquashMergeCommitMessage: github.Ptr("PR_BODY"),
		MergeCommitTitle: github.Ptr("PR_TITLE"), MergeCommitMessage: github.Ptr("BLANK"), AllowForking: github.Ptr(false),
		WebCommitSignoffRequired: github.Ptr(true), HasDiscussions: github.Ptr(true), Homepage: github.Ptr("https://example.com"),
		AllowRebaseMerge: github.Ptr(false)})
	apptest.Must(t, "edit settings", err)
	repo, _, err = c.Repositories.Get(ctx, "octo", "hello")
	apptest.Must(t, "get", err)
	if !repo.GetAllowAutoMerge() || !repo.GetDeleteBranchOnMerge() || !repo.GetAllowUpdateBranch() ||
		!repo.GetUseSquashPRTitleAsDefault() || repo.GetSquashMergeCommitTitle() != "PR_TITLE" ||
		repo.GetSquashMergeCommitMessage() != "PR_BODY" || repo.GetMergeCommitTitle() != "PR_TITLE" ||
		repo.GetMergeCommitMessage() != "BLANK" || repo.GetAllowForking() || !repo.GetWebCommitSignoffRequired() ||
		!repo.GetHasDiscussions() || repo.GetHomepage() != "https://example.com" || repo.GetAllowRebaseMerge() {
		t.Fatalf("after PATCH: %+v", repo)
	}
	resp, body := env.DoJSON("PATCH", "/repos/octo/hello", token, `{"merge_commit_title":"SOMETHING"}`)
	apptest.WantError(t, "unknown merge_commit_title", resp, body, http.StatusUnprocessableEntity)
}

// TestTempCloneToken: GET shows temp_clone_token to callers with push
// access: a clone token that clones a private repository for its admin,
// "" on a public one; readers and anonymous callers get no key.
func TestTempCloneToken(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octo := env.User("octo")
	env.Repo(octo, "secret", apptest.RepoOpts{Private: true})
	env.Repo(octo, "open")
	token := env.Token(octo, "repo")
	work := apptest.WorkTree(t, map[string]string{"a.txt": "a\n"})
	apptest.Git(t, work, "push", "-q", env.GitURL("octo", "secret", "octo", token), "HEAD:refs/heads/main")

	cloneToken := func(path, authorization string) (string, bool) {
		t.Helper()
		resp, body := env.Get(path, authorization)
		apptest.WantStatus(t, path, resp, body, http.StatusOK)
		var got map[string]any
		apptest.Must(t, "decode", json.Unmarshal(body, &got))
		v, ok := got["temp_clone_token"].(string)
		return v, ok
	}
	secret, ok := cloneToken("/repos/octo/secret", "Bearer "+token)
	if !ok || secret == "" {
		t.Fatalf("admin of a private repository: temp_clone_token %q present %v", secret, ok)
	}
	apptest.Git(t, t.TempDir(), "clone", "-q", env.GitURL("octo", "secret", "octo", secret), "c")
	if v, ok := cloneToken("/repos/octo/open", "Bearer "+token); !ok || v != "" {
		t.Fatalf("admin of a public repository: %q present %v, want \"\"", v, ok)
	}
	reader := env.User("reader")
	if _, ok := cloneToken("/repos/octo/open", "Bearer "+env.Token(reader, "repo")); ok {
		t.Fatal("a reader sees temp_clone_token")
	}
	if _, ok := cloneToken("/repos/octo/open", ""); ok {
		t.Fatal("an anonymous caller sees temp_clone_token")
	}
}
