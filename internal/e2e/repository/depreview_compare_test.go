package repository_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"forgeapi/internal/apptest"
	"forgeapi/internal/repos"
)

var (
	basePkgs = []pkg{{"alpha", "1.0.0", false}, {"bravo", "1.0.0", true}, {"keep", "1.0.0", false}, {"tooling", "1.0.0", true}}
	headPkgs = []pkg{{"alpha", "2.0.0", false}, {"keep", "1.0.0", false}, {"charlie", "1.0.0", false}, {"tooling", "1.0.0", true}}
	movePkgs = []pkg{{"keep", "1.0.0", false}, {"echo", "1.0.0", false}}
)

// history is the git history every comparison test pushes:
//
//	main:          base ── mainOnly
//	                 └──── feature/deps (upgrade, add, remove in every
//	                       manifest; a moved manifest; a broken one)
type history struct {
	repo      *repos.Repository
	base      string // the merge base
	feature   string // head of feature/deps
	mainOnly  string // head of main, after the fork point
	unrelated string // head of orphan branch "unrelated"
}

// pushHistory builds and pushes the history to a new repository.
func pushHistory(t *testing.T, env *apptest.Env, owner string, opts apptest.RepoOpts) history {
	t.Helper()
	user := env.User(owner)
	h := history{repo: env.Repo(user, "app", opts)}
	c := newClone(t, env, h.repo, user)

	baseFiles := map[string]*string{
		"README.md":                ptr("# app\n"),
		"svc/old/requirements.txt": ptr(renderRequirements(movePkgs)),
		"broken/package.json":      ptr(`{"dependencies": {"zulu": "1.0.0"}}`),
	}
	headFiles := map[string]*string{
		"README.md":                ptr("# app, now with more dependencies\n"),
		"svc/old/requirements.txt": nil,
		"svc/new/requirements.txt": ptr(renderRequirements(movePkgs)),
		"broken/package.json":      ptr(`{"dependencies": {"zulu": `),
	}
	for _, k := range manifestKinds {
		baseFiles[k.path] = k.content(basePkgs)
		headFiles[k.path] = k.content(headPkgs)
	}
	h.base = c.commit("base", baseFiles)
	c.git("checkout", "-q", "-b", "feature/deps")
	h.feature = c.commit("upgrade, add and remove dependencies", headFiles)
	c.git("checkout", "-q", "main")
	mainCargo := slices.Clone(basePkgs)
	mainCargo[0].version = "3.0.0"
	h.mainOnly = c.commit("main moves on", map[string]*string{
		"rust/Cargo.toml":            manifestKinds[9].content(mainCargo),
		"main-only/requirements.txt": ptr("delta==1.0.0\n"),
	})
	c.git("checkout", "-q", "--orphan", "unrelated")
	c.git("rm", "-q", "-r", "-f", ".")
	h.unrelated = c.commit("unrelated history", map[string]*string{"go.mod": ptr("module x\n")})
	c.push("main", "feature/deps", "unrelated")
	return h
}

// featureChanges is what main...feature/deps must answer, in short form.
func featureChanges() []string {
	var want []string
	for _, k := range manifestKinds {
		sp := func(name, version string) string { return k.name(name) + "@" + k.version(version) }
		want = append(want,
			k.path+": removed "+sp("alpha", "1.0.0"),
			k.path+": removed "+sp("bravo", "1.0.0"),
			k.path+": added "+sp("alpha", "2.0.0"),
			k.path+": added "+sp("charlie", "1.0.0"))
	}
	want = append(want,
		"svc/old/requirements.txt: removed keep@1.0.0", "svc/old/requirements.txt: removed echo@1.0.0",
		"svc/new/requirements.txt: added keep@1.0.0", "svc/new/requirements.txt: added echo@1.0.0")
	slices.Sort(want)
	return want
}

func TestCompareEveryManifestType(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	importAdvisoryFiles(t, env)
	h := pushHistory(t, env, "octo", apptest.RepoOpts{})

	got := compareAll(t, env.Client(""), comparePath(h.repo, "main...feature/deps"), 100)
	if want := featureChanges(); !slices.Equal(keys(got), want) {
		t.Fatalf("main...feature/deps:\n got  %q\n want %q", keys(got), want)
	}
	assertOrdered(t, got)
	byKey := map[string]change{}
	for _, c := range got {
		byKey[c.key()] = c
	}
	for _, k := range manifestKinds {
		if c := byKey[k.path+": added "+k.name("charlie")+"@"+k.version("1.0.0")]; c.Ecosystem != k.ecosystem || c.PackageURL == "" {
			t.Errorf("%s: ecosystem %q package_url %q, want %q and a purl", k.path, c.Ecosystem, c.PackageURL, k.ecosystem)
		}
	}
	tests := []struct {
		key  string
		want change
	}{
		{"web/package-lock.json: removed alpha@1.0.0", change{Ecosystem: "npm", PackageURL: "pkg:npm/alpha@1.0.0", License: ptr("MIT"), Scope: "runtime",
			Vulnerabilities: []vulnerability{{"high", "GHSA-aaaa-bbbb-cccc", "Prototype pollution in alpha", "https://github.com/advisories/GHSA-aaaa-bbbb-cccc"}}}},
		{"web/package-lock.json: added alpha@2.0.0", change{Ecosystem: "npm", PackageURL: "pkg:npm/alpha@2.0.0", License: ptr("MIT"), Scope: "runtime",
			Vulnerabilities: []vulnerability{}}},
		{"web/package-lock.json: removed bravo@1.0.0", change{Ecosystem: "npm", PackageURL: "pkg:npm/bravo@1.0.0", License: ptr("MIT"), Scope: "development",
			Vulnerabilities: []vulnerability{}}},
		{"web/package-lock.json: added charlie@1.0.0", change{Ecosystem: "npm", PackageURL: "pkg:npm/charlie@1.0.0", License: ptr("MIT"), Scope: "runtime",
			Vulnerabilities: []vulnerability{{"moderate", "GHSA-cccc-dddd-eeee", "Regular expression denial of service in charlie", "https://github.com/advisories/GHSA-cccc-dddd-eeee"}}}},
		{"web/package.json: removed bravo@1.0.0", change{Ecosystem: "npm", PackageURL: "pkg:npm/bravo@1.0.0", Scope: "development", Vulnerabilities: []vulnerability{}}},
		{"py/requirements.txt: added charlie@1.0.0", change{Ecosystem: "pip", PackageURL: "pkg:pypi/charlie@1.0.0", Scope: "runtime",
			Vulnerabilities: []vulnerability{{"low", "GHSA-pppp-qqqq-rrrr", "charlie before 1.5 writes files outside the target directory.", "https://github.com/advisories/GHSA-pppp-qqqq-rrrr"}}}},
		{"rust/Cargo.lock: removed bravo@1.0.0", change{Ecosystem: "cargo", PackageURL: "pkg:cargo/bravo@1.0.0", Scope: "unknown",
			Vulnerabilities: []vulnerability{{"critical", "RUSTSEC-2024-0001", "Use after free in bravo", "https://github.com/advisories/RUSTSEC-2024-0001"}}}},
		{"go.mod: added example.com/charlie@v1.1.0", change{Ecosystem: "gomod", PackageURL: "pkg:golang/example.com/charlie@v1.1.0", Scope: "runtime",
			Vulnerabilities: []vulnerability{{"low", "GHSA-gggg-hhhh-iiii", "Header smuggling in example.com/charlie", "https://github.com/advisories/GHSA-gggg-hhhh-iiii"}}}},
		{"java/pom.xml: removed com.example:bravo@1.0.0", change{Ecosystem: "maven", PackageURL: "pkg:maven/com.example/bravo@1.0.0", Scope: "development", Vulnerabilities: []vulnerability{}}},
		{"php/composer.lock: added acme/alpha@2.0.0", change{Ecosystem: "composer", PackageURL: "pkg:composer/acme/alpha@2.0.0", License: ptr("MIT"), Scope: "runtime", Vulnerabilities: []vulnerability{}}},
		{".github/workflows/ci.yml: added octo/charlie@v1", change{Ecosystem: "actions", PackageURL: "pkg:githubactions/octo/charlie@v1",
			SourceRepositoryURL: ptr("https://github.com/octo/charlie"), Scope: "runtime", Vulnerabilities: []vulnerability{}}},
	}
	for _, tt := range tests {
		c, ok := byKey[tt.key]
		if !ok {
			t.Errorf("%s: missing", tt.key)
			continue
		}
		tt.want.ChangeType, tt.want.Manifest, tt.want.Name, tt.want.Version = c.ChangeType, c.Manifest, c.Name, c.Version
		gotJSON, _ := json.Marshal(c)
		wantJSON, _ := json.Marshal(tt.want)
		if string(gotJSON) != string(wantJSON) {
			t.Errorf("%s:\n got  %s\n want %s", tt.key, gotJSON, wantJSON)
		}
	}
}

// assertOrdered checks the platform's stable order: manifests by path,
// within one manifest removed items before added ones.
func assertOrdered(t *testing.T, got []change) {
	t.Helper()
	for i := 1; i < len(got); i++ {
		a, b := got[i-1], got[i]
		if a.Manifest > b.Manifest || (a.Manifest == b.Manifest && a.ChangeType == "added" && b.ChangeType == "removed") {
			t.Fatalf("items %d and %d out of order: %s, %s", i-1, i, a.key(), b.key())
		}
	}
}

func TestCompareUsesTheMergeBase(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	h := pushHistory(t, env, "octo", apptest.RepoOpts{})
	client := env.Client("")
	tests := []struct {
		basehead string
		want     []string
	}{
		// main moved on after the fork point: its own change is not in the diff.
		{"main...feature/deps", featureChanges()},
		{h.mainOnly + "..." + h.feature, featureChanges()},
		{h.base[:7] + "...refs/heads/feature/deps", featureChanges()},
		// The other way round, only main's changes since the fork point.
		{"feature/deps...main", []string{
			"main-only/requirements.txt: added delta@1.0.0",
			"rust/Cargo.toml: added alpha@3.0.0",
			"rust/Cargo.toml: removed alpha@1.0.0",
		}},
		// Head is an ancestor of base: nothing changed since the merge base.
		{"main..." + h.base, []string{}},
		{"feature/deps...feature/deps", []string{}},
	}
	for _, tt := range tests {
		got := compareAll(t, client, comparePath(h.repo, tt.basehead), 100)
		if !slices.Equal(keys(got), tt.want) {
			t.Errorf("%s:\n got  %q\n want %q", tt.basehead, keys(got), tt.want)
		}
	}
}

func TestCompareNameFilter(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	h := pushHistory(t, env, "octo", apptest.RepoOpts{})
	client := env.Client("")
	filter := func(prefix string) []string {
		var out []string
		for _, k := range featureChanges() {
			if strings.HasPrefix(k, prefix+": ") {
				out = append(out, k)
			}
		}
		return out
	}
	tests := []struct {
		name string
		want []string
	}{
		{"web/package-lock.json", filter("web/package-lock.json")},
		{"/rust/Cargo.toml", filter("rust/Cargo.toml")},
		{".github/workflows/ci.yml", filter(".github/workflows/ci.yml")},
		{"svc/old/requirements.txt", filter("svc/old/requirements.txt")},
		{"web", []string{}},                  // a directory is not a manifest path
		{"README.md", []string{}},            // changed, but not a manifest
		{"nope/package.json", []string{}},    // not in the repository
		{"broken/package.json", []string{}},  // cannot be parsed at head
		{"web/package-lock.jso", []string{}}, // a prefix of a path is not the path
	}
	for _, tt := range tests {
		got := compareAll(t, client, comparePath(h.repo, "main...feature/deps")+"?name="+tt.name, 100)
		if !slices.Equal(keys(got), tt.want) {
			t.Errorf("name=%s:\n got  %q\n want %q", tt.name, keys(got), tt.want)
		}
	}
}

func TestComparePages(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	importAdvisoryFiles(t, env)
	h := pushHistory(t, env, "octo", apptest.RepoOpts{})
	path := comparePath(h.repo, "main...feature/deps")
	whole := getJSON(t, env, path+"?per_page=100", "")
	if len(whole) != len(featureChanges()) {
		t.Fatalf("%d items, want %d", len(whole), len(featureChanges()))
	}
	// The dependency review action reads five items a page.
	paged := compareAll(t, env.Client(""), path, 5)
	wholeJSON, _ := json.Marshal(whole)
	pagedJSON, _ := json.Marshal(paged)
	if string(wholeJSON) != string(pagedJSON) {
		t.Fatalf("pages of 5 differ from one page:\n%s\n%s", pagedJSON, wholeJSON)
	}
	resp, _ := env.Do("GET", path+"?per_page=5&page=2", "", nil)
	link := resp.Header.Get("Link")
	last := (len(whole) + 4) / 5
	for _, want := range []string{`page=3&per_page=5>; rel="next"`, `page=1&per_page=5>; rel="prev"`, `rel="first"`,
		"page=" + jsonInt(last) + `&per_page=5>; rel="last"`, env.URL + path} {
		if !strings.Contains(link, want) {
			t.Errorf("Link %q lacks %q", link, want)
		}
	}
	// Default page size is 30.
	if first := getJSON(t, env, path, ""); len(first) != 30 {
		t.Errorf("default page: %d items, want 30", len(first))
	}
	if beyond := getJSON(t, env, path+"?page=99", ""); len(beyond) != 0 {
		t.Errorf("page 99: %d items, want none", len(beyond))
	}
}

func jsonInt(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestCompareErrors(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	h := pushHistory(t, env, "octo", apptest.RepoOpts{})
	owner := h.repo.Owner
	empty := env.Repo(owner, "empty")
	private := env.Repo(owner, "secret", apptest.RepoOpts{Private: true})
	fork := env.Repo(env.User("forker"), "app", apptest.RepoOpts{ForkOf: h.repo})
	privateFork := env.Repo(owner, "secret-fork", apptest.RepoOpts{Private: true, AdvancedSecurity: true, ForkOf: private})
	token := env.Token(owner, "repo")

	tests := []struct {
		path, token string
		status      int
		message     string
	}{
		{comparePath(h.repo, "main"), "", 400, "BASE...HEAD"},
		{comparePath(h.repo, "main..feature/deps"), "", 400, "BASE...HEAD"},
		{comparePath(h.repo, "...main"), "", 400, "BASE...HEAD"},
		{comparePath(h.repo, "main..."), "", 400, "BASE...HEAD"},
		{comparePath(h.repo, "%2E%2E%2E"), "", 400, "BASE...HEAD"},
		{comparePath(h.repo, ""), "", 400, "BASE...HEAD"},
		{comparePath(h.repo, "main...nope"), "", 404, "Not Found"},
		{comparePath(h.repo, "nope...main"), "", 404, "Not Found"},
		{comparePath(h.repo, "main...feature"), "", 404, "Not Found"},
		{comparePath(h.repo, "main...main~1"), "", 404, "Not Found"},
		{comparePath(h.repo, "main...feature/deps...main"), "", 404, "Not Found"},
		{comparePath(h.repo, "main..."+strings.Repeat("0", 40)), "", 404, "Not Found"},
		{comparePath(h.repo, "main...unrelated"), "", 404, "No common ancestor between main and unrelated."},
		{"/repos/octo/nope/dependency-graph/compare/main...main", "", 404, "Not Found"},
		{"/repos/nobody/app/dependency-graph/compare/main...main", "", 404, "Not Found"},
		{comparePath(empty, "main...main"), "", 404, "Not Found"},
		{comparePath(private, "main...main"), token, 403, "Advanced Security must be enabled for this repository to use dependency review."},
		{comparePath(private, "main"), token, 403, "Advanced Security must be enabled"},
		{comparePath(fork, "main...feature/deps"), "", 403, "Forbidden"},
		{comparePath(privateFork, "main...main"), token, 403, "Forbidden"},
		{comparePath(h.repo, "main...feature/deps?per_page=x"), "", 422, "Validation Failed"},
		{comparePath(h.repo, "main...feature/deps?page=-1"), "", 422, "Validation Failed"},
	}
	for _, tt := range tests {
		resp, body := env.Do("GET", tt.path, tt.token, nil)
		var e struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(body, &e)
		if resp.StatusCode != tt.status || !strings.Contains(e.Message, tt.message) {
			t.Errorf("GET %s: %d %s, want %d %q", tt.path, resp.StatusCode, body, tt.status, tt.message)
		}
	}
}

func TestCompareCredentials(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	h := pushHistory(t, env, "octo", apptest.RepoOpts{Private: true, AdvancedSecurity: true})
	owner := h.repo.Owner
	other := env.User("stranger")
	org := env.Org("acme", owner)
	orgRepo := env.Repo(org, "svc", apptest.RepoOpts{Private: true, AdvancedSecurity: true})
	orgClone := newClone(t, env, orgRepo, owner)
	orgClone.commit("base", map[string]*string{"go.mod": ptr("module x\n")})
	orgClone.git("checkout", "-q", "-b", "topic")
	orgClone.commit("add", map[string]*string{"go.mod": ptr(renderGoMod([]pkg{{"example.com/a", "v1.0.0", false}}))})
	orgClone.push("main", "topic")

	path := comparePath(h.repo, "main...feature/deps")
	orgPath := comparePath(orgRepo, "main...topic")
	tests := []struct {
		name, path, token string
		status            int
	}{
		{"anonymous on a private repository", path, "", 404},
		{"classic token with repo", path, env.Token(owner, "repo"), 200},
		{"classic token without repo", path, env.Token(owner, "read:org"), 404},
		{"classic token of a stranger", path, env.Token(other, "repo"), 404},
		{"fine-grained contents:read", path, env.FineGrainedToken(owner, owner, []*repos.Repository{h.repo}, "contents:read"), 200},
		{"fine-grained contents:write", path, env.FineGrainedToken(owner, owner, apptest.AllRepos, "contents:write"), 200},
		{"fine-grained metadata only", path, env.FineGrainedToken(owner, owner, []*repos.Repository{h.repo}, "metadata:read"), 403},
		{"fine-grained not selecting the repository", path, env.FineGrainedToken(owner, owner, nil, "contents:read"), 404},
		{"app user token contents:read", path, env.AppUserToken(owner, owner, apptest.AllRepos, "contents:read"), 200},
		{"installation token contents:read", orgPath, env.InstallationToken(org, []*repos.Repository{orgRepo}, "contents:read"), 200},
		{"installation token issues:read", orgPath, env.InstallationToken(org, []*repos.Repository{orgRepo}, "issues:read"), 403},
		{"installation token of another repository", orgPath, env.InstallationToken(org, []*repos.Repository{}, "contents:read"), 404},
	}
	for _, tt := range tests {
		resp, body := env.Do("GET", tt.path, tt.token, nil)
		if resp.StatusCode != tt.status {
			t.Errorf("%s: %d %s, want %d", tt.name, resp.StatusCode, body, tt.status)
			continue
		}
		if got := resp.Header.Get("X-Accepted-Service-Permissions"); got != "contents=read" {
			t.Errorf("%s: X-Accepted-Service-Permissions %q", tt.name, got)
		}
	}
	// A public repository needs no credentials, and a fine-grained token
	// without contents permission reads it too.
	public := pushHistory(t, env, "public-owner", apptest.RepoOpts{})
	publicPath := comparePath(public.repo, "main...feature/deps")
	for name, token := range map[string]string{
		"anonymous":               "",
		"classic without scopes":  env.Token(other),
		"fine-grained, no access": env.FineGrainedToken(other, other, nil, "metadata:read"),
	} {
		if resp, body := env.Do("GET", publicPath, token, nil); resp.StatusCode != 200 {
			t.Errorf("public repository, %s: %d %s", name, resp.StatusCode, body)
		}
	}
}

// TestCompareMovedManifests moves a manifest of every supported format to
// another directory: its dependencies are removed at the old path and
// added at the new one, as the platform reports a move.
func TestCompareMovedManifests(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	repo := env.Repo(env.User("octo"), "app")
	c := newClone(t, env, repo, repo.Owner)
	before, after := map[string]*string{}, map[string]*string{}
	var want []string
	for _, k := range manifestKinds {
		from, to := "old/"+k.path, "new/"+k.path
		before[from] = k.content(basePkgs)
		after[from], after[to] = nil, k.content(basePkgs)
		for _, p := range basePkgs {
			dep := k.name(p.name) + "@" + k.version(p.version)
			want = append(want, from+": removed "+dep, to+": added "+dep)
		}
	}
	slices.Sort(want)
	c.commit("manifests", before)
	c.git("checkout", "-q", "-b", "move")
	c.commit("move every manifest", after)
	c.push("main", "move")

	got := compareAll(t, env.Client(""), comparePath(repo, "main...move"), 100)
	if !slices.Equal(keys(got), want) {
		t.Fatalf("main...move:\n got  %q\n want %q", keys(got), want)
	}
	assertOrdered(t, got)
}
