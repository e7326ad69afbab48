package e2e_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/actions/settings"
	"forgeapi/internal/apptest"
)

// TestRepositoryVariables creates, pages through, renames and deletes a
// repository's variables with go-github, and gets the platform's 422s for
// a name taken, a bad name and a value too long.
func TestRepositoryVariables(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo")
	env.Repo(octo, "app")
	c := env.Client(env.Token(octo, "repo"))
	for _, name := range []string{"c_three", "A_ONE", "B_TWO"} {
		resp, err := c.Actions.CreateRepoVariable(ctx, "octo", "app", github.ActionsCreateVariableRequest{Name: name, Value: "v-" + name})
		apptest.Must(t, "create "+name, err)
		settingsStatus(t, "create", resp, http.StatusCreated)
	}
	apptest.Step(t, "pages by name with Link headers", func(t *testing.T) {
		page, resp, err := c.Actions.ListRepoVariables(ctx, "octo", "app", &github.ListOptions{PerPage: 2})
		apptest.Must(t, "page 1", err)
		if page.TotalCount != 3 || len(page.Variables) != 2 || page.Variables[0].Name != "A_ONE" || resp.NextPage != 2 {
			t.Fatalf("page 1: %+v next %d", page, resp.NextPage)
		}
		page, _, err = c.Actions.ListRepoVariables(ctx, "octo", "app", &github.ListOptions{PerPage: 2, Page: 2})
		apptest.Must(t, "page 2", err)
		if len(page.Variables) != 1 || page.Variables[0].Name != "C_THREE" || page.Variables[0].Value != "v-c_three" {
			t.Fatalf("page 2: %+v", page)
		}
	})
	apptest.Step(t, "an update renames and changes the value (204)", func(t *testing.T) {
		resp, err := c.Actions.UpdateRepoVariable(ctx, "octo", "app", "a_one",
			github.ActionsUpdateVariableRequest{Name: github.Ptr("A_FIRST"), Value: github.Ptr("changed")})
		apptest.Must(t, "update", err)
		settingsStatus(t, "update", resp, http.StatusNoContent)
		v, _, err := c.Actions.GetRepoVariable(ctx, "octo", "app", "A_FIRST")
		apptest.Must(t, "get", err)
		if v.Value != "changed" || v.UpdatedAt.Before(v.CreatedAt.Time) {
			t.Fatalf("variable %+v", v)
		}
		if _, resp, err := c.Actions.GetRepoVariable(ctx, "octo", "app", "A_ONE"); err == nil || resp.StatusCode != http.StatusNotFound {
			t.Fatalf("the old name: %v", err)
		}
		if resp, err := c.Actions.UpdateRepoVariable(ctx, "octo", "app", "A_FIRST",
			github.ActionsUpdateVariableRequest{Name: github.Ptr("b_two")}); err == nil || resp.StatusCode != http.StatusUnprocessableEntity {
			t.Fatalf("renamed onto another: %v", err)
		}
	})
	apptest.Step(t, "a name taken, a bad name, a value too long are 422", func(t *testing.T) {
		for name, body := range map[string]github.ActionsCreateVariableRequest{
			"taken":    {Name: "b_two", Value: "x"},
			"bad name": {Name: "with space", Value: "x"},
			"reserved": {Name: "GITHUB_SHA", Value: "x"},
			"too long": {Name: "BIG", Value: strings.Repeat("x", 48*1024+1)},
			"no name":  {Value: "x"},
		} {
			resp, err := c.Actions.CreateRepoVariable(ctx, "octo", "app", body)
			if err == nil || resp.StatusCode != http.StatusUnprocessableEntity {
				t.Fatalf("%s: %v", name, err)
			}
		}
	})
	apptest.Step(t, "an environment holds at most 100 variables", func(t *testing.T) {
		_, _, err := c.Repositories.CreateUpdateEnvironment(ctx, "octo", "app", "full", &github.CreateUpdateEnvironment{})
		apptest.Must(t, "environment", err)
		for i := range settings.Limit(settings.KindVariable, settings.EnvPlace(0, 0, 0)) {
			_, err := c.Actions.CreateEnvVariable(ctx, "octo", "app", "full", github.ActionsCreateVariableRequest{Name: "V" + strconv.Itoa(i), Value: "x"})
			apptest.Must(t, "variable", err)
		}
		if resp, err := c.Actions.CreateEnvVariable(ctx, "octo", "app", "full", github.ActionsCreateVariableRequest{Name: "ONE_MORE", Value: "x"}); err == nil ||
			resp.StatusCode != http.StatusUnprocessableEntity {
			t.Fatalf("a variable over the limit: %v", err)
		}
	})
	apptest.Step(t, "deleted, it is gone", func(t *testing.T) {
		resp, err := c.Actions.DeleteRepoVariable(ctx, "octo", "app", "B_TWO")
		apptest.Must(t, "delete", err)
		settingsStatus(t, "delete", resp, http.StatusNoContent)
		list, _, err := c.Actions.ListRepoVariables(ctx, "octo", "app", nil)
		apptest.Must(t, "list", err)
		if list.TotalCount != 2 {
			t.Fatalf("after delete %+v", list)
		}
	})
	apptest.Step(t, "an environment's variables need the environment", func(t *testing.T) {
		if resp, err := c.Actions.CreateEnvVariable(ctx, "octo", "app", "qa", github.ActionsCreateVariableRequest{Name: "X", Value: "1"}); err == nil ||
			resp.StatusCode != http.StatusNotFound {
			t.Fatalf("no environment: %v", err)
		}
		_, _, err := c.Repositories.CreateUpdateEnvironment(ctx, "octo", "app", "qa", &github.CreateUpdateEnvironment{})
		apptest.Must(t, "environment", err)
		_, err = c.Actions.CreateEnvVariable(ctx, "octo", "app", "qa", github.ActionsCreateVariableRequest{Name: "X", Value: "1"})
		apptest.Must(t, "environment variable", err)
		list, _, err := c.Actions.ListEnvVariables(ctx, "octo", "app", "qa", nil)
		apptest.Must(t, "list", err)
		if list.TotalCount != 1 || list.Variables[0].Name != "X" || list.Variables[0].Value != "1" {
			t.Fatalf("environment variables %+v", list)
		}
		_, err = c.Repositories.DeleteEnvironment(ctx, "octo", "app", "qa")
		apptest.Must(t, "delete the environment", err)
		_, _, err = c.Repositories.CreateUpdateEnvironment(ctx, "octo", "app", "qa", &github.CreateUpdateEnvironment{})
		apptest.Must(t, "environment again", err)
		list, _, err = c.Actions.ListEnvVariables(ctx, "octo", "app", "qa", nil)
		apptest.Must(t, "list", err)
		if list.TotalCount != 0 {
			t.Fatalf("a deleted environment's variables came back: %+v", list)
		}
	})
}
