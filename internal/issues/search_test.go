package issues_test

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/store"
)

// TestSearchIssues searches issues and pull requests through go-github
// as bots and people do: a bot looks for its open pull request by head
// branch before opening another; qualifiers (repo, org, user, is, state,
// author, assignee, label and -label, no:, in:, comments, created),
// words and "phrases", negation, sort and order, paging and
// total_count. A private repository's issues count only for those who
// may read it, and a query that cannot be read is a 422.
func TestSearchIssues(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo, bob, eve := env.User("octo"), env.User("bob"), env.User("eve")
	env.Repo(octo, "hello")
	env.Repo(octo, "secret", apptest.RepoOpts{Private: true})
	token := env.Token(octo, "repo")
	c := env.Client(token)
	bobC := env.Client(env.Token(bob, "public_repo"))
	eveC := env.Client(env.Token(eve, "repo"))

	mk := func(repo, title, body string, labels ...string) *github.Issue {
		t.Helper()
		is, _, err := c.Issues.Create(ctx, "octo", repo, github.CreateIssueRequest{Title: title, Body: github.Ptr(body), Labels: labels})
		apptest.Must(t, "issue "+title, err)
		return is
	}
	crash := mk("hello", "Crash on start", "A null pointer when the config is empty", "bug")
	mk("hello", "Docs typo", "README says teh", "documentation")
	mk("hello", "Crash in the parser", "Stack overflow", "bug", "wontfix")
	mk("secret", "Crash leak", "private crash")
	_, _, err := bobC.Issues.CreateComment(ctx, "octo", "hello", crash.GetNumber(), github.IssueCommentRequest{Body: "Me too"})
	apptest.Must(t, "comment", err)
	work := apptest.WorkTree(t, map[string]string{"README.md": "# hello\n"})
	apptest.Git(t, work, "push", "-q", env.GitURL("octo", "hello", "octo", token), "HEAD:refs/heads/main")
	apptest.Commit(t, work, "Bump deps", map[string]string{"deps.txt": "v2\n"})
	apptest.Git(t, work, "push", "-q", env.GitURL("octo", "hello", "octo", token), "HEAD:refs/heads/renovate/deps")

	titles := func(t *testing.T, client *github.Client, q string, opts *github.SearchOptions) ([]string, int) {
		t.Helper()
		res, _, err := client.Search.Issues(ctx, q, opts)
		apptest.Must(t, "search "+q, err)
		var out []string
		for _, is := range res.Issues {
			out = append(out, is.GetTitle())
		}
		if res.GetIncompleteResults() {
			t.Fatalf("%s: incomplete results", q)
		}
		return out, res.GetTotal()
	}
	apptest.Step(t, "a bot finds its pull request by head branch", func(t *testing.T) {
		const q = "is:pr is:open head:renovate/deps repo:octo/hello"
		if found, total := titles(t, c, q, nil); total != 0 || len(found) != 0 {
			t.Fatalf("before opening: %v", found)
		}
		_, _, err := c.PullRequests.Create(ctx, "octo", "hello", github.CreatePullRequest{Title: github.Ptr("Update dependencies"),
			Head: "renovate/deps", Base: "main"})
		apptest.Must(t, "open", err)
		if found, total := titles(t, c, q, nil); total != 1 || found[0] != "Update dependencies" {
			t.Fatalf("after opening: %v (%d)", found, total)
		}
		if found, _ := titles(t, c, "is:pr base:main repo:octo/hello", nil); len(found) != 1 {
			t.Fatalf("base:main %v", found)
		}
	})
	apptest.Step(t, "qualifiers and words", func(t *testing.T) {
		for _, tc := range []struct {
			q    string
			want []string
		}{
			{"crash repo:octo/hello", []string{"Crash in the parser", "Crash on start"}},
			{"crash -wontfix is:issue user:octo -label:wontfix -is:private", []string{"Crash on start"}},
			{`"null pointer" org:octo`, []string{"Crash on start"}},
			{"teh in:body is:issue repo:octo/hello", []string{"Docs typo"}},
			{"teh in:title repo:octo/hello", nil},
			{"label:bug label:wontfix repo:octo/hello", []string{"Crash in the parser"}},
			{"is:issue no:label repo:octo/hello", nil},
			{"commenter:bob repo:octo/hello", []string{"Crash on start"}},
			{"comments:>=1 repo:octo/hello", []string{"Crash on start"}},
			{"author:octo is:closed repo:octo/hello", nil},
			{"is:issue created:>2000-01-01 label:documentation", []string{"Docs typo"}},
			{"is:issue assignee:octo", nil},
		} {
			got, total := titles(t, c, tc.q, nil)
			if strings.Join(got, "|") != strings.Join(tc.want, "|") || total != len(tc.want) {
				t.Errorf("%q: %v (%d), want %v", tc.q, got, total, tc.want)
			}
		}
	})
	apptest.Step(t, "sort, order and pages", func(t *testing.T) {
		got, _ := titles(t, c, "repo:octo/hello is:issue", &github.SearchOptions{Sort: "comments", Order: "desc"})
		if got[0] != "Crash on start" {
			t.Fatalf("by comments: %v", got)
		}
		got, _ = titles(t, c, "repo:octo/hello is:issue", &github.SearchOptions{Sort: "created", Order: "asc"})
		if strings.Join(got, "|") != "Crash on start|Docs typo|Crash in the parser" {
			t.Fatalf("created asc: %v", got)
		}
		res, resp, err := c.Search.Issues(ctx, "repo:octo/hello", &github.SearchOptions{ListOptions: github.ListOptions{PerPage: 2}})
		apptest.Must(t, "page", err)
		if res.GetTotal() != 4 || len(res.Issues) != 2 || resp.NextPage != 2 || res.Issues[0].GetRepositoryURL() == "" {
			t.Fatalf("page of 2: %d %d next %d", res.GetTotal(), len(res.Issues), resp.NextPage)
		}
	})
	apptest.Step(t, "the text-match media type", func(t *testing.T) {
		res, _, err := c.Search.Issues(ctx, `"null pointer" repo:octo/hello`, &github.SearchOptions{TextMatch: true})
		apptest.Must(t, "search", err)
		if len(res.Issues) != 1 || len(res.Issues[0].TextMatches) != 1 {
			t.Fatalf("text-match search: %+v", res.Issues)
		}
		m := res.Issues[0].TextMatches[0]
		if m.GetProperty() != "body" || m.GetObjectType() != "Issue" || m.GetObjectURL() != crash.GetURL() ||
			m.GetFragment() != "A null pointer when the config is empty" || len(m.Matches) != 1 ||
			m.Matches[0].GetText() != "null pointer" || !slices.Equal(m.Matches[0].Indices, []int{2, 14}) {
			t.Errorf("text match %+v", m)
		}
		res, _, err = c.Search.Issues(ctx, "crash repo:octo/hello is:issue", &github.SearchOptions{TextMatch: true, Sort: "created", Order: "asc"})
		apptest.Must(t, "search", err)
		if ms := res.Issues[0].TextMatches; len(ms) != 1 || ms[0].GetProperty() != "title" || ms[0].GetFragment() != "Crash on start" ||
			!slices.Equal(ms[0].Matches[0].Indices, []int{0, 5}) {
			t.Errorf("title match %+v", ms)
		}
	})
	apptest.Step(t, "private issues count only for readers", func(t *testing.T) {
		if got, total := titles(t, c, "crash leak", nil); total != 1 || got[0] != "Crash leak" {
			t.Fatalf("owner: %v", got)
		}
		for name, client := range map[string]*github.Client{"eve": eveC, "bob": bobC, "anonymous": env.Client("")} {
			if got, total := titles(t, client, "crash", nil); total != 2 || strings.Contains(strings.Join(got, "|"), "leak") {
				t.Errorf("%s sees %v (%d)", name, got, total)
			}
		}
	})
	apptest.Step(t, "a page across repositories names each issue's repository and association", func(t *testing.T) {
		env.Repo(bob, "tools")
		bobRepoC := env.Client(env.Token(bob, "repo"))
		for _, is := range []struct {
			client      *github.Client
			owner, repo string
			title       string
		}{{c, "octo", "hello", "Flaky one"}, {bobRepoC, "bob", "tools", "Flaky two"}, {c, "bob", "tools", "Flaky three"}} {
			_, _, err := is.client.Issues.Create(ctx, is.owner, is.repo, github.CreateIssueRequest{Title: is.title})
			apptest.Must(t, "issue "+is.title, err)
		}
		res, _, err := c.Search.Issues(ctx, "flaky", nil)
		apptest.Must(t, "search", err)
		got := map[string]string{}
		for _, is := range res.Issues {
			got[is.GetTitle()] = strings.TrimPrefix(is.GetRepositoryURL(), env.URL+"/repos/") + " " + is.GetAuthorAssociation()
		}
		want := map[string]string{"Flaky one": "octo/hello OWNER", "Flaky two": "bob/tools OWNER", "Flaky three": "bob/tools NONE"}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("got %v, want %v", got, want)
		}
	})
	apptest.Step(t, "refusals", func(t *testing.T) {
		for _, q := range []string{"", "created:yesterday", "is:nonsense", "comments:>x", strings.Repeat("a", 257)} {
			resp, body := env.Do("GET", "/search/issues?q="+q, token, nil)
			if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(string(body), `"Validation Failed"`) {
				t.Errorf("q=%.20s: %d %s", q, resp.StatusCode, body)
			}
		}
		resp, _ := env.Do("GET", "/search/issues?q=crash&page=11&per_page=100", token, nil)
		if resp.StatusCode != http.StatusUnprocessableEntity {
			t.Errorf("beyond 1000 results: %d", resp.StatusCode)
		}
		resp, _ = env.Do("GET", "/search/issues?q=crash&sort=stars", token, nil)
		if resp.StatusCode != http.StatusUnprocessableEntity {
			t.Errorf("sort=stars: %d", resp.StatusCode)
		}
	})
}

// TestSearchLabels searches a repository's labels by words in their names
// and descriptions through go-github; a private repository's labels are a
// 404 to a stranger, and a missing repository_id a 422.
func TestSearchLabels(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo, eve := env.User("octo"), env.User("eve")
	repo := env.Repo(octo, "secret", apptest.RepoOpts{Private: true, DefaultLabels: true})
	c := env.Client(env.Token(octo, "repo"))
	_, _, err := c.Issues.CreateLabel(ctx, "octo", "secret", github.CreateIssueLabelRequest{Name: "bug: crash", Color: github.Ptr("ff0000")})
	apptest.Must(t, "label", err)

	names := func(q string, opts *github.SearchOptions) string {
		t.Helper()
		res, _, err := c.Search.Labels(ctx, repo.ID, q, opts)
		apptest.Must(t, "search "+q, err)
		var out []string
		for _, l := range res.Labels {
			out = append(out, l.GetName())
		}
		if res.GetTotal() != len(out) {
			t.Fatalf("%s: total %d for %d", q, res.GetTotal(), len(out))
		}
		return strings.Join(out, "|")
	}
	for q, want := range map[string]string{
		"bug":             "bug|bug: crash",
		"bug -crash":      "bug",
		"request":         "duplicate|enhancement|question", // "...pull request...", "...or request", "...is requested"
		"\"good first\"":  "good first issue",
		"nothing-matches": "",
	} {
		if got := names(q, nil); got != want {
			t.Errorf("%s: %s, want %s", q, got, want)
		}
	}
	if got := names("bug", &github.SearchOptions{Sort: "created", Order: "desc"}); got != "bug: crash|bug" {
		t.Errorf("newest first: %s", got)
	}
	path := "/search/labels?q=bug&repository_id=" + strconv.FormatInt(repo.ID, 10)
	if resp, body := env.Do("GET", path, env.Token(eve, "repo"), nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("stranger: %d %s", resp.StatusCode, body)
	}
	if resp, body := env.Do("GET", "/search/labels?q=bug", env.Token(octo, "repo"), nil); resp.StatusCode != http.StatusUnprocessableEntity {
		t.Errorf("no repository_id: %d %s", resp.StatusCode, body)
	}
}

// TestSearchWordsUseTheTextIndex: words in titles and bodies are found
// through the database's text index (SQLite's trigram FTS5 tables, kept
// by triggers as issues are opened and edited), short words and phrases
// included; an edited title is found by its new words only; in:comments
// finds comments' words through their own index, kept as comments are
// made, edited and deleted. A search of one repository reads its rows
// instead, and answers alike.
func TestSearchWordsUseTheTextIndex(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo")
	env.Repo(octo, "hello")
	c := env.Client(env.Token(octo, "repo"))
	_, _, err := c.Issues.Create(ctx, "octo", "hello", github.CreateIssueRequest{Title: "Parser crashes", Body: github.Ptr("on an empty config file")})
	apptest.Must(t, "issue", err)
	_, _, err = c.Issues.Create(ctx, "octo", "hello", github.CreateIssueRequest{Title: "Go 1.26", Body: github.Ptr("upgrade")})
	apptest.Must(t, "issue", err)
	// user:octo searches through the text indexes; repo:octo/hello, one
	// repository, reads its rows: both must answer alike.
	found := func(q string) string {
		t.Helper()
		var answers []string
		for _, place := range []string{" user:octo", " repo:octo/hello"} {
			res, _, err := c.Search.Issues(ctx, q+place, &github.SearchOptions{Sort: "created", Order: "asc"})
			apptest.Must(t, "search", err)
			var out []string
			for _, is := range res.Issues {
				out = append(out, is.GetTitle())
			}
			answers = append(answers, strings.Join(out, "|"))
		}
		if answers[0] != answers[1] {
			t.Errorf("%s: %q by the index, %q in one repository", q, answers[0], answers[1])
		}
		return answers[0]
	}
	for q, want := range map[string]string{
		"CRASH":               "Parser crashes",
		`"empty config"`:      "Parser crashes",
		"go":                  "Go 1.26", // under three characters: LIKE
		"config in:title":     "",
		"-parser":             "Go 1.26",
		"rser":                "Parser crashes",
		`"config file" crash`: "Parser crashes",
	} {
		if got := found(q); got != want {
			t.Errorf("%s: %q, want %q", q, got, want)
		}
	}
	_, _, err = c.Issues.Update(ctx, "octo", "hello", 1, github.UpdateIssueRequest{Title: github.Ptr("Lexer hangs")})
	apptest.Must(t, "edit", err)
	if got := found("parser"); got != "" {
		t.Errorf("the old title is still found: %q", got)
	}
	if got := found("lexer"); got != "Lexer hangs" {
		t.Errorf("the new title: %q", got)
	}
	comment, _, err := c.Issues.CreateComment(ctx, "octo", "hello", 2, github.IssueCommentRequest{Body: "Segfault in the TOKENIZER here"})
	apptest.Must(t, "comment", err)
	for q, want := range map[string]string{
		"tokenizer in:comments":      "Go 1.26",
		`"the token" in:comments`:    "Go 1.26",
		"tokenizer":                  "", // titles and bodies by default
		"tokenizer in:body,comments": "Go 1.26",
	} {
		if got := found(q); got != want {
			t.Errorf("%s: %q, want %q", q, got, want)
		}
	}
	_, _, err = c.Issues.UpdateComment(ctx, "octo", "hello", comment.GetID(), github.IssueCommentRequest{Body: "fixed by the lexer rewrite"})
	apptest.Must(t, "edit comment", err)
	if got := found("tokenizer in:comments"); got != "" {
		t.Errorf("an edited comment's old words: %q", got)
	}
	if got := found("rewrite in:comments"); got != "Go 1.26" {
		t.Errorf("an edited comment's new words: %q", got)
	}
	_, err = c.Issues.DeleteComment(ctx, "octo", "hello", comment.GetID())
	apptest.Must(t, "delete comment", err)
	if got := found("rewrite in:comments"); got != "" {
		t.Errorf("a deleted comment: %q", got)
	}
	if !apptest.Postgres() {
		plan := strings.Join(env.QueryPlan(t, `SELECT id FROM issues i WHERE i.id IN (SELECT rowid FROM issues_fts WHERE issues_fts MATCH ?)`, `{title} : "lexer"`), "\n")
		if !strings.Contains(plan, "VIRTUAL TABLE INDEX") {
			t.Errorf("plan:\n%s", plan)
		}
	} else { // the folded columns the search reads follow the edit
		var title, body string
		apptest.Must(t, "folded text", env.App.DB.QueryRowContext(ctx, `SELECT i.title_folded, COALESCE(i.body_folded, '')
			FROM issues i JOIN repositories r ON r.id = i.repository_id WHERE r.name = 'hello' AND i.number = 1`).Scan(&title, &body))
		if title != "lexer hangs" || body != strings.ToLower(body) {
			t.Errorf("folded title %q, body %q", title, body)
		}
	}
}

// TestSearchIssuesCountsUpToAThousand searches a word held by 1,003
// public issues and 5 private ones (the newest): the count stops at the
// 1,000 newest matches with incomplete_results, as code search and the
// platform past its time limit; the private issues are among those
// counted only for a reader of their repository, and a word of fewer
// issues is counted exactly. Paging reaches the 1,000th match, in
// creation order or another.
func TestSearchIssuesCountsUpToAThousand(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo, bob := env.User("octo"), env.User("bob")
	public := env.Repo(octo, "public")
	env.Repo(octo, "secret", apptest.RepoOpts{Private: true})
	var sb strings.Builder
	sb.WriteString(`INSERT INTO issues (repository_id, number, title, body, user_id, created_at, updated_at, comments) VALUES `)
	const many = 1003
	for n := 1; n <= many; n++ {
		if n > 1 {
			sb.WriteString(", ")
		}
		title := fmt.Sprintf("everywhere %d", n)
		if n == 20 || n == 30 {
			title += " seldom"
		}
		fmt.Fprintf(&sb, "(%d, %d, '%s', 'body %d', %d, $1, $1, %d)", public.ID, n, title, n, octo.ID, n%5)
	}
	db := env.App.DB
	if _, err := db.ExecContext(ctx, sb.String(), store.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO issue_counters (repository_id, last_issue, last_milestone) VALUES ($1, $2, 0)`,
		public.ID, many); err != nil {
		t.Fatal(err)
	}
	octoC, bobC := env.Client(env.Token(octo, "repo")), env.Client(env.Token(bob, "repo"))
	for i := range 5 {
		_, _, err := octoC.Issues.Create(ctx, "octo", "secret", github.CreateIssueRequest{Title: fmt.Sprintf("everywhere secret %d", i)})
		apptest.Must(t, "private issue", err)
	}

	search := func(c *github.Client, q string, opts *github.SearchOptions) *github.IssuesSearchResult {
		t.Helper()
		res, _, err := c.Search.Issues(ctx, q, opts)
		apptest.Must(t, "search "+q, err)
		return res
	}
	for _, tc := range []struct {
		who       string
		c         *github.Client
		newest    string
		incognito bool
	}{{"bob", bobC, "everywhere 1003", true}, {"octo", octoC, "everywhere secret 4", false}} {
		res := search(tc.c, "everywhere", nil)
		if res.GetTotal() != 1000 || !res.GetIncompleteResults() || len(res.Issues) != 30 || res.Issues[0].GetTitle() != tc.newest {
			t.Errorf("%s: a word in %d issues: total %d, incomplete %v, %d items, first %q", tc.who, many, res.GetTotal(),
				res.GetIncompleteResults(), len(res.Issues), res.Issues[0].GetTitle())
		}
		last := search(tc.c, "everywhere", &github.SearchOptions{ListOptions: github.ListOptions{PerPage: 100, Page: 10}})
		want := "everywhere 4" // the 1,000th newest public issue
		if !tc.incognito {
			want = "everywhere 9" // five private issues are newer
		}
		if n := len(last.Issues); n != 100 || last.Issues[n-1].GetTitle() != want {
			t.Errorf("%s: the tenth page of 100: %d items, last %q, want %q", tc.who, n, last.Issues[n-1].GetTitle(), want)
		}
		for _, is := range append(res.Issues, last.Issues...) {
			if tc.incognito && strings.Contains(is.GetTitle(), "secret") {
				t.Errorf("%s sees %q", tc.who, is.GetTitle())
			}
		}
	}
	if res := search(bobC, "seldom everywhere", nil); res.GetTotal() != 2 || res.GetIncompleteResults() {
		t.Errorf("a word in 2 issues: total %d, incomplete %v", res.GetTotal(), res.GetIncompleteResults())
	}
	if res := search(bobC, "everywhere -seldom in:title is:open", nil); res.GetTotal() != 1000 || !res.GetIncompleteResults() {
		t.Errorf("a word, one left out: total %d, incomplete %v", res.GetTotal(), res.GetIncompleteResults())
	}
	if res := search(bobC, "everywhere in:body", nil); res.GetTotal() != 0 {
		t.Errorf("a word of titles in:body: total %d", res.GetTotal())
	}
	res := search(bobC, "everywhere", &github.SearchOptions{Sort: "comments", Order: "desc"})
	if res.GetTotal() != 1000 || res.Issues[0].GetComments() != 4 {
		t.Errorf("sorted by comments: total %d, first has %d comments", res.GetTotal(), res.Issues[0].GetComments())
	}
	// Without words the count is exact, as a badge of open issues reads
	// it, and a sort orders every match: the oldest issue comes first.
	if res := search(bobC, "is:open", nil); res.GetTotal() != many || res.GetIncompleteResults() {
		t.Errorf("is:open across %d issues: total %d, incomplete %v", many, res.GetTotal(), res.GetIncompleteResults())
	}
	if res := search(octoC, "is:open", nil); res.GetTotal() != many+5 {
		t.Errorf("is:open for the owner of 5 private issues: total %d, want %d", res.GetTotal(), many+5)
	}
	oldest := search(bobC, "repo:octo/public", &github.SearchOptions{Sort: "created", Order: "asc"})
	if oldest.GetTotal() != many || oldest.Issues[0].GetTitle() != "everywhere 1" {
		t.Errorf("repo:octo/public oldest first: total %d, first %q", oldest.GetTotal(), oldest.Issues[0].GetTitle())
	}
}
