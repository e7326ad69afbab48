package web_test

import (
	"context"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apptest"
)

const password = "correct horse battery staple"

// fixture is a forge with history: a user (alice) who owns an
// organization (acme) with a public repository (acme/widgets: files,
// a merged pull request, an issue with comments, a release) and a private
// repository of her own (alice/secret); bob is a stranger to both.
type fixture struct {
	e          *apptest.Env
	alice, bob *accounts.Account
	token      string
	org        string // acme's unique login
	work       string // a work tree of acme/widgets, at feature/blue
	first      string // the first commit's SHA
	merged     int    // the merged pull request's number
}

func newFixture(t *testing.T, opts ...apptest.Option) *fixture {
	t.Helper()
	e := apptest.Start(t, opts...)
	f := &fixture{e: e}
	f.alice = e.User(apptest.Unique("alice"), apptest.UserOpts{Password: password})
	f.bob = e.User(apptest.Unique("bob"), apptest.UserOpts{Password: password})
	org := e.Org(apptest.Unique("acme"), f.alice)
	f.org = org.Login
	e.Repo(org, "widgets", apptest.RepoOpts{Description: "Widgets for everyone"})
	e.Repo(f.alice, "secret", apptest.RepoOpts{Private: true})
	f.token = e.Token(f.alice, "repo", "read:org", "user")
	ctx, c := context.Background(), e.Client(f.token)

	work := apptest.WorkTree(t, nil)
	f.work = work
	f.first = apptest.Commit(t, work, "Add the widget maker", map[string]string{
		"README.md":         "# Widgets\n\nThe **widget** maker,\nby @" + f.alice.Login + ". Known squeaks: #1.\n",
		"main.go":           "package main\n\nfunc main() {\n\tprintln(\"widgets <3\")\n}\n",
		"docs/guide/use.md": "Use it.\n",
	})
	apptest.Git(t, work, "push", "-q", e.GitURL(org.Login, "widgets", f.alice.Login, f.token), "HEAD:refs/heads/main")
	apptest.Git(t, work, "checkout", "-q", "-b", "feature/blue")
	apptest.Commit(t, work, "Paint the widgets blue", map[string]string{"main.go": "package main\n\nfunc main() {\n\tprintln(\"blue widgets\")\n}\n"})
	apptest.Git(t, work, "push", "-q", e.GitURL(org.Login, "widgets", f.alice.Login, f.token), "HEAD:refs/heads/feature/blue")
	apptest.Git(t, work, "push", "-q", e.GitURL(f.alice.Login, "secret", f.alice.Login, f.token), "HEAD:refs/heads/main")

	ms, _, err := c.Issues.CreateMilestone(ctx, org.Login, "widgets", github.CreateMilestoneRequest{Title: "Quiet widgets", Description: github.Ptr("No more squeaks.")})
	apptest.Must(t, "create the milestone", err)
	is, _, err := c.Issues.Create(ctx, org.Login, "widgets", github.CreateIssueRequest{Title: "Widgets squeak", Body: github.Ptr("They squeak when turned."),
		Milestone: github.Ptr(ms.GetNumber())})
	apptest.Must(t, "create the issue", err)
	_, _, err = c.Repositories.CreateComment(ctx, org.Login, "widgets", f.first, github.CreateCommitCommentRequest{Body: "A fine **first** commit.",
		Path: github.Ptr("main.go"), Position: github.Ptr(1)})
	apptest.Must(t, "comment on the first commit", err)
	_, _, err = c.Issues.CreateComment(ctx, org.Login, "widgets", is.GetNumber(), github.IssueCommentRequest{Body: "Oil helps, see the **guide**."})
	apptest.Must(t, "comment on the issue", err)
	pr, _, err := c.PullRequests.Create(ctx, org.Login, "widgets", github.CreatePullRequest{Title: github.Ptr("Blue widgets"),
		Head: "feature/blue", Base: "main", Body: github.Ptr("Fixes #" + itoa(is.GetNumber()))})
	apptest.Must(t, "open the pull request", err)
	f.merged = pr.GetNumber()
	_, _, err = c.PullRequests.CreateReview(ctx, org.Login, "widgets", f.merged, &github.PullRequestReviewRequest{Event: github.Ptr("COMMENT"), Body: github.Ptr("Looks blue to me."),
		Comments: []*github.DraftReviewComment{{Path: github.Ptr("main.go"), Line: github.Ptr(4), Side: github.Ptr("RIGHT"), Body: github.Ptr("Bluer, maybe?")}}})
	apptest.Must(t, "review the pull request", err)
	_, _, err = c.PullRequests.Merge(ctx, org.Login, "widgets", f.merged, "", nil)
	apptest.Must(t, "merge the pull request", err)
	_, _, err = c.Repositories.CreateRelease(ctx, org.Login, "widgets", github.CreateReleaseRequest{TagName: "v1.0",
		Name: github.Ptr("First widgets"), Body: github.Ptr("The first release.")})
	apptest.Must(t, "create the release", err)
	return f
}

func itoa(n int) string { return strconv.Itoa(n) }

// browser is an HTTP client that asks for pages as a browser does, with
// a cookie jar, following redirects when follow says so.
func browser(t testing.TB, e *apptest.Env, follow bool) *http.Client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Jar: jar, Transport: htmlAccept{e.Transport()}}
	if !follow {
		c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	}
	return c
}

type htmlAccept struct{ rt http.RoundTripper }

func (h htmlAccept) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if r.Header.Get("Accept") == "" {
		r.Header.Set("Accept", "text/html,application/xhtml+xml,*/*;q=0.8")
	}
	return h.rt.RoundTrip(r)
}

// get fetches a page and returns its status, Content-Type and body.
func get(t testing.TB, c *http.Client, target string) (int, string, string) {
	t.Helper()
	resp, err := c.Get(target)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

// signIn signs the client in with the console's form.
func signIn(t *testing.T, e *apptest.Env, c *http.Client, login string) {
	t.Helper()
	_, _, page := get(t, c, e.URL+"/login")
	token := apptest.CSRFToken(t, page)
	resp, err := c.PostForm(e.URL+"/session", url.Values{"authenticity_token": {token}, "login": {login}, "password": {password}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign in as %s: %d", login, resp.StatusCode)
	}
}

// link is a web address found in an API response, with the text its page
// must show.
type link struct {
	url, want, from string
}

// collect walks a JSON document for html_url, diff_url, patch_url and
// blob_url values; an object's page must show its title, name, tag or
// SHA, whichever it has first.
func collect(v any, from string, out *[]link) {
	switch v := v.(type) {
	case map[string]any:
		want := ""
		for _, k := range []string{"title", "tag_name", "name", "filename", "sha"} {
			if s, ok := v[k].(string); ok && s != "" {
				want = s
				break
			}
		}
		if want == "" {
			if s, ok := v["login"].(string); ok {
				want = s
			}
		}
		for k, val := range v {
			s, ok := val.(string)
			switch {
			case ok && (k == "diff_url" || k == "patch_url"):
				*out = append(*out, link{url: s, want: "diff --git", from: from})
			case ok && (k == "html_url" || k == "blob_url"):
				*out = append(*out, link{url: s, want: want, from: from})
			default:
				collect(val, from, out)
			}
		}
	case []any:
		for _, x := range v {
			collect(x, from, out)
		}
	}
}

// TestEveryHTMLURLResolves walks the html_url, diff_url, patch_url and
// blob_url values of the API's answers about the fixture and requests
// each as a browser: 200, HTML (a diff or patch as text) showing the
// object's title, name or SHA.
func TestEveryHTMLURLResolves(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	e, owner := f.e, f.org
	r := "/repos/" + owner + "/widgets"
	n := strconv.Itoa(f.merged)
	paths := []string{
		"/users/" + f.alice.Login, "/orgs/" + owner, r, r + "/commits", r + "/commits/" + f.first, r + "/compare/" + f.first + "...main",
		r + "/issues?state=all", r + "/issues/1/comments", r + "/pulls/" + n, r + "/pulls/" + n + "/files", r + "/pulls/" + n + "/reviews", r + "/pulls/" + n + "/comments",
		r + "/pulls/" + n + "/commits", r + "/releases", r + "/milestones", r + "/comments", r + "/contents/", r + "/contents/README.md", r + "/readme",
	}
	var links []link
	for _, p := range paths {
		resp, body := e.Get(p, "token "+f.token)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s", p, resp.StatusCode, body)
		}
		var doc any
		if err := json.Unmarshal(body, &doc); err != nil {
			t.Fatalf("GET %s: %v", p, err)
		}
		collect(doc, p, &links)
	}
	c := browser(t, e, true) // an issue's address of a pull request leads to the pull request
	seen := map[string]bool{}
	for _, l := range links {
		u, fragment, _ := strings.Cut(l.url, "#")
		if !strings.HasPrefix(u, e.URL+"/") || seen[l.url+"\x00"+l.want] {
			continue
		}
		seen[l.url+"\x00"+l.want] = true
		status, ctype, body := get(t, c, u)
		if status != http.StatusOK {
			t.Errorf("%s (from %s): %d\n%.400s", u, l.from, status, body)
			continue
		}
		wantType := "text/html"
		if strings.HasSuffix(u, ".diff") || strings.HasSuffix(u, ".patch") {
			wantType = "text/plain"
		}
		if !strings.HasPrefix(ctype, wantType) {
			t.Errorf("%s (from %s): Content-Type %s, want %s", u, l.from, ctype, wantType)
		}
		if l.want != "" && !strings.Contains(body, html.EscapeString(l.want)) {
			t.Errorf("%s (from %s): the page lacks %q", u, l.from, l.want)
		}
		if fragment != "" && !strings.Contains(body, `id="`+fragment+`"`) {
			t.Errorf("%s (from %s): the page has no element #%s", u, l.from, fragment)
		}
	}
	for _, kind := range []string{"#issuecomment-", "#pullrequestreview-", "#discussion_r", "#commitcomment-", "/milestone/"} {
		found := false
		for k := range seen {
			found = found || strings.Contains(k, kind)
		}
		if !found {
			t.Errorf("no address with %s was visited", kind)
		}
	}
	if len(seen) < 15 {
		t.Fatalf("only %d addresses visited", len(seen))
	}
	t.Logf("%d addresses visited", len(seen))
}
