package e2e_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/webhooks"
)

// valuesOf names a repository's values "name=value" for comparison.
func valuesOf(list []*github.CustomPropertyValue) string {
	var out []string
	for _, v := range list {
		b, _ := json.Marshal(v.Value)
		out = append(out, v.PropertyName+"="+string(b))
	}
	return strings.Join(out, " ")
}

// TestCustomProperties drives custom properties through go-github: an
// owner defines properties one at a time and in bulk (validated as the
// platform validates them), sets values on repositories in bulk and on
// one repository; a required property's default shows where no value is
// set; a repository admin sets only the properties repository actors may
// edit; members read definitions and values and change nothing; changing
// a property's allowed values drops the values it no longer allows;
// deleting it drops its values. The organization hook receives
// custom_property and custom_property_values.
func TestCustomProperties(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	ctx := apptest.Ctx()
	octo, dev, ann := env.User("octo"), env.User("dev"), env.User("ann")
	env.Org("acme", octo, dev, ann)
	owner := env.Client(env.Token(octo, "admin:org", "admin:org_hook", "repo"))
	devGH := env.Client(env.Token(dev, "read:org", "repo"))
	for _, name := range []string{"api", "web"} {
		_, _, err := owner.Repositories.Create(ctx, "acme", &github.Repository{Name: github.Ptr(name)})
		apptest.Must(t, "create "+name, err)
	}
	_, _, err := owner.Repositories.AddCollaborator(ctx, "acme", "web", "ann", &github.RepositoryAddCollaboratorOptions{Permission: "admin"})
	apptest.Must(t, "ann admin of web", err)
	annGH := env.Client(env.Token(ann, "repo"))

	rc := apptest.NewReceiver(t, "s")
	_, _, err = owner.Organizations.CreateHook(ctx, "acme", &github.Hook{Name: github.Ptr("web"),
		Events: []string{"custom_property", "custom_property_values"},
		Config: &github.HookConfig{URL: github.Ptr(rc.URL), ContentType: github.Ptr("json"), Secret: github.Ptr("s")}})
	apptest.Must(t, "org hook", err)

	apptest.Step(t, "definitions, one and in bulk", func(t *testing.T) {
		p, _, err := owner.Organizations.CreateOrUpdateCustomProperty(ctx, "acme", "env", &github.CustomProperty{
			ValueType: github.PropertyValueTypeSingleSelect, Required: github.Ptr(true), DefaultValue: "dev",
			AllowedValues: []string{"dev", "prod"}, Description: github.Ptr("where it runs")})
		apptest.Must(t, "create env", err)
		if p.GetPropertyName() != "env" || p.GetSourceType() != "organization" || p.GetValuesEditableBy() != "org_actors" {
			t.Fatalf("env: %+v", p)
		}
		list, _, err := owner.Organizations.CreateOrUpdateCustomProperties(ctx, "acme", []*github.CustomProperty{
			{PropertyName: github.Ptr("team"), ValueType: github.PropertyValueTypeString, ValuesEditableBy: github.Ptr("org_and_repo_actors")},
			{PropertyName: github.Ptr("langs"), ValueType: github.PropertyValueTypeMultiSelect, AllowedValues: []string{"go", "js", "py"}},
			{PropertyName: github.Ptr("public$"), ValueType: github.PropertyValueTypeTrueFalse},
		})
		apptest.Must(t, "create in bulk", err)
		if len(list) != 3 {
			t.Fatalf("%d properties", len(list))
		}
		all, _, err := devGH.Organizations.GetAllCustomProperties(ctx, "acme")
		apptest.Must(t, "a member lists them", err)
		if len(all) != 4 || all[0].GetPropertyName() != "env" || all[2].AllowedValues[2] != "py" {
			t.Fatalf("definitions %+v", all)
		}
		got, _, err := devGH.Organizations.GetCustomProperty(ctx, "acme", "ENV")
		apptest.Must(t, "get one (any case)", err)
		if d, _ := got.DefaultValueString(); d != "dev" || !got.GetRequired() {
			t.Fatalf("env %+v", got)
		}
		if _, resp, err := devGH.Organizations.CreateOrUpdateCustomProperty(ctx, "acme", "x",
			&github.CustomProperty{ValueType: github.PropertyValueTypeString}); status(resp) != http.StatusForbidden {
			t.Fatalf("a member defines a property: %v", err)
		}
	})

	apptest.Step(t, "invalid definitions", func(t *testing.T) {
		for name, p := range map[string]*github.CustomProperty{
			"bad name":     {ValueType: github.PropertyValueTypeString},
			"select":       {ValueType: github.PropertyValueTypeSingleSelect},
			"needsdefault": {ValueType: github.PropertyValueTypeString, Required: github.Ptr(true)},
			"notallowed":   {ValueType: github.PropertyValueTypeSingleSelect, AllowedValues: []string{"a"}, DefaultValue: "b"},
			"stringlist":   {ValueType: github.PropertyValueTypeString, AllowedValues: []string{"a"}},
			"boolean":      {ValueType: github.PropertyValueTypeTrueFalse, DefaultValue: "yes"},
			"editors":      {ValueType: github.PropertyValueTypeString, ValuesEditableBy: github.Ptr("everyone")},
		} {
			_, resp, err := owner.Organizations.CreateOrUpdateCustomProperty(ctx, "acme", name, p)
			if status(resp) != http.StatusUnprocessableEntity {
				t.Errorf("%s: %v", name, err)
			}
		}
		resp, b := env.DoJSON("PUT", "/orgs/acme/properties/schema/x", env.Token(octo, "admin:org"), `{"value_type":"colour"}`)
		if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(string(b), "value_type") {
			t.Fatalf("bad value type: %d %s", resp.StatusCode, b)
		}
	})

	apptest.Step(t, "values in bulk and per repository", func(t *testing.T) {
		vals, _, err := devGH.Repositories.GetAllCustomPropertyValues(ctx, "acme", "api")
		apptest.Must(t, "values before", err)
		if got := valuesOf(vals); got != `env="dev"` {
			t.Fatalf("values before: %s (want the required default)", got)
		}
		_, err = owner.Organizations.CreateOrUpdateRepoCustomPropertyValues(ctx, "acme", []string{"api", "web"}, []*github.CustomPropertyValue{
			{PropertyName: "env", Value: "prod"}, {PropertyName: "langs", Value: []string{"go", "js"}}})
		apptest.Must(t, "bulk values", err)
		_, err = owner.Repositories.CreateOrUpdateCustomProperties(ctx, "acme", "api", []*github.CustomPropertyValue{
			{PropertyName: "team", Value: "core"}, {PropertyName: "public$", Value: "true"}, {PropertyName: "env", Value: nil}}[:2])
		apptest.Must(t, "repository values", err)
		vals, _, err = devGH.Repositories.GetAllCustomPropertyValues(ctx, "acme", "api")
		apptest.Must(t, "values after", err)
		if got := valuesOf(vals); got != `env="prod" team="core" langs=["go","js"] public$="true"` {
			t.Fatalf("values of api: %s", got)
		}
		list, _, err := devGH.Organizations.ListCustomPropertyValues(ctx, "acme", &github.ListCustomPropertyValuesOptions{
			RepositoryQuery: "props.team:core"})
		apptest.Must(t, "org values by query", err)
		if len(list) != 1 || list[0].RepositoryName != "api" {
			t.Fatalf("props.team:core: %+v", list)
		}
		list, _, err = devGH.Organizations.ListCustomPropertyValues(ctx, "acme", nil)
		apptest.Must(t, "org values", err)
		if len(list) != 2 || list[1].RepositoryFullName != "acme/web" {
			t.Fatalf("org values: %+v", list)
		}
	})

	apptest.Step(t, "invalid values", func(t *testing.T) {
		for what, v := range map[string]*github.CustomPropertyValue{
			"not allowed":      {PropertyName: "env", Value: "staging"},
			"unset required":   {PropertyName: "env", Value: nil},
			"list for single":  {PropertyName: "env", Value: []string{"dev"}},
			"multi not listed": {PropertyName: "langs", Value: []string{"rust"}},
			"boolean":          {PropertyName: "public$", Value: "maybe"},
			"no such property": {PropertyName: "nope", Value: "x"},
			"quote":            {PropertyName: "team", Value: `a"b`},
		} {
			resp, err := owner.Repositories.CreateOrUpdateCustomProperties(ctx, "acme", "api", []*github.CustomPropertyValue{v})
			if status(resp) != http.StatusUnprocessableEntity {
				t.Errorf("%s: %v", what, err)
			}
		}
		resp, err := owner.Organizations.CreateOrUpdateRepoCustomPropertyValues(ctx, "acme", []string{"nope"},
			[]*github.CustomPropertyValue{{PropertyName: "team", Value: "x"}})
		if status(resp) != http.StatusUnprocessableEntity {
			t.Errorf("unknown repository: %v", err)
		}
	})

	apptest.Step(t, "a repository admin sets what repository actors may", func(t *testing.T) {
		_, err := annGH.Repositories.CreateOrUpdateCustomProperties(ctx, "acme", "web", []*github.CustomPropertyValue{{PropertyName: "team", Value: "front"}})
		apptest.Must(t, "ann sets team", err)
		resp, err := annGH.Repositories.CreateOrUpdateCustomProperties(ctx, "acme", "web", []*github.CustomPropertyValue{{PropertyName: "env", Value: "dev"}})
		if status(resp) != http.StatusForbidden {
			t.Fatalf("ann sets env, which only the organization edits: %v", err)
		}
		resp, err = devGH.Repositories.CreateOrUpdateCustomProperties(ctx, "acme", "web", []*github.CustomPropertyValue{{PropertyName: "team", Value: "x"}})
		if status(resp) != http.StatusForbidden && status(resp) != http.StatusNotFound {
			t.Fatalf("a member without admin sets values: %v", err)
		}
	})

	apptest.Step(t, "changing and deleting definitions", func(t *testing.T) {
		_, _, err := owner.Organizations.CreateOrUpdateCustomProperty(ctx, "acme", "langs", &github.CustomProperty{
			ValueType: github.PropertyValueTypeMultiSelect, AllowedValues: []string{"go", "py"}})
		apptest.Must(t, "narrow langs", err)
		_, err = owner.Organizations.RemoveCustomProperty(ctx, "acme", "team")
		apptest.Must(t, "delete team", err)
		vals, _, err := devGH.Repositories.GetAllCustomPropertyValues(ctx, "acme", "api")
		apptest.Must(t, "values", err)
		if got := valuesOf(vals); got != `env="prod" public$="true"` {
			t.Fatalf("values after the changes: %s", got)
		}
		if _, resp, err := owner.Organizations.GetCustomProperty(ctx, "acme", "team"); status(resp) != http.StatusNotFound {
			t.Fatalf("deleted property: %v", err)
		}
	})

	apptest.Step(t, "webhooks", func(t *testing.T) {
		rc.WaitFor(t, apptest.EventAction, "custom_property created", "custom_property updated", "custom_property deleted",
			"custom_property_values updated")
		for _, d := range rc.Deliveries() {
			if d.Event != "custom_property_values" {
				continue
			}
			var p struct {
				Repository struct{ Name string }
				New        []github.CustomPropertyValue `json:"new_property_values"`
				Old        []github.CustomPropertyValue `json:"old_property_values"`
			}
			apptest.Must(t, "decode", json.Unmarshal(d.Body, &p))
			if len(p.New) == 0 || len(p.New) != len(p.Old) {
				t.Fatalf("values event %s", d.Body)
			}
		}
	})
}
