package agents_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"forgeapi/internal/apptest"
)

func TestPutGetDeleteSource(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.bossPush(t, apptest.WorkTree(t, map[string]string{"agents/a.md": "a"}), f.repo)

	put := f.putSource(t, f.acme, nil)
	if put.Organization.ID != f.acme.ID || put.Organization.Login != "acme" || put.Organization.AvatarURL == nil ||
		!strings.HasPrefix(*put.Organization.AvatarURL, f.env.URL+"/avatars/") {
		t.Errorf("organization %+v", put.Organization)
	}
	if put.Repository == nil || put.Repository.ID != f.repo.ID || put.Repository.Name != ".service-private" ||
		put.Repository.FullName != "acme/.service-private" {
		t.Errorf("repository %+v", put.Repository)
	}
	if put.Ruleset == nil || put.Ruleset.ID == 0 || put.Ruleset.Name != "Protect custom agents" || put.Ruleset.Enforcement != "active" {
		t.Fatalf("ruleset %+v", put.Ruleset)
	}

	// GET shows organization {id, login} and the repository, no more.
	b := f.mustCall(t, 200, "GET", base+"/source", f.bossToken, "")
	want := `{"organization":{"id":` + itoa(f.acme.ID) + `,"login":"acme"},"repository":{"id":` + itoa(f.repo.ID) +
		`,"name":".service-private","full_name":"acme/.service-private"}}`
	if strings.TrimSpace(string(b)) != want {
		t.Errorf("GET source:\n got %s\nwant %s", b, want)
	}

	// DELETE removes the association and the ruleset, never the files.
	f.mustCall(t, 204, "DELETE", base+"/source", f.bossToken, "")
	if n := rulesetCount(t, f); n != 0 {
		t.Errorf("%d rulesets after DELETE", n)
	}
	if b := f.mustCall(t, 200, "GET", base, f.bossToken, ""); strings.TrimSpace(string(b)) != `{"custom_agents":null}` {
		t.Errorf("agents after DELETE: %s", b)
	}
	f.mustCall(t, 404, "GET", base+"/source", f.bossToken, "")
	f.mustCall(t, 404, "DELETE", base+"/source", f.bossToken, "")
	clone := t.TempDir()
	apptest.Git(t, clone, "clone", "-q", f.gitURL(f.repo, f.boss, f.bossToken), "c")
	f.putSource(t, f.acme, nil)
	if list, _ := f.listAgents(t, ""); names(list) != "a=agents/a.md" {
		t.Errorf("files after DELETE and PUT: %s", names(list))
	}
}

func TestPutSourceMovesSourceAndRuleset(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	beta, betaRepo := f.org(t, "beta")
	f.bossPush(t, apptest.WorkTree(t, map[string]string{"agents/acme.md": "a"}), f.repo)
	f.bossPush(t, apptest.WorkTree(t, map[string]string{"agents/beta.md": "b"}), betaRepo)

	first := f.putSource(t, f.acme, nil)
	moved := f.putSource(t, beta, nil)
	if moved.Organization.Login != "beta" || moved.Repository.ID != betaRepo.ID || moved.Ruleset == nil ||
		moved.Ruleset.ID != first.Ruleset.ID {
		t.Fatalf("moved source %+v, ruleset %+v (first ruleset %+v)", moved.Organization, moved.Ruleset, first.Ruleset)
	}
	if n := rulesetCount(t, f); n != 1 {
		t.Fatalf("%d rulesets after moving, want 1", n)
	}
	if list, _ := f.listAgents(t, ""); names(list) != "beta=agents/beta.md" {
		t.Fatalf("agents after move: %s", names(list))
	}
	var src sourceAnswer
	decode(t, f.mustCall(t, 200, "GET", base+"/source", f.bossToken, ""), &src)
	if src.Organization.Login != "beta" || src.Repository.FullName != "beta/.service-private" {
		t.Fatalf("GET after move: %+v %+v", src.Organization, src.Repository)
	}

	// The ruleset moved: dev may now change acme's agents, not beta's.
	work := apptest.WorkTree(t, map[string]string{"agents/dev.md": "d"})
	if out, err := apptest.TryGit(t, work, "push", f.gitURL(f.repo, f.dev, f.devToken), "HEAD:refs/heads/side"); err != nil {
		t.Fatalf("push to the former source: %v\n%s", err, out)
	}
	if out, err := apptest.TryGit(t, work, "push", f.gitURL(betaRepo, f.dev, f.devToken), "HEAD:refs/heads/side"); err == nil ||
		!strings.Contains(out, "Protect custom agents") {
		t.Fatalf("push to the new source: %v\n%s", err, out)
	}

	// The same PUT twice answers the same.
	again := f.putSource(t, beta, nil)
	if again.Ruleset == nil || again.Ruleset.ID != first.Ruleset.ID || again.Repository.ID != betaRepo.ID {
		t.Fatalf("repeated PUT: %+v", again)
	}
}

func TestCreateRulesetFalse(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	put := f.putSource(t, f.acme, ptr(false))
	if put.Ruleset != nil || rulesetCount(t, f) != 0 {
		t.Fatalf("create_ruleset false made a ruleset: %+v", put.Ruleset)
	}
	work := apptest.WorkTree(t, map[string]string{"agents/x.md": "x"})
	apptest.Git(t, work, "push", "-q", f.gitURL(f.repo, f.dev, f.devToken), "main")

	// Turned on, the ruleset protects; turned off again, it is removed.
	if put = f.putSource(t, f.acme, ptr(true)); put.Ruleset == nil {
		t.Fatal("create_ruleset true made no ruleset")
	}
	apptest.Commit(t, work, "edit", map[string]string{"agents/x.md": "x2"})
	if out, err := apptest.TryGit(t, work, "push", f.gitURL(f.repo, f.dev, f.devToken), "main"); err == nil {
		t.Fatalf("push with the ruleset on passed:\n%s", out)
	}
	if put = f.putSource(t, f.acme, ptr(false)); put.Ruleset != nil || rulesetCount(t, f) != 0 {
		t.Fatalf("create_ruleset false kept the ruleset: %+v", put.Ruleset)
	}
	apptest.Git(t, work, "push", "-q", f.gitURL(f.repo, f.dev, f.devToken), "main")
}

func TestPutSourceValidation(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	outsider := f.env.Org("outsider", f.boss)
	f.env.Repo(outsider, ".service-private")
	bare, _ := f.org(t, "bare")
	_, err := f.env.Q().ExecContext(context.Background(), `DELETE FROM repositories WHERE owner_id = $1`, bare.ID)
	apptest.Must(t, "remove bare's repository", err)
	orgID := itoa(f.acme.ID)

	for _, c := range []struct {
		name, body string
		status     int
		field      string
		code       string
		message    string
	}{
		{"empty body", "", 422, "organization_id", "missing_field", ""},
		{"empty object", `{}`, 422, "organization_id", "missing_field", ""},
		{"null id", `{"organization_id": null}`, 422, "organization_id", "missing_field", ""},
		{"only create_ruleset", `{"create_ruleset": true}`, 422, "organization_id", "missing_field", ""},
		{"string id", `{"organization_id": "` + orgID + `"}`, 422, "organization_id", "invalid", ""},
		{"fractional id", `{"organization_id": 1.5}`, 422, "organization_id", "invalid", ""},
		{"zero id", `{"organization_id": 0}`, 422, "organization_id", "invalid", ""},
		{"negative id", `{"organization_id": -3}`, 422, "organization_id", "invalid", ""},
		{"create_ruleset not a boolean", `{"organization_id": ` + orgID + `, "create_ruleset": "yes"}`, 422, "create_ruleset", "invalid", ""},
		{"malformed JSON", `{"organization_id": `, 400, "", "", "Problems parsing JSON"},
		{"array body", `[1]`, 400, "", "", ""},
		{"unknown organization", `{"organization_id": 999999}`, 422, "organization_id", "custom", "is not an organization of the enterprise acme-corp"},
		{"a user's id", `{"organization_id": ` + itoa(f.dev.ID) + `}`, 422, "organization_id", "custom", "is not an organization of the enterprise"},
		{"organization of no enterprise", `{"organization_id": ` + itoa(outsider.ID) + `}`, 422, "organization_id", "custom", "is not an organization of the enterprise"},
		{"no .service-private", `{"organization_id": ` + itoa(bare.ID) + `}`, 422, "organization_id", "custom", "bare has no .service-private repository"},
	} {
		resp, b := f.call("PUT", base+"/source", f.bossToken, c.body)
		if resp.StatusCode != c.status {
			t.Errorf("%s: %d, want %d\n%s", c.name, resp.StatusCode, c.status, b)
			continue
		}
		var e apiError
		decode(t, b, &e)
		if c.field != "" && (len(e.Errors) != 1 || e.Errors[0].Field != c.field || e.Errors[0].Code != c.code) {
			t.Errorf("%s: errors %+v, want %s/%s", c.name, e.Errors, c.field, c.code)
		}
		if c.message != "" && !strings.Contains(e.Message, c.message) {
			t.Errorf("%s: message %q, want it to say %q", c.name, e.Message, c.message)
		}
		if c.code == "custom" && (e.Errors[0].Message != e.Message || e.Errors[0].Resource != "CustomAgentsSource") {
			t.Errorf("%s: field error %+v, message %q", c.name, e.Errors[0], e.Message)
		}
	}
	f.mustCall(t, 404, "GET", base+"/source", f.bossToken, "")
}

func TestUnknownEnterprise(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/enterprises/nope/assistant/custom-agents", ""},
		{"GET", "/enterprises/nope/assistant/custom-agents/source", ""},
		{"PUT", "/enterprises/nope/assistant/custom-agents/source", `{"organization_id": ` + itoa(f.acme.ID) + `}`},
		{"DELETE", "/enterprises/nope/assistant/custom-agents/source", ""},
	} {
		f.mustCall(t, 404, c.method, c.path, f.bossToken, c.body)
	}
	// The slug is not case sensitive.
	f.mustCall(t, 200, "GET", "/enterprises/ACME-Corp/assistant/custom-agents", f.bossToken, "")
}

func TestClientSettingsFile(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	work := apptest.WorkTree(t, map[string]string{".service/assistant/settings.json": "{\n  \"model\": \"x\",\n}\n"})
	f.bossPush(t, work, f.repo)

	resp, b := f.call("PUT", base+"/source", f.bossToken, `{"organization_id": `+itoa(f.acme.ID)+`}`)
	var e apiError
	decode(t, b, &e)
	if resp.StatusCode != 422 || len(e.Errors) != 1 || e.Errors[0].Field != "organization_id" ||
		!strings.Contains(e.Message, ".service/assistant/settings.json in acme/.service-private is not valid") ||
		!strings.Contains(e.Errors[0].Message, "line 3, column 1") {
		t.Fatalf("invalid settings: %d %s", resp.StatusCode, b)
	}
	f.mustCall(t, 404, "GET", base+"/source", f.bossToken, "")

	for _, c := range []struct{ content, problem string }{
		{"[1, 2]", "not a JSON object"},
		{"", "unexpected end of JSON input"},
		{`{"a": 1} {"b": 2}`, "invalid character"},
	} {
		content := c.content
		if content == "" {
			content = "\n" // apptest.Commit deletes on ""; an empty-looking file
		}
		apptest.Commit(t, work, "settings", map[string]string{".service/assistant/settings.json": content})
		f.bossPush(t, work, f.repo)
		resp, b := f.call("PUT", base+"/source", f.bossToken, `{"organization_id": `+itoa(f.acme.ID)+`}`)
		if resp.StatusCode != 422 || !strings.Contains(string(b), c.problem) {
			t.Errorf("settings %q: %d %s", c.content, resp.StatusCode, b)
		}
	}

	// A directory where the file should be is refused too.
	apptest.Commit(t, work, "settings dir", map[string]string{".service/assistant/settings.json": ""})
	apptest.Commit(t, work, "settings dir", map[string]string{".service/assistant/settings.json/x": "{}"})
	f.bossPush(t, work, f.repo)
	resp, b = f.call("PUT", base+"/source", f.bossToken, `{"organization_id": `+itoa(f.acme.ID)+`}`)
	if resp.StatusCode != 422 || !strings.Contains(string(b), "is not a regular file") {
		t.Errorf("settings directory: %d %s", resp.StatusCode, b)
	}

	// A valid object is accepted; an invalid one on another branch is not read.
	apptest.Commit(t, work, "fix", map[string]string{".service/assistant/settings.json/x": ""})
	apptest.Commit(t, work, "fix", map[string]string{".service/assistant/settings.json": `{"model": "x", "tools": []}`})
	f.bossPush(t, work, f.repo)
	apptest.Git(t, work, "checkout", "-q", "-b", "wip")
	apptest.Commit(t, work, "break on wip", map[string]string{".service/assistant/settings.json": "{"})
	apptest.Git(t, work, "push", "-q", f.gitURL(f.repo, f.boss, f.bossToken), "wip")
	f.putSource(t, f.acme, nil)
}

func rulesetCount(t *testing.T, f *fixture) int {
	t.Helper()
	var n int
	apptest.Must(t, "count rulesets", f.env.Q().QueryRowContext(context.Background(),
		`SELECT count(*) FROM rulesets WHERE enterprise_id = $1`, f.ent.ID).Scan(&n))
	return n
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
