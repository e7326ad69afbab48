package e2e_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/webhooks"
)

// octokitSummary is what testdata/node/octokit-gitdata.mjs prints.
type octokitSummary struct {
	Error        string   `json:"error"`
	Files        []string `json:"files"`
	Truncated    bool     `json:"truncated"`
	Head         string   `json:"head"`
	Blob         string   `json:"blob"`
	Tree         string   `json:"tree"`
	Commit       string   `json:"commit"`
	CommitTree   string   `json:"commitTree"`
	Parents      []string `json:"parents"`
	Verification string   `json:"verification"`
	Moved        string   `json:"moved"`
	Tag          string   `json:"tag"`
	TagObject    string   `json:"tagObject"`
	TagName      string   `json:"tagName"`
	TreeByBranch string   `json:"treeByBranch"`
	TagRefs      []string `json:"tagRefs"`
}

// TestOctokitReleasePleaseCommit runs octokit.js (@octokit/rest, pinned
// in testdata/node) as release-please commits: blob, tree on the head's
// tree, commit, release branch and fast-forward of main, annotated tag.
// git fetch sees the commit with the tree the API answered, with the
// files of both, and the tag; the update of main fires a signed push
// webhook.
func TestOctokitReleasePleaseCommit(t *testing.T) {
	t.Parallel()
	dir := apptest.NodeModules(t, "@octokit/rest")
	env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	octo := env.User("octo")
	env.Repo(octo, "app")
	token := env.Token(octo, "repo", "admin:repo_hook")
	work := apptest.WorkTree(t, map[string]string{"README.md": "# app\n", "src/index.js": "export {}\n"})
	apptest.Git(t, work, "remote", "add", "origin", env.GitURL("octo", "app", "octo", token))
	apptest.Git(t, work, "push", "-q", "origin", "HEAD:refs/heads/main")
	rc := apptest.NewReceiver(t, "s")
	_, _, err := env.Client(token).Repositories.CreateHook(apptest.Ctx(), "octo", "app", &github.Hook{Events: []string{"push"},
		Config: &github.HookConfig{URL: github.Ptr(rc.URL), ContentType: github.Ptr("json"), Secret: github.Ptr("s")}})
	apptest.Must(t, "hook", err)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "octokit-gitdata.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "FORGEAPI_URL="+env.URL+"/api/v3", "FORGEAPI_TOKEN="+token, "OWNER=octo", "REPO=app")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node octokit-gitdata.mjs: %v\n%s", err, out)
	}
	t.Logf("octokit summary: %s", out)
	var s octokitSummary
	if err := json.Unmarshal(out, &s); err != nil {
		t.Fatalf("summary %q: %v", out, err)
	}
	if s.Error != "" {
		t.Fatalf("octokit: %s", s.Error)
	}
	head := strings.TrimSpace(apptest.Git(t, work, "rev-parse", "HEAD"))
	if !slices.Equal(s.Files, []string{"README.md", "src/index.js"}) || s.Truncated || s.Head != head {
		t.Errorf("the head's tree by name: %v (truncated %v), head %s; want README.md and src/index.js at %s", s.Files, s.Truncated, s.Head, head)
	}
	if s.CommitTree != s.Tree || !slices.Equal(s.Parents, []string{head}) || s.Moved != s.Commit || s.Verification != "valid" ||
		s.TreeByBranch != s.Tree || s.TagObject != s.Commit || s.TagName != "v1.0.0" ||
		!slices.Equal(s.TagRefs, []string{"refs/tags/v1.0.0 tag"}) {
		t.Errorf("summary: %+v", s)
	}

	apptest.Git(t, work, "fetch", "-q", "--tags", "origin")
	if got := strings.TrimSpace(apptest.Git(t, work, "rev-parse", "origin/main", "origin/main^{tree}", "v1.0.0", "v1.0.0^{commit}")); got != strings.Join([]string{s.Commit, s.Tree, s.Tag, s.Commit}, "\n") {
		t.Errorf("fetched main, its tree, the tag and its commit:\n%s\nwant %s %s %s %s", got, s.Commit, s.Tree, s.Tag, s.Commit)
	}
	if got := apptest.Git(t, work, "show", "origin/main:.release-please-manifest.json"); strings.TrimSpace(got) != `{".":"1.0.0"}` {
		t.Errorf("the manifest written by content: %q", got)
	}
	if got := strings.TrimSpace(apptest.Git(t, work, "rev-parse", "origin/main:CHANGELOG.md")); got != s.Blob {
		t.Errorf("CHANGELOG.md is %s, the blob written %s", got, s.Blob)
	}
	apptest.Git(t, work, "fsck", "--strict")
	rc.WaitFor(t, func(d apptest.Delivery) string {
		if p, ok := d.Parsed.(*github.PushEvent); ok && p.GetRef() == "refs/heads/main" && p.GetAfter() == s.Commit {
			return "push main"
		}
		return ""
	}, "push main")
}
