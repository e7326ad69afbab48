package e2e_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"forgeapi/internal/apptest"
	"forgeapi/internal/webhooks"
)

// octokitCISummary is what testdata/node/octokit-ci.mjs prints last.
type octokitCISummary struct {
	Failures    []string `json:"failures"`
	Error       string   `json:"error"`
	SuiteAction string   `json:"suiteAction"`
	HeadSHA     string   `json:"headSHA"`
	RunStatus   string   `json:"runStatus"`
	RunID       int64    `json:"runId"`
	Conclusion  string   `json:"conclusion"`
	AppSlug     string   `json:"appSlug"`
}

// TestOctokitCIApp runs a CI app on octokit.js (@octokit/auth-app and
// @octokit/webhooks, pinned in testdata/node): it receives
// check_suite.requested for a push to its installed repository, signed,
// and reports a check run in progress then failed with an annotation
// through its installation; the run and the annotation read back through
// the API.
func TestOctokitCIApp(t *testing.T) {
	t.Parallel()
	dir := apptest.NodeModules(t, "@octokit/auth-app")
	env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	octo := env.User("octo")
	repo := env.Repo(octo, "widgets")
	a := env.RegisterApp(octo, "Octo CI", "checks:write,contents:read", apptest.AppOpts{Events: []string{"check_suite"}})
	env.Install(a, octo, repo)
	keyFile := filepath.Join(t.TempDir(), "app.pem")
	apptest.Must(t, "key file", os.WriteFile(keyFile, a.PrivateKeyPEM, 0o600))

	node := apptest.StartNodeApp(t, dir, "octokit-ci.mjs", "FORGEAPI_URL="+env.APIBase(), "APP_ID="+strconv.FormatInt(a.ID, 10),
		"PRIVATE_KEY_FILE="+keyFile, "OWNER=octo", "REPO=widgets")

	token := env.Token(octo, "repo")
	work := apptest.WorkTree(t, map[string]string{"a.txt": "1\n"})
	sha := strings.TrimSpace(apptest.Git(t, work, "rev-parse", "HEAD"))
	apptest.Git(t, work, "push", "-q", env.GitURL("octo", "widgets", "octo", token), "HEAD:refs/heads/main")

	var s octokitCISummary
	out := node.Summary(&s)
	if s.Error != "" || len(s.Failures) > 0 || s.SuiteAction != "requested" || s.HeadSHA != sha ||
		s.RunStatus != "in_progress" || s.Conclusion != "failure" || s.AppSlug != "octo-ci" {
		t.Fatalf("octokit CI app: %s", out)
	}
	c := env.Client(token)
	run, _, err := c.Checks.GetCheckRun(apptest.Ctx(), "octo", "widgets", s.RunID)
	apptest.Must(t, "get run", err)
	anns, _, err := c.Checks.ListCheckRunAnnotations(apptest.Ctx(), "octo", "widgets", s.RunID, nil)
	apptest.Must(t, "annotations", err)
	if run.GetHeadSHA() != sha || run.GetConclusion() != "failure" || run.GetOutput().GetTitle() != "1 test failed" ||
		len(anns) != 1 || anns[0].GetMessage() != "not one" {
		t.Fatalf("run %+v, annotations %+v", run, anns)
	}
}
