package e2e_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"forgeapi/internal/apptest"
)

// TestReferenceTables reads the tables through go-github as a client
// does: the 13 commonly used licenses (3 featured), a license with its
// rules and text, a hidden one by key, the gitignore templates, and the
// emojis; unknown names are 404.
func TestReferenceTables(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	c := env.Client(env.Token(env.User("octo"), "repo"))
	ctx := apptest.Ctx()

	list, _, err := c.Licenses.List(ctx, nil)
	apptest.Must(t, "list licenses", err)
	var keys []string
	for _, l := range list {
		keys = append(keys, l.GetKey())
	}
	if strings.Join(keys, " ") != "agpl-3.0 apache-2.0 bsd-2-clause bsd-3-clause bsl-1.0 cc0-1.0 epl-2.0 gpl-2.0 gpl-3.0 lgpl-2.1 mit mpl-2.0 unlicense" {
		t.Errorf("licenses %v", keys)
	}
	resp, body := env.Do("GET", "/licenses?featured=true&per_page=2", "", nil)
	var featured []struct{ Key string }
	if err := json.Unmarshal(body, &featured); err != nil || len(featured) != 2 || featured[0].Key != "apache-2.0" || !strings.Contains(resp.Header.Get("Link"), `rel="next"`) {
		t.Errorf("featured, first page of 2: %s %s", body, resp.Header.Get("Link"))
	}

	mit, _, err := c.Licenses.Get(ctx, "MIT")
	apptest.Must(t, "get mit", err)
	if mit.GetSPDXID() != "MIT" || mit.GetName() != "MIT License" || !mit.GetFeatured() || mit.GetURL() != env.URL+"/licenses/mit" ||
		!strings.Contains(mit.GetBody(), "Permission is hereby granted") || len(mit.GetPermissions()) == 0 || mit.GetImplementation() == "" {
		t.Errorf("mit: %+v", mit)
	}
	if l, _, err := c.Licenses.Get(ctx, "wtfpl"); err != nil || l.GetSPDXID() != "WTFPL" {
		t.Errorf("a hidden license by key: %v %v", l, err)
	}
	if _, resp, err := c.Licenses.Get(ctx, "nope"); apptest.ResponseStatus(resp) != http.StatusNotFound {
		t.Errorf("unknown license: %v", err)
	}

	names, _, err := c.Gitignores.List(ctx)
	apptest.Must(t, "list gitignore", err)
	if len(names) < 100 || !slices.Contains(names, "Go") || !slices.Contains(names, "C") {
		t.Errorf("%d gitignore templates: %v", len(names), names)
	}
	goTemplate, _, err := c.Gitignores.Get(ctx, "go")
	apptest.Must(t, "get Go", err)
	if goTemplate.GetName() != "Go" || !strings.Contains(goTemplate.GetSource(), "*.test") {
		t.Errorf("Go template: %+v", goTemplate)
	}
	resp, body = env.Do("GET", "/gitignore/templates/Go", "", nil, "Accept", "application/vnd.github.raw")
	if resp.StatusCode != http.StatusOK || string(body) != goTemplate.GetSource() {
		t.Errorf("raw Go template: %d %q", resp.StatusCode, body)
	}
	if _, resp, err := c.Gitignores.Get(ctx, "Nope"); apptest.ResponseStatus(resp) != http.StatusNotFound {
		t.Errorf("unknown template: %v", err)
	}

	emojis, _, err := c.Emojis.List(ctx)
	apptest.Must(t, "emojis", err)
	if len(emojis) < 1500 || emojis["+1"] != "https://github.githubassets.com/images/icons/emoji/unicode/1f44d.png?v8" ||
		emojis["us"] != "https://github.githubassets.com/images/icons/emoji/unicode/1f1fa-1f1f8.png?v8" {
		t.Errorf("%d emojis, +1 %q, us %q", len(emojis), emojis["+1"], emojis["us"])
	}

	cocs, _, err := c.CodesOfConduct.List(ctx)
	apptest.Must(t, "codes of conduct", err)
	if len(cocs) != 2 || cocs[0].GetKey() != "citizen_code_of_conduct" || cocs[1].GetKey() != "contributor_covenant" ||
		cocs[1].GetName() != "Contributor Covenant" || cocs[1].GetURL() != env.URL+"/codes_of_conduct/contributor_covenant" ||
		cocs[0].Body != nil {
		t.Errorf("codes of conduct: %v", cocs)
	}
	covenant, _, err := c.CodesOfConduct.Get(ctx, "contributor_covenant")
	apptest.Must(t, "contributor covenant", err)
	if !strings.HasPrefix(covenant.GetBody(), "# Contributor Covenant Code of Conduct\n") || strings.Contains(covenant.GetBody(), "+++") ||
		covenant.GetName() != "Contributor Covenant" {
		t.Errorf("contributor covenant: %.200q", covenant.GetBody())
	}
	if citizen, _, err := c.CodesOfConduct.Get(ctx, "citizen_code_of_conduct"); err != nil || !strings.Contains(citizen.GetBody(), "## 1. Purpose") {
		t.Errorf("citizen code of conduct: %v %v", citizen, err)
	}
	if _, resp, err := c.CodesOfConduct.Get(ctx, "nope"); apptest.ResponseStatus(resp) != http.StatusNotFound {
		t.Errorf("unknown code of conduct: %v", err)
	}
}
