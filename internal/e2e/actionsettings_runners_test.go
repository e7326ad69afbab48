package e2e_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// registered is the answer of POST /_runner/register.
type registered struct {
	ID            int64  `json:"id"`
	Name          string `json:"name"`
	RunnerGroupID int64  `json:"runner_group_id"`
	Credential    string `json:"credential"`
	Labels        []struct {
		Name, Type string
	} `json:"labels"`
}

// register registers a runner with token as `forgeapi runner` does and
// returns the answer's status and body.
func register(env *apptest.Env, token, body string) (*http.Response, []byte) {
	return env.Do("POST", "/_runner/register", "", stringsReader(body), "Authorization", "RemoteAuth "+token)
}

// TestSelfHostedRunners registers runners of a repository with a
// registration token made through go-github, as the runner process
// does, and manages them: list, get, labels (custom ones added, set and
// removed; read-only ones refused), delete; the remove token unregisters
// one; tokens stop working an hour after they are made; a runner's
// credential finds it.
func TestSelfHostedRunners(t *testing.T) {
	t.Parallel()
	var offset atomic.Int64
	env := apptest.Start(t, apptest.WithClock(func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }))
	ctx := apptest.Ctx()
	octo := env.User("octo")
	env.Repo(octo, "app")
	token := env.Token(octo, "repo")
	c := env.Client(token)
	var reg *github.RegistrationToken
	var first registered
	apptest.Step(t, "a registration token registers a runner with its labels", func(t *testing.T) {
		var resp *github.Response
		var err error
		reg, resp, err = c.Actions.CreateRegistrationToken(ctx, "octo", "app")
		apptest.Must(t, "registration token", err)
		settingsStatus(t, "registration token", resp, http.StatusCreated)
		if len(reg.GetToken()) != 29 || time.Until(reg.GetExpiresAt().Time) < 59*time.Minute || time.Until(reg.GetExpiresAt().Time) > 61*time.Minute {
			t.Fatalf("token %+v", reg)
		}
		r, body := register(env, reg.GetToken(), `{"name": "builder-1", "os": "Linux", "architecture": "X64", "labels": ["gpu"]}`)
		if r.StatusCode != http.StatusCreated || json.Unmarshal(body, &first) != nil || first.Credential == "" || len(first.Labels) != 4 {
			t.Fatalf("register %d %s", r.StatusCode, body)
		}
		if r, body := register(env, reg.GetToken(), `{"name": "BUILDER-1", "os": "Linux", "architecture": "X64"}`); r.StatusCode != http.StatusUnprocessableEntity {
			t.Fatalf("a second runner of the same name: %d %s", r.StatusCode, body)
		}
		if r, _ := register(env, "WRONGTOKEN", `{"name": "x", "os": "Linux", "architecture": "X64"}`); r.StatusCode != http.StatusUnauthorized {
			t.Fatalf("a wrong token: %d", r.StatusCode)
		}
		rn, err := env.App.ActionsSettings.RunnerByCredential(ctx, first.Credential)
		apptest.Must(t, "runner by credential", err)
		if rn.ID != first.ID || rn.Status != "online" {
			t.Fatalf("runner %+v", rn)
		}
	})
	apptest.Step(t, "the API lists and shows the runner", func(t *testing.T) {
		list, _, err := c.Actions.ListRunners(ctx, "octo", "app", nil)
		apptest.Must(t, "list", err)
		if list.TotalCount != 1 || list.Runners[0].GetName() != "builder-1" || list.Runners[0].GetOS() != "Linux" || len(list.Runners[0].Labels) != 4 {
			t.Fatalf("runners %+v", list)
		}
		one, _, err := c.Actions.GetRunner(ctx, "octo", "app", first.ID)
		apptest.Must(t, "get", err)
		if one.GetStatus() != "online" || one.Labels[0].GetName() != "self-hosted" || one.Labels[0].GetType() != "read-only" {
			t.Fatalf("runner %+v", one)
		}
	})
	labels := "/repos/octo/app/actions/runners/" + strconv.FormatInt(first.ID, 10) + "/labels"
	apptest.Step(t, "custom labels are added, set and removed; read-only ones stay", func(t *testing.T) {
		for _, x := range []struct {
			method, path, body string
			status, count      int
		}{
			{"POST", labels, `{"labels": ["arm-cross", "gpu"]}`, 200, 5},
			{"PUT", labels, `{"labels": ["big"]}`, 200, 4},
			{"DELETE", labels + "/big", "", 200, 3},
			{"DELETE", labels + "/big", "", 404, 0},
			{"DELETE", labels + "/self-hosted", "", 422, 0},
			{"POST", labels, `{"labels": []}`, 422, 0},
			{"PUT", labels, `{"labels": ["a", "b"]}`, 200, 5},
			{"DELETE", labels, "", 200, 3},
		} {
			resp, body := env.DoJSON(x.method, x.path, token, x.body)
			var got struct {
				TotalCount int `json:"total_count"`
			}
			_ = json.Unmarshal(body, &got)
			if resp.StatusCode != x.status || x.status == 200 && got.TotalCount != x.count {
				t.Fatalf("%s %s %s: %d %s", x.method, x.path, x.body, resp.StatusCode, body)
			}
		}
	})
	apptest.Step(t, "a remove token unregisters a runner; deleting through the API too", func(t *testing.T) {
		r, body := register(env, reg.GetToken(), `{"name": "builder-2", "os": "macOS", "architecture": "ARM64"}`)
		if r.StatusCode != http.StatusCreated {
			t.Fatalf("register %d %s", r.StatusCode, body)
		}
		rm, _, err := c.Actions.CreateRemoveToken(ctx, "octo", "app")
		apptest.Must(t, "remove token", err)
		if r, _ := env.Do("POST", "/_runner/remove", "", stringsReader(`{"name": "builder-2"}`), "Authorization", "RemoteAuth "+reg.GetToken()); r.StatusCode != http.StatusUnauthorized {
			t.Fatalf("a registration token removed a runner: %d", r.StatusCode)
		}
		if r, body := env.Do("POST", "/_runner/remove", "", stringsReader(`{"name": "builder-2"}`), "Authorization", "RemoteAuth "+rm.GetToken()); r.StatusCode != http.StatusNoContent {
			t.Fatalf("remove %d %s", r.StatusCode, body)
		}
		resp, err := c.Actions.RemoveRunner(ctx, "octo", "app", first.ID)
		apptest.Must(t, "delete", err)
		settingsStatus(t, "delete", resp, http.StatusNoContent)
		list, _, err := c.Actions.ListRunners(ctx, "octo", "app", nil)
		apptest.Must(t, "list", err)
		if list.TotalCount != 0 {
			t.Fatalf("runners left %+v", list)
		}
		if _, err := env.App.ActionsSettings.RunnerByCredential(ctx, first.Credential); err == nil {
			t.Fatal("a deleted runner's credential still finds it")
		}
	})
	apptest.Step(t, "an hour later the token registers nothing", func(t *testing.T) {
		offset.Store(int64(61 * time.Minute))
		if r, body := register(env, reg.GetToken(), `{"name": "late", "os": "Linux", "architecture": "X64"}`); r.StatusCode != http.StatusUnauthorized {
			t.Fatalf("an expired token: %d %s", r.StatusCode, body)
		}
	})
}

// TestRunnerGroups manages an organization's runner groups with
// go-github: the default group new runners join, a group for selected
// repositories with a runner moved into it, renaming, and deleting it
// (its runners go back to the default group, which cannot be deleted).
func TestRunnerGroups(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	owner := env.User("owner")
	env.Org("acme", owner)
	c := env.Client(env.Token(owner, "repo", "admin:org"))
	api, _, err := c.Repositories.Create(ctx, "acme", &github.Repository{Name: github.Ptr("api")})
	apptest.Must(t, "repository", err)
	reg, _, err := c.Actions.CreateOrganizationRegistrationToken(ctx, "acme")
	apptest.Must(t, "registration token", err)
	var runner registered
	r, body := register(env, reg.GetToken(), `{"name": "org-runner", "os": "Linux", "architecture": "X64"}`)
	if r.StatusCode != http.StatusCreated || json.Unmarshal(body, &runner) != nil {
		t.Fatalf("register %d %s", r.StatusCode, body)
	}
	groups, _, err := c.Actions.ListOrganizationRunnerGroups(ctx, "acme", nil)
	apptest.Must(t, "groups", err)
	if groups.TotalCount != 1 || !groups.RunnerGroups[0].GetDefault() || groups.RunnerGroups[0].GetID() != runner.RunnerGroupID {
		t.Fatalf("groups %+v, runner in %d", groups, runner.RunnerGroupID)
	}
	def := groups.RunnerGroups[0].GetID()
	g, resp, err := c.Actions.CreateOrganizationRunnerGroup(ctx, "acme", github.CreateRunnerGroupRequest{Name: github.Ptr("gpu"),
		Visibility: github.Ptr("selected"), SelectedRepositoryIDs: []int64{api.GetID()}, Runners: []int64{runner.ID}})
	apptest.Must(t, "create", err)
	settingsStatus(t, "create", resp, http.StatusCreated)
	if g.GetVisibility() != "selected" || g.GetDefault() || g.GetSelectedRepositoriesURL() == "" {
		t.Fatalf("group %+v", g)
	}
	in, _, err := c.Actions.ListRunnerGroupRunners(ctx, "acme", g.GetID(), nil)
	apptest.Must(t, "group runners", err)
	repos, _, err := c.Actions.ListRepositoryAccessRunnerGroup(ctx, "acme", g.GetID(), nil)
	apptest.Must(t, "group repositories", err)
	if in.TotalCount != 1 || in.Runners[0].GetName() != "org-runner" || repos.GetTotalCount() != 1 || repos.Repositories[0].GetName() != "api" {
		t.Fatalf("group runners %+v repositories %+v", in, repos)
	}
	if _, resp, err := c.Actions.CreateOrganizationRunnerGroup(ctx, "acme", github.CreateRunnerGroupRequest{Name: github.Ptr("GPU")}); err == nil ||
		resp.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("a second group of the name: %v", err)
	}
	g, _, err = c.Actions.UpdateOrganizationRunnerGroup(ctx, "acme", g.GetID(), github.UpdateRunnerGroupRequest{Name: github.Ptr("gpus"),
		Visibility: github.Ptr("private")})
	apptest.Must(t, "update", err)
	if g.GetName() != "gpus" || g.GetVisibility() != "private" {
		t.Fatalf("updated %+v", g)
	}
	if resp, err := c.Actions.DeleteOrganizationRunnerGroup(ctx, "acme", def); err == nil || resp.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("the default group deleted: %v", err)
	}
	_, err = c.Actions.DeleteOrganizationRunnerGroup(ctx, "acme", g.GetID())
	apptest.Must(t, "delete", err)
	back, _, err := c.Actions.GetOrganizationRunner(ctx, "acme", runner.ID)
	apptest.Must(t, "runner", err)
	if back.GetRunnerGroupID() != def {
		t.Fatalf("the runner is in %d, not the default group %d", back.GetRunnerGroupID(), def)
	}
}

// TestOrganizationJITConfig generates a just-in-time runner of an
// organization in one of its groups: 201 with the runner (ephemeral,
// offline, in the group, the OS and architecture named read-only and
// the others custom) and a configuration that decodes to its credential;
// an unknown group and missing fields are 422s, a name taken a 409.
func TestOrganizationJITConfig(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo")
	env.Org("acme", octo)
	c := env.Client(env.Token(octo, "admin:org"))
	g, _, err := c.Actions.CreateOrganizationRunnerGroup(ctx, "acme", github.CreateRunnerGroupRequest{Name: github.Ptr("builders")})
	apptest.Must(t, "runner group", err)
	for _, bad := range []github.CreateJITConfigRequest{
		{Name: "x", RunnerGroupID: g.GetID() + 100, Labels: []string{"a"}},
		{Name: "", RunnerGroupID: g.GetID(), Labels: []string{"a"}},
		{Name: "x", RunnerGroupID: g.GetID(), Labels: []string{}},
	} {
		if _, resp, _ := c.Actions.CreateOrgJITConfig(ctx, "acme", bad); resp == nil || resp.StatusCode != http.StatusUnprocessableEntity {
			t.Fatalf("%+v: %v", bad, resp)
		}
	}
	req := github.CreateJITConfigRequest{Name: "jit-1", RunnerGroupID: g.GetID(), Labels: []string{"self-hosted", "arm64", "macOS", "metal"}}
	jit, resp, err := c.Actions.CreateOrgJITConfig(ctx, "acme", req)
	apptest.Must(t, "generate-jitconfig", err)
	settingsStatus(t, "generate-jitconfig", resp, http.StatusCreated)
	r := jit.GetRunner()
	labels := map[string]string{}
	for _, l := range r.Labels {
		labels[l.GetName()] = l.GetType()
	}
	if !r.GetEphemeral() || r.GetStatus() != "offline" || r.GetOS() != "macOS" || r.GetRunnerGroupID() != g.GetID() ||
		labels["self-hosted"] != "read-only" || labels["ARM64"] != "read-only" || labels["macOS"] != "read-only" || labels["metal"] != "custom" {
		t.Fatalf("runner %+v labels %v", r, labels)
	}
	b, err := base64.StdEncoding.DecodeString(jit.GetEncodedJITConfig())
	apptest.Must(t, "decode", err)
	var cfg struct {
		ID         int64  `json:"id"`
		Credential string `json:"credential"`
		WorkFolder string `json:"work_folder"`
	}
	if json.Unmarshal(b, &cfg) != nil || cfg.ID != r.GetID() || cfg.Credential == "" || cfg.WorkFolder != "_work" {
		t.Fatalf("config %s", b)
	}
	if _, resp, _ := c.Actions.CreateOrgJITConfig(ctx, "acme", req); resp == nil || resp.StatusCode != http.StatusConflict {
		t.Fatalf("the name again: %v", resp)
	}
}
