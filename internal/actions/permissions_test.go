package actions_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// tokenWorkflows: "default" names no permissions (the repository's
// default applies); "scoped" narrows the workflow to contents read and
// widens single jobs. Each step reports the status of its GITHUB_TOKEN's
// issue creation or the result of its push.
const tokenWorkflows = `name: NAME
on: push
PERMS
jobs:
JOBS
`

const issueJob = `  KEY:
    runs-on: ubuntu-latest
JOBPERMS    steps:
      - run: |
          curl -s -o /dev/null -w "KEY issue %{http_code}\n" -X POST -H "Authorization: Bearer ${{ secrets.GITHUB_TOKEN }}" -d '{"title":"from KEY"}' API/repos/octo/hello/issues
`

const pushJob = `  KEY:
    runs-on: ubuntu-latest
JOBPERMS    steps:
      - uses: actions/checkout@v4
      - run: |
          git -c user.name=bot -c user.email=bot@example.com commit -q --allow-empty -m "from KEY"
          export GIT_TERMINAL_PROMPT=0
          if git push -q "http://x-access-token:${{ secrets.GITHUB_TOKEN }}@HOST/octo/hello.git" HEAD:refs/heads/from-KEY; then printf '%s push %s\n' KEY ok; else printf '%s push %s\n' KEY refused; fi
`

func job(tmpl, key, perms, api, host string) string {
	return strings.NewReplacer("KEY", key, "JOBPERMS", perms, "API", api, "HOST", host).Replace(tmpl)
}

func TestWorkflowPermissionsSetTheJobToken(t *testing.T) {
	apptest.SkipJobsUnderRace(t)
	f := start(t)
	ctx := apptest.Ctx()
	u, err := url.Parse(f.env.URL)
	apptest.Must(t, "base URL", err)
	api, host := strings.TrimSuffix(f.env.URL, "/")+"/api/v3", u.Host
	// The repository's default becomes write: it applies to the workflow
	// that names no permissions, not to the one that does.
	_, _, err = f.c.Repositories.UpdateDefaultWorkflowPermissions(ctx, "octo", "hello",
		github.DefaultWorkflowPermissionRepository{DefaultWorkflowPermissions: github.Ptr("write")})
	apptest.Must(t, "default workflow permissions", err)
	def := strings.NewReplacer("NAME", "Default", "PERMS", "", "JOBS",
		job(issueJob, "byDefault", "", api, host)).Replace(tokenWorkflows)
	scoped := strings.NewReplacer("NAME", "Scoped", "PERMS", "permissions:\n  contents: read", "JOBS",
		job(issueJob, "denied", "", api, host)+
			job(issueJob, "allowed", "    permissions:\n      issues: write\n", api, host)+
			job(pushJob, "readonly", "", api, host)+
			job(pushJob, "pusher", "    permissions:\n      contents: write\n", api, host)).Replace(tokenWorkflows)
	f.push(t, map[string]string{".github/workflows/default.yml": def, ".github/workflows/scoped.yml": scoped})
	runs := map[string]int64{"default.yml": f.completedRun(t, "default.yml", 1).GetID(), "scoped.yml": f.completedRun(t, "scoped.yml", 1).GetID()}
	logs := ""
	for _, id := range runs {
		for _, j := range jobsByName(t, f, id, "") {
			logs += f.jobLog(t, j.GetID())
		}
	}
	for _, want := range []string{"byDefault issue 201", "denied issue 403", "allowed issue 201", "readonly push refused", "pusher push ok"} {
		if !strings.Contains(logs, want) {
			t.Errorf("the jobs' logs lack %q:\n%s", want, logs)
		}
	}
	if _, _, err := f.c.Repositories.GetBranch(ctx, "octo", "hello", "from-pusher", 0); err != nil {
		branches, _, _ := f.c.Repositories.ListBranches(ctx, "octo", "hello", nil)
		t.Errorf("the pusher's branch: %v (branches %v)\n%s", err, branches, logs)
	}
	issues, _, err := f.c.Issues.ListByRepo(ctx, "octo", "hello", nil)
	apptest.Must(t, "list issues", err)
	if len(issues) != 2 || issues[0].GetUser().GetLogin() != "github-actions[bot]" {
		t.Errorf("issues: %+v", issues)
	}
}
