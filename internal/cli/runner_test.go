package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"forgeapi/internal/apptest"
)

// TestCLIRunnerRegisterAndRemove registers a runner with `forgeapi runner
// register` and a registration token (its credential kept in a 0600
// file), sees it with its labels in the API, and removes it with `forgeapi
// runner remove` and a remove token; a bad token is refused.
func TestCLIRunnerRegisterAndRemove(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	owner := env.User("octo")
	env.Repo(owner, "hello")
	c := env.Client(env.Token(owner, "repo"))
	config := filepath.Join(t.TempDir(), "runner.json")
	if code, _, errOut := cliRun(t, "runner", "register", "--config", config, "--url", env.URL, "--token", "NOPE"); code == 0 ||
		!strings.Contains(errOut, "401") {
		t.Fatalf("a bad token: exit %d, %q", code, errOut)
	}
	reg, _, err := c.Actions.CreateRegistrationToken(apptest.Ctx(), "octo", "hello")
	apptest.Must(t, "registration token", err)
	out := cliOK(t, "runner", "register", "--config", config, "--url", env.URL+"/api/v3", "--token", reg.GetToken(),
		"--name", "cli-box", "--labels", "gpu, cuda")
	if !strings.Contains(out, "registered runner cli-box") {
		t.Fatalf("register: %q", out)
	}
	info, err := os.Stat(config)
	apptest.Must(t, "stat config", err)
	if info.Mode().Perm() != 0o600 {
		t.Fatalf("config mode %v", info.Mode())
	}
	list, _, err := c.Actions.ListRunners(apptest.Ctx(), "octo", "hello", nil)
	apptest.Must(t, "list runners", err)
	if list.TotalCount != 1 || list.Runners[0].GetName() != "cli-box" {
		t.Fatalf("runners %+v", list)
	}
	var labels []string
	for _, l := range list.Runners[0].Labels {
		labels = append(labels, l.GetName())
	}
	if got := strings.Join(labels, ","); got != "self-hosted,Linux,X64,gpu,cuda" && !strings.HasSuffix(got, ",gpu,cuda") {
		t.Fatalf("labels %s", got)
	}
	rm, _, err := c.Actions.CreateRemoveToken(apptest.Ctx(), "octo", "hello")
	apptest.Must(t, "remove token", err)
	cliOK(t, "runner", "remove", "--config", config, "--token", rm.GetToken())
	list, _, err = c.Actions.ListRunners(apptest.Ctx(), "octo", "hello", nil)
	apptest.Must(t, "list runners", err)
	if list.TotalCount != 0 {
		t.Fatalf("%d runners after remove", list.TotalCount)
	}
	if _, err := os.Stat(config); !os.IsNotExist(err) {
		t.Fatalf("config after remove: %v", err)
	}
}
