package web_test

import (
	"context"
	"html"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/testwait"
	"forgeapi/internal/webhooks"
)

// wantPage fetches a page and fails unless it answers status with HTML
// holding every one of wants.
func wantPage(t *testing.T, c *http.Client, target string, status int, wants ...string) string {
	t.Helper()
	got, ctype, body := get(t, c, target)
	if got != status || !strings.HasPrefix(ctype, "text/html") {
		t.Fatalf("GET %s: %d %s, want %d text/html\n%.600s", target, got, ctype, status, body)
	}
	for _, w := range wants {
		if !strings.Contains(body, w) {
			t.Errorf("GET %s: the page lacks %q\n%.3000s", target, w, body)
		}
	}
	return body
}

// TestRepositoryPages reads the fixture's pages as a browser and checks
// what each shows: the README rendered with its mention linked, the file
// tree, counts and clone URL; a directory; a file highlighted with line
// anchors and its raw bytes; the history, a commit's and a comparison's
// diff; the issue with its comment; the merged pull request with its
// review, commits and files; the releases. Text a user wrote is escaped.
func TestRepositoryPages(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	e, c := f.e, browser(t, f.e, false)
	repo := e.URL + "/" + f.org + "/widgets"
	_, _, err := e.Client(f.token).Issues.Create(context.Background(), f.org, "widgets",
		github.CreateIssueRequest{Title: `<script>alert("x")</script>`})
	apptest.Must(t, "create an issue with markup in its title", err)

	apptest.Step(t, "an empty repository", func(t *testing.T) {
		e.Repo(f.bob, "empty")
		wantPage(t, c, e.URL+"/"+f.bob.Login+"/empty", 200, "This repository is empty.", `value="`+e.URL+`/`+f.bob.Login+`/empty.git"`)
	})
	apptest.Step(t, "owner pages", func(t *testing.T) {
		wantPage(t, c, e.URL+"/"+f.org, 200, "Organization", `href="/`+f.org+`/widgets"`)
		body := wantPage(t, c, e.URL+"/"+f.alice.Login, 200, "User")
		if strings.Contains(body, "secret") {
			t.Errorf("an anonymous visitor sees the private repository on its owner's page")
		}
	})
	apptest.Step(t, "repository home", func(t *testing.T) {
		// A file's single line break joins its lines (no <br>, as comments
		// have), and its mentions and references are linked.
		wantPage(t, c, repo, 200, "Widgets for everyone", "<strong>widget</strong> maker,\nby",
			`href="`+e.URL+`/`+f.alice.Login+`"`, `href="`+e.URL+`/`+f.org+`/widgets/issues/1"`,
			`value="`+e.URL+`/`+f.org+`/widgets.git"`, "2 branches", "1 tag", `href="/`+f.org+`/widgets/tree/main/docs"`,
			`href="/`+f.org+`/widgets/blob/main/main.go"`)
	})
	apptest.Step(t, "a directory on a branch with a slash", func(t *testing.T) {
		wantPage(t, c, repo+"/tree/feature/blue/docs", 200, "guide/", "on feature/blue")
		wantPage(t, c, repo+"/tree/main/docs/guide", 200, "use.md")
		wantPage(t, c, repo+"/tree/nope/docs", 404)
	})
	apptest.Step(t, "a file and its raw bytes", func(t *testing.T) {
		wantPage(t, c, repo+"/blob/main/main.go", 200, `class="chroma"`, `id="L4"`, `href="#L4"`, `class="kn"`,
			`href="/`+f.org+`/widgets/raw/main/main.go"`, "5 lines")
		status, ctype, body := get(t, c, repo+"/raw/main/main.go")
		if status != 200 || !strings.HasPrefix(ctype, "text/plain") || body != "package main\n\nfunc main() {\n\tprintln(\"blue widgets\")\n}\n" {
			t.Fatalf("raw: %d %s %q", status, ctype, body)
		}
		wantPage(t, c, repo+"/blob/main/nothing.go", 404)
		big := strings.Repeat("a line of a big file\n", 30000)
		apptest.Commit(t, f.work, "Add big and binary files", map[string]string{"big.txt": big, "logo.bin": "PNG\x00\x01\x02"})
		apptest.Git(t, f.work, "push", "-q", e.GitURL(f.org, "widgets", f.alice.Login, f.token), "HEAD:refs/heads/big")
		wantPage(t, c, repo+"/blob/big/big.txt", 200, "This file is too large to show", `href="/`+f.org+`/widgets/raw/big/big.txt"`)
		wantPage(t, c, repo+"/blob/big/logo.bin", 200, "Binary file not shown")
		if status, ctype, body := get(t, c, repo+"/raw/big/big.txt"); status != 200 || !strings.HasPrefix(ctype, "text/plain") || body != big {
			t.Errorf("the big file's raw bytes: %d %s, %d bytes", status, ctype, len(body))
		}
		if status, ctype, _ := get(t, c, repo+"/raw/big/logo.bin"); status != 200 || ctype != "application/octet-stream" {
			t.Errorf("the binary file's raw bytes: %d %s", status, ctype)
		}
		if status, _, _ := get(t, c, repo+"/blob/main/docs"); status != http.StatusFound {
			t.Errorf("a directory's blob address: %d, want 302 to its tree", status)
		}
	})
	apptest.Step(t, "history, a commit and a comparison", func(t *testing.T) {
		wantPage(t, c, repo+"/commits/main", 200, "Add the widget maker", "Paint the widgets blue", "Merge pull request")
		wantPage(t, c, repo+"/commit/"+f.first, 200, "Add the widget maker", `class="add"`, "&#43;# Widgets", "docs/guide/use.md",
			`id="commitcomment-`, "A fine <strong>first</strong> commit.", "on <code>main.go")
		wantPage(t, c, repo+"/compare/"+f.first+"...main", 200, "Paint the widgets blue", `class="del"`,
			`-	println(&#34;widgets &lt;3&#34;)`, `&#43;	println(&#34;blue widgets&#34;)`)
	})
	apptest.Step(t, "issues", func(t *testing.T) {
		wantPage(t, c, repo+"/issues", 200, "Widgets squeak", "&lt;script&gt;")
		_, _, err := e.Client(f.token).Issues.Update(context.Background(), f.org, "widgets", 1, github.UpdateIssueRequest{Title: github.Ptr("Widgets squeak loudly")})
		apptest.Must(t, "rename the issue", err)
		wantPage(t, c, repo+"/issues/1", 200, "Widgets squeak loudly", "They squeak when turned.", "<strong>guide</strong>", `id="issuecomment-`,
			`class="event" id="event-`, "changed the title from “Widgets squeak” to “Widgets squeak loudly”")
		wantPage(t, c, repo+"/issues/99", 404)
		wantPage(t, c, repo+"/milestone/1", 200, "Quiet widgets", "No more squeaks.", "1 open", `href="/`+f.org+`/widgets/issues/1"`)
		if status, _, _ := get(t, c, repo+"/pull/1"); status != http.StatusFound {
			t.Errorf("an issue's number as a pull request: %d, want 302 to the issue", status)
		}
	})
	apptest.Step(t, "the merged pull request", func(t *testing.T) {
		n := strconv.Itoa(f.merged)
		wantPage(t, c, repo+"/pulls?state=closed", 200, "Blue widgets")
		wantPage(t, c, repo+"/pull/"+n, 200, "Blue widgets", "merged", "Looks blue to me.", `id="pullrequestreview-`,
			`href="`+e.URL+`/`+f.org+`/widgets/issues/1"`)
		wantPage(t, c, repo+"/pull/"+n+"/commits", 200, "Paint the widgets blue")
		wantPage(t, c, repo+"/pull/"+n+"/files", 200, "main.go", `class="add"`, "blue widgets")
	})
	apptest.Step(t, "releases", func(t *testing.T) {
		wantPage(t, c, repo+"/releases", 200, "First widgets", "v1.0")
		wantPage(t, c, repo+"/releases/tag/v1.0", 200, "First widgets", "The first release.")
		wantPage(t, c, repo+"/releases/tag/v9", 404)
	})
}

// TestPrivatePages: a private repository's pages are the 404 page for
// an anonymous visitor (with a hint to sign in) and for a signed-in
// stranger, as the API hides it, and its owner sees them.
func TestPrivatePages(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	e := f.e
	secret := e.URL + "/" + f.alice.Login + "/secret"
	addresses := []string{secret, secret + "/blob/main/README.md", secret + "/tree/main/docs", secret + "/commits/main",
		secret + "/raw/main/README.md", secret + "/issues", secret + "/pulls", secret + "/releases"}

	anonymous := browser(t, e, false)
	stranger := browser(t, e, false)
	signIn(t, e, stranger, f.bob.Login)
	owner := browser(t, e, false)
	signIn(t, e, owner, f.alice.Login)
	for _, a := range addresses {
		wantPage(t, anonymous, a, 404, "sign in")
		wantPage(t, stranger, a, 404, "you may not see it")
		if status, _, body := get(t, owner, a); status != 200 {
			t.Errorf("the owner gets %s: %d\n%.400s", a, status, body)
		}
	}
	wantPage(t, owner, secret, 200, "private", "<strong>widget</strong>")
	diff := secret + "/commit/" + f.first + ".diff"
	if status, ctype, body := get(t, owner, diff); status != 200 || !strings.HasPrefix(ctype, "text/plain") || !strings.Contains(body, "diff --git a/main.go") {
		t.Errorf("the owner's session opens the private commit's diff: %d %s\n%.300s", status, ctype, body)
	}
	if status, _, _ := get(t, stranger, diff); status != http.StatusNotFound {
		t.Errorf("a stranger's session gets the private commit's diff: %d", status)
	}
	if status, ctype, _ := get(t, anonymous, diff); status != http.StatusNotFound || !strings.HasPrefix(ctype, "application/json") {
		t.Errorf("without a session the diff is the API's: %d %s, want its JSON 404", status, ctype)
	}
	wantPage(t, owner, e.URL+"/"+f.alice.Login, 200, `href="/`+f.alice.Login+`/secret"`)
	wantPage(t, anonymous, e.URL+"/nobody-at-all", 404)
}

// TestAPIClientsKeepJSON: an API client (no text/html in Accept) gets
// the API's JSON 404 on the pages' addresses, and git still clones over
// the repository's address.
func TestAPIClientsKeepJSON(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	e := f.e
	for _, p := range []string{"/" + f.org, "/" + f.org + "/widgets", "/" + f.org + "/widgets/blob/main/main.go", "/" + f.org + "/widgets/issues/1"} {
		resp, body := e.Get(p, "token "+f.token, "Accept", "application/vnd.github+json")
		apptest.WantError(t, "GET "+p+" as an API client", resp, body, http.StatusNotFound)
	}
	clone := t.TempDir()
	apptest.Git(t, clone, "clone", "-q", e.GitURL(f.org, "widgets", f.alice.Login, f.token), "w")
}

// TestCommentForm: a signed-in visitor comments on an issue and on a pull
// request from their pages, as through the API (the comments are the
// API's, by that user); the form needs its CSRF token and a session, and
// a blank comment is refused.
func TestCommentForm(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	e := f.e
	repo := e.URL + "/" + f.org + "/widgets"
	form := e.URL + "/console/" + f.org + "/widgets"
	c := browser(t, e, false)

	anonymousPage := wantPage(t, c, repo+"/issues/1", 200, "to comment.")
	if strings.Contains(anonymousPage, `id="comment-form"`) {
		t.Error("an anonymous visitor gets the comment form")
	}
	status, _, _ := postForm(t, c, form+"/issues/1/comments", url.Values{"body": {"anonymous words"}})
	if status != http.StatusForbidden {
		t.Errorf("an anonymous comment: %d, want 403", status)
	}

	signIn(t, e, c, f.bob.Login)
	page := wantPage(t, c, repo+"/issues/1", 200, `id="comment-form"`)
	token := apptest.CSRFToken(t, page)
	if status, _, _ := postForm(t, c, form+"/issues/1/comments", url.Values{"body": {"no token"}}); status != http.StatusForbidden {
		t.Errorf("a comment without the CSRF token: %d, want 403", status)
	}
	if status, _, _ := postForm(t, c, form+"/issues/1/comments", url.Values{"authenticity_token": {token}, "body": {"  "}}); status != http.StatusUnprocessableEntity {
		t.Errorf("a blank comment: %d, want 422", status)
	}
	status, loc, _ := postForm(t, c, form+"/issues/1/comments", url.Values{"authenticity_token": {token}, "body": {"Same here, **loudly**.\r\nSee #1."}})
	if status != http.StatusSeeOther || !strings.HasPrefix(loc, "/"+f.org+"/widgets/issues/1#issuecomment-") {
		t.Fatalf("comment: %d %s", status, loc)
	}
	wantPage(t, c, repo+"/issues/1", 200, "<strong>loudly</strong>", `id="`+strings.SplitN(loc, "#", 2)[1]+`"`)

	n := strconv.Itoa(f.merged)
	status, loc, _ = postForm(t, c, form+"/issues/"+n+"/comments", url.Values{"authenticity_token": {token}, "body": {"Nice and blue."}})
	if status != http.StatusSeeOther || !strings.HasPrefix(loc, "/"+f.org+"/widgets/pull/"+n+"#issuecomment-") {
		t.Fatalf("comment on the pull request: %d %s", status, loc)
	}
	wantPage(t, c, repo+"/pull/"+n, 200, "Nice and blue.")
	if status, ctype, body := get(t, c, repo+"/pull/"+n+".patch"); status != 200 || !strings.HasPrefix(ctype, "text/plain") || !strings.Contains(body, "Subject: [PATCH] Paint the widgets blue") {
		t.Errorf("the pull request's patch with a session: %d %s\n%.300s", status, ctype, body)
	}

	list, _, err := e.Client(f.token).Issues.ListComments(context.Background(), f.org, "widgets", 1, nil)
	apptest.Must(t, "list the issue's comments", err)
	last := list[len(list)-1]
	if last.GetUser().GetLogin() != f.bob.Login || last.GetBody() != "Same here, **loudly**.\nSee #1." {
		t.Errorf("the API's last comment: %s %q", last.GetUser().GetLogin(), last.GetBody())
	}
}

// postForm posts a form and returns the status, Location and body.
func postForm(t *testing.T, c *http.Client, target string, v url.Values) (int, string, string) {
	t.Helper()
	resp, err := c.PostForm(target, v)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Location"), string(b)
}

// TestRootForBrowsers: a browser at / goes to the console's home (its
// repositories link to their pages); an API client keeps the root
// document.
func TestRootForBrowsers(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	e := f.e
	c := browser(t, e, false)
	resp, err := c.Get(e.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != e.URL+"/settings" {
		t.Fatalf("a browser at /: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	signIn(t, e, c, f.alice.Login)
	wantPage(t, c, e.URL+"/settings", 200, `href="/`+f.org+`/widgets"`, `href="/`+f.alice.Login+`/secret"`, `href="/`+f.org+`"`)
	apiResp, body := e.Get("/", "")
	if apiResp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"current_user_url"`) {
		t.Fatalf("an API client at /: %d %s", apiResp.StatusCode, body)
	}
}

// TestMergeButton: the merge form of an open pull request is offered to
// those who may push; it merges as the API does, refused while a required
// status check has not passed and after that check passes merged, and a
// reader without push access may not use it.
func TestMergeButton(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	e, ctx := f.e, context.Background()
	api := e.Client(f.token)
	repo := e.URL + "/" + f.org + "/widgets"
	pr, head := openProtectedPull(t, f)
	n := strconv.Itoa(pr.GetNumber())
	action := e.URL + "/console/" + f.org + "/widgets/pull/" + n + "/merge"

	reader := browser(t, e, false)
	signIn(t, e, reader, f.bob.Login)
	page := wantPage(t, reader, repo+"/pull/"+n, 200, "Red widgets")
	if strings.Contains(page, `id="merge-form"`) {
		t.Error("a reader gets the merge form")
	}
	if status, _, _ := postForm(t, reader, action, url.Values{"authenticity_token": {apptest.CSRFToken(t, page)}, "merge_method": {"merge"}}); status != http.StatusForbidden {
		t.Errorf("a reader's merge: %d, want 403", status)
	}

	reviews := e.URL + "/console/" + f.org + "/widgets/pull/" + n + "/reviews"
	status, loc, _ := postForm(t, reader, reviews, url.Values{"authenticity_token": {apptest.CSRFToken(t, page)}, "event": {"APPROVE"},
		"body": {"Red is **right**."}, "sha": {head}})
	if status != http.StatusSeeOther || !strings.HasPrefix(loc, "/"+f.org+"/widgets/pull/"+n+"#pullrequestreview-") {
		t.Fatalf("a reader's review: %d %s", status, loc)
	}
	wantPage(t, reader, repo+"/pull/"+n, 200, `id="`+strings.SplitN(loc, "#", 2)[1]+`"`, "approved", "Red is <strong>right</strong>.")

	owner := browser(t, e, false)
	signIn(t, e, owner, f.alice.Login)
	ownPage := wantPage(t, owner, repo+"/pull/"+n, 200, `id="review-form"`)
	if status, _, _ := postForm(t, owner, reviews, url.Values{"authenticity_token": {apptest.CSRFToken(t, ownPage)}, "event": {"APPROVE"}}); status != http.StatusUnprocessableEntity {
		t.Errorf("the author's approval of their own pull request: %d, want 422", status)
	}
	page = wantPage(t, owner, repo+"/pull/"+n, 200, `id="merge-form"`, `value="`+head+`"`)
	form := url.Values{"authenticity_token": {apptest.CSRFToken(t, page)}, "merge_method": {"squash"}, "sha": {head}}
	status, _, body := postForm(t, owner, action, form)
	if status != http.StatusMethodNotAllowed || !strings.Contains(body, "Required status check") {
		t.Fatalf("a merge before the required check: %d\n%.2000s", status, body)
	}
	_, _, err := api.Repositories.CreateStatus(ctx, f.org, "widgets", head, github.RepoStatus{State: github.Ptr("success"), Context: github.Ptr("ci")})
	apptest.Must(t, "pass the check", err)
	status, loc, _ = postForm(t, owner, action, form)
	if status != http.StatusSeeOther || loc != "/"+f.org+"/widgets/pull/"+n {
		t.Fatalf("the merge: %d %s", status, loc)
	}
	got, _, err := api.PullRequests.Get(ctx, f.org, "widgets", pr.GetNumber())
	apptest.Must(t, "get the pull request", err)
	if !got.GetMerged() || got.GetMergedBy().GetLogin() != f.alice.Login {
		t.Fatalf("after the merge button: merged %v by %s", got.GetMerged(), got.GetMergedBy().GetLogin())
	}
	after := wantPage(t, owner, repo+"/pull/"+n, 200, "merged")
	if strings.Contains(after, `id="merge-form"`) {
		t.Error("a merged pull request still offers the merge form")
	}
}

// openProtectedPull opens the pull request "Red widgets" (branch red,
// one commit, head) on the fixture's widgets and protects main with the
// required status check "ci", for administrators too.
func openProtectedPull(t *testing.T, f *fixture) (pr *github.PullRequest, head string) {
	t.Helper()
	e, ctx := f.e, context.Background()
	api := e.Client(f.token)
	work := apptest.WorkTree(t, nil)
	apptest.Git(t, work, "fetch", "-q", e.GitURL(f.org, "widgets", f.alice.Login, f.token), "main")
	apptest.Git(t, work, "checkout", "-q", "-b", "red", "FETCH_HEAD")
	head = apptest.Commit(t, work, "Paint them red", map[string]string{"main.go": "package main\n\nfunc main() {\n\tprintln(\"red widgets\")\n}\n"})
	apptest.Git(t, work, "push", "-q", e.GitURL(f.org, "widgets", f.alice.Login, f.token), "HEAD:refs/heads/red")
	pr, _, err := api.PullRequests.Create(ctx, f.org, "widgets", github.CreatePullRequest{Title: github.Ptr("Red widgets"), Head: "red", Base: "main"})
	apptest.Must(t, "open the pull request", err)
	_, _, err = api.Repositories.UpdateBranchProtection(ctx, f.org, "widgets", "main", &github.ProtectionRequest{
		RequiredStatusChecks: &github.RequiredStatusChecks{Strict: false, Contexts: &[]string{"ci"}}, EnforceAdmins: true})
	apptest.Must(t, "protect main", err)
	return pr, head
}

// TestRenamedRepository: the pages of a repository's old name lead to
// the same pages under its new one, as the API follows renames; a
// private repository's old name stays hidden from a stranger.
func TestRenamedRepository(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	e, ctx := f.e, context.Background()
	api := e.Client(f.token)
	_, _, err := api.Repositories.Edit(ctx, f.org, "widgets", &github.Repository{Name: github.Ptr("gadgets")})
	apptest.Must(t, "rename widgets", err)
	_, _, err = api.Repositories.Edit(ctx, f.alice.Login, "secret", &github.Repository{Name: github.Ptr("hush")})
	apptest.Must(t, "rename secret", err)
	c := browser(t, e, false)
	for old, to := range map[string]string{
		"/" + f.org + "/widgets":                     "/" + f.org + "/gadgets",
		"/" + f.org + "/widgets/blob/main/main.go":   "/" + f.org + "/gadgets/blob/main/main.go",
		"/" + f.org + "/widgets/issues?state=closed": "/" + f.org + "/gadgets/issues?state=closed",
	} {
		resp, err := c.Get(e.URL + old)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") != to {
			t.Errorf("GET %s: %d %s, want 301 to %s", old, resp.StatusCode, resp.Header.Get("Location"), to)
		}
	}
	wantPage(t, c, e.URL+"/"+f.org+"/gadgets", 200, "Widgets for everyone")
	wantPage(t, c, e.URL+"/"+f.alice.Login+"/secret", 404)
	wantPage(t, c, e.URL+"/"+f.alice.Login+"/secret/blob/main/main.go", 404)
}

// TestSearchPage: the search page finds issues and pull requests,
// repositories, code and users with the API's search syntax, among what
// the visitor may see.
func TestSearchPage(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	e, ctx := f.e, context.Background()
	_, _, err := e.Client(f.token).Issues.Create(ctx, f.alice.Login, "secret", github.CreateIssueRequest{Title: "Secret squeak"})
	apptest.Must(t, "create a private issue", err)
	anonymous := browser(t, e, false)
	wantPage(t, anonymous, e.URL+"/search", 200, `id="search-q"`)
	body := wantPage(t, anonymous, e.URL+"/search?q=squeak", 200, "1 result", "Widgets squeak", `href="/`+f.org+`/widgets/issues/1"`)
	if strings.Contains(body, "Secret squeak") {
		t.Error("an anonymous search finds a private repository's issue")
	}
	wantPage(t, anonymous, e.URL+"/search?q=is:pr+blue", 200, "Blue widgets", "pull request")
	owner := browser(t, e, false)
	signIn(t, e, owner, f.alice.Login)
	wantPage(t, owner, e.URL+"/search?q=squeak", 200, "2 results", "Secret squeak", "Widgets squeak")

	apptest.Step(t, "repositories", func(t *testing.T) {
		body := wantPage(t, anonymous, e.URL+"/search?type=repositories&q=widgets", 200, "1 result", `href="/`+f.org+`/widgets"`, "Widgets for everyone")
		if strings.Contains(body, "secret") {
			t.Error("an anonymous search finds a private repository")
		}
		wantPage(t, owner, e.URL+"/search?type=repositories&q=user:"+f.alice.Login, 200, `href="/`+f.alice.Login+`/secret"`)
		wantPage(t, anonymous, e.URL+"/search?type=repositories&q=stars:nope", 422)
	})
	apptest.Step(t, "users", func(t *testing.T) {
		wantPage(t, anonymous, e.URL+"/search?type=users&q="+f.org, 200, "1 result", `href="/`+f.org+`"`, "Organization")
	})
	apptest.Step(t, "code", func(t *testing.T) {
		api := e.Client(f.token)
		testwait.Until(t, "the widgets indexed", func() bool {
			res, _, err := api.Search.Code(ctx, "println repo:"+f.org+"/widgets", nil)
			return err == nil && res.GetTotal() == 1
		})
		wantPage(t, anonymous, e.URL+"/search?type=code&q=println+repo:"+f.org+"/widgets", 200, "1 result", `/`+f.org+`/widgets/blob/`, "main.go")
		body := wantPage(t, anonymous, e.URL+"/search?type=code&q=println", 200)
		if strings.Contains(body, f.alice.Login+"/secret") {
			t.Error("an anonymous code search finds a private repository's file")
		}
		wantPage(t, anonymous, e.URL+"/search?type=code&q=repo:"+f.org+"/widgets", 422)
	})
}

// TestHooksPageAtPlatformPath: a repository's hooks and their Recent
// Deliveries are at the platform's /{owner}/{repo}/settings/hooks for its
// administrators (the console's pages, linked from the repository's
// header); the form posts under /console/ and comes back to the platform's
// path; a reader gets the 404 page, an anonymous visitor the sign-in, an
// API client the API's JSON 404.
func TestHooksPageAtPlatformPath(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	e := f.e
	repo := e.URL + "/" + f.org + "/widgets"
	hooks := repo + "/settings/hooks"

	admin := browser(t, e, false)
	signIn(t, e, admin, f.alice.Login)
	wantPage(t, admin, repo, 200, `href="/`+f.org+`/widgets/settings/hooks"`)
	wantPage(t, admin, hooks, 200, `id="add-hook"`, `href="/`+f.org+`/widgets/settings/hooks/new"`)
	form := wantPage(t, admin, hooks+"/new", 200, `id="hook-form"`, `action="/console/`+f.org+`/widgets/settings/hooks"`)
	status, loc, body := postForm(t, admin, e.URL+"/console/"+f.org+"/widgets/settings/hooks", url.Values{
		"authenticity_token": {apptest.CSRFToken(t, form)}, "url": {"https://hooks.example/widgets"}, "content_type": {"json"},
		"events": {"push issues"}, "active": {"1"}})
	if status != http.StatusSeeOther || !strings.HasPrefix(loc, "/"+f.org+"/widgets/settings/hooks/") {
		t.Fatalf("create a hook from the page: %d %s\n%.1000s", status, loc, body)
	}
	wantPage(t, admin, e.URL+loc, 200, "https://hooks.example/widgets", `href="`+loc+`/deliveries"`)
	wantPage(t, admin, e.URL+loc+"/deliveries", 200, "Recent Deliveries")
	wantPage(t, admin, hooks, 200, "https://hooks.example/widgets")

	reader := browser(t, e, false)
	signIn(t, e, reader, f.bob.Login)
	if body := wantPage(t, reader, repo, 200); strings.Contains(body, "/settings/hooks") {
		t.Error("a reader's repository header links to the hooks")
	}
	wantPage(t, reader, hooks, 404)
	wantPage(t, reader, e.URL+loc, 404)

	anon, err := browser(t, e, false).Get(hooks)
	if err != nil {
		t.Fatal(err)
	}
	anon.Body.Close()
	if loc := anon.Header.Get("Location"); anon.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/login?") {
		t.Errorf("an anonymous visitor at the hooks: %d %s", anon.StatusCode, loc)
	}
	resp, raw := e.Get("/"+f.org+"/widgets/settings/hooks", f.token)
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(raw), `"message"`) {
		t.Errorf("an API client at the hooks page's path: %d %s", resp.StatusCode, raw)
	}
}

// TestLineCommentForm: the files of a pull request show the review
// comments on their lines; a signed-in visitor opens a line's form from
// its link and comments on the line as POST .../pulls/{number}/comments
// does (the API lists it on that path, side and line, a hook gets its
// pull_request_review_comment); a line outside
// the diff is refused as the API refuses it, and so are a post without
// the CSRF token and an anonymous one.
func TestLineCommentForm(t *testing.T) {
	t.Parallel()
	f := newFixture(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	e := f.e
	rc := apptest.NewReceiver(t, "s")
	_, _, err := e.Client(f.token).Repositories.CreateHook(context.Background(), f.org, "widgets", &github.Hook{
		Events: []string{"pull_request_review_comment"},
		Config: &github.HookConfig{URL: github.Ptr(rc.URL), ContentType: github.Ptr("json"), Secret: github.Ptr("s")}})
	apptest.Must(t, "create a hook", err)
	n := strconv.Itoa(f.merged)
	files := e.URL + "/" + f.org + "/widgets/pull/" + n + "/files"
	action := e.URL + "/console/" + f.org + "/widgets/pull/" + n + "/comments"
	form := url.Values{"path": {"main.go"}, "side": {"RIGHT"}, "line": {"4"}, "body": {"Why **blue**?"}}

	anonymous := browser(t, e, false)
	page := wantPage(t, anonymous, files, 200, `id="diff-1R4"`, "Bluer, maybe?", `id="discussion_r`)
	if strings.Contains(page, "add-comment") {
		t.Error("an anonymous visitor gets the lines' comment links")
	}
	if status, _, _ := postForm(t, anonymous, action, form); status != http.StatusForbidden {
		t.Errorf("an anonymous line comment: %d, want 403", status)
	}

	c := browser(t, e, false)
	signIn(t, e, c, f.bob.Login)
	line := "/" + f.org + "/widgets/pull/" + n + "/files?line=diff-1R4#diff-1R4"
	wantPage(t, c, files, 200, `href="`+html.EscapeString(line)+`"`)
	page = wantPage(t, c, e.URL+line, 200, `id="line-comment-form"`, `name="line" value="4"`, `name="side" value="RIGHT"`,
		`name="path" value="main.go"`, "Comment on line 4 of main.go")
	if strings.Count(page, `id="line-comment-form"`) != 1 {
		t.Error("the page has more than the one form opened")
	}
	if status, _, _ := postForm(t, c, action, form); status != http.StatusForbidden {
		t.Errorf("a line comment without the CSRF token: %d, want 403", status)
	}
	form.Set("authenticity_token", apptest.CSRFToken(t, page))
	outside := url.Values{}
	for k, v := range form {
		outside[k] = v
	}
	outside.Set("line", "99")
	if status, _, body := postForm(t, c, action, outside); status != http.StatusUnprocessableEntity {
		t.Errorf("a comment on a line outside the diff: %d, want 422\n%.500s", status, body)
	}
	status, loc, body := postForm(t, c, action, form)
	if status != http.StatusSeeOther || !strings.HasPrefix(loc, "/"+f.org+"/widgets/pull/"+n+"/files#discussion_r") {
		t.Fatalf("the line comment: %d %s\n%.1000s", status, loc, body)
	}
	wantPage(t, c, files, 200, `id="`+strings.SplitN(loc, "#", 2)[1]+`"`, "Why <strong>blue</strong>?")

	list, _, err := e.Client(f.token).PullRequests.ListComments(context.Background(), f.org, "widgets", f.merged, nil)
	apptest.Must(t, "list the review comments", err)
	last := list[len(list)-1]
	if last.GetUser().GetLogin() != f.bob.Login || last.GetPath() != "main.go" || last.GetLine() != 4 || last.GetSide() != "RIGHT" ||
		last.GetBody() != "Why **blue**?" || "discussion_r"+strconv.FormatInt(last.GetID(), 10) != strings.SplitN(loc, "#", 2)[1] {
		t.Errorf("the API's last review comment: %s %s:%d %s %q", last.GetUser().GetLogin(), last.GetPath(), last.GetLine(), last.GetSide(), last.GetBody())
	}
	rc.WaitFor(t, func(d apptest.Delivery) string {
		if ev, ok := d.Parsed.(*github.PullRequestReviewCommentEvent); ok {
			return ev.GetAction() + " " + ev.GetComment().GetBody()
		}
		return ""
	}, "created Why **blue**?")
}

// TestIssueEditForm: an issue's page offers its author and triagers the
// edit form and the close and reopen buttons, which change the issue as
// PATCH .../issues/{number} does (the API then shows the title, labels,
// assignees, milestone and state, and its events; a hook gets the issues
// deliveries); the author without
// triage edits the title and body only; anyone else gets no form and is
// refused.
func TestIssueEditForm(t *testing.T) {
	t.Parallel()
	f := newFixture(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	e, ctx := f.e, context.Background()
	api := e.Client(f.token)
	rc := apptest.NewReceiver(t, "s")
	_, _, err := api.Repositories.CreateHook(ctx, f.org, "widgets", &github.Hook{Events: []string{"issues"},
		Config: &github.HookConfig{URL: github.Ptr(rc.URL), ContentType: github.Ptr("json"), Secret: github.Ptr("s")}})
	apptest.Must(t, "create a hook", err)
	_, _, err = api.Issues.CreateLabel(ctx, f.org, "widgets", github.CreateIssueLabelRequest{Name: "squeaky", Color: github.Ptr("ff0000")})
	apptest.Must(t, "create a label", err)
	repo := e.URL + "/" + f.org + "/widgets"
	edit := e.URL + "/console/" + f.org + "/widgets/issues/1"

	owner := browser(t, e, false)
	signIn(t, e, owner, f.alice.Login)
	page := wantPage(t, owner, repo+"/issues/1", 200, `id="issue-edit-form"`, `value="Widgets squeak"`, `value="squeaky"`,
		`id="issue-milestone"`, `selected>Quiet widgets`, `id="issue-close"`)
	token := apptest.CSRFToken(t, page)
	if status, _, _ := postForm(t, owner, edit, url.Values{"title": {"No token"}}); status != http.StatusForbidden {
		t.Errorf("an edit without the CSRF token: %d, want 403", status)
	}
	if status, _, _ := postForm(t, owner, edit, url.Values{"authenticity_token": {token}, "title": {"  "}}); status != http.StatusUnprocessableEntity {
		t.Errorf("a blank title: %d, want 422", status)
	}
	status, loc, body := postForm(t, owner, edit, url.Values{"authenticity_token": {token}, "title": {"Widgets squeak loudly"},
		"body": {"They squeak when turned.\r\nAnd when not."}, "triage": {"1"}, "labels": {"squeaky"}, "assignees": {f.alice.Login}, "milestone": {""}})
	if status != http.StatusSeeOther || loc != "/"+f.org+"/widgets/issues/1" {
		t.Fatalf("the edit: %d %s\n%.1000s", status, loc, body)
	}
	is, _, err := api.Issues.Get(ctx, f.org, "widgets", 1)
	apptest.Must(t, "get the issue", err)
	if is.GetTitle() != "Widgets squeak loudly" || is.GetBody() != "They squeak when turned.\nAnd when not." || len(is.Labels) != 1 ||
		is.Labels[0].GetName() != "squeaky" || len(is.Assignees) != 1 || is.Assignees[0].GetLogin() != f.alice.Login || is.Milestone != nil {
		t.Errorf("after the edit the API shows %q %q labels %v assignees %v milestone %v", is.GetTitle(), is.GetBody(), is.Labels, is.Assignees, is.Milestone)
	}
	page = wantPage(t, owner, repo+"/issues/1", 200, "Widgets squeak loudly", "changed the title from", "squeaky", `value="squeaky" checked`)
	status, _, _ = postForm(t, owner, edit+"/state", url.Values{"authenticity_token": {apptest.CSRFToken(t, page)}, "state": {"closed"}, "state_reason": {"not_planned"}})
	if status != http.StatusSeeOther {
		t.Fatalf("close: %d", status)
	}
	is, _, err = api.Issues.Get(ctx, f.org, "widgets", 1)
	apptest.Must(t, "get the issue", err)
	if is.GetState() != "closed" || is.GetStateReason() != "not_planned" {
		t.Errorf("after closing: %s %s", is.GetState(), is.GetStateReason())
	}
	page = wantPage(t, owner, repo+"/issues/1", 200, `id="issue-reopen"`)
	if status, _, _ = postForm(t, owner, edit+"/state", url.Values{"authenticity_token": {apptest.CSRFToken(t, page)}, "state": {"open"}}); status != http.StatusSeeOther {
		t.Fatalf("reopen: %d", status)
	}
	events, _, err := api.Issues.ListIssueEvents(ctx, f.org, "widgets", 1, nil)
	apptest.Must(t, "list the issue's events", err)
	var names []string
	for _, ev := range events {
		names = append(names, ev.GetEvent())
	}
	for _, want := range []string{"renamed", "labeled", "assigned", "demilestoned", "closed", "reopened"} {
		if !slices.Contains(names, want) {
			t.Errorf("the issue's events %v lack %s", names, want)
		}
	}
	rc.WaitFor(t, func(d apptest.Delivery) string {
		if ev, ok := d.Parsed.(*github.IssuesEvent); ok && ev.GetIssue().GetNumber() == 1 {
			return "issues " + ev.GetAction()
		}
		return ""
	}, "issues edited", "issues labeled", "issues assigned", "issues demilestoned", "issues closed", "issues reopened")

	// bob: a stranger on alice's issue, the author of his own.
	bob := browser(t, e, false)
	signIn(t, e, bob, f.bob.Login)
	page = wantPage(t, bob, repo+"/issues/1", 200)
	if strings.Contains(page, `id="issue-edit-form"`) || strings.Contains(page, `id="issue-state-form"`) {
		t.Error("a stranger gets the issue's edit forms")
	}
	if status, _, _ := postForm(t, bob, edit, url.Values{"authenticity_token": {apptest.CSRFToken(t, page)}, "title": {"Mine now"}}); status != http.StatusForbidden {
		t.Errorf("a stranger's edit: %d, want 403", status)
	}
	own, _, err := e.Client(e.Token(f.bob, "public_repo")).Issues.Create(ctx, f.org, "widgets", github.CreateIssueRequest{Title: "Bob's squeak"})
	apptest.Must(t, "bob opens an issue", err)
	n := strconv.Itoa(own.GetNumber())
	page = wantPage(t, bob, repo+"/issues/"+n, 200, `id="issue-edit-form"`)
	if strings.Contains(page, `id="issue-labels"`) {
		t.Error("an author without triage gets the labels")
	}
	status, _, _ = postForm(t, bob, e.URL+"/console/"+f.org+"/widgets/issues/"+n, url.Values{"authenticity_token": {apptest.CSRFToken(t, page)},
		"title": {"Bob's loud squeak"}, "triage": {"1"}, "labels": {"squeaky"}})
	if status != http.StatusSeeOther {
		t.Fatalf("the author's edit: %d", status)
	}
	got, _, err := api.Issues.Get(ctx, f.org, "widgets", own.GetNumber())
	apptest.Must(t, "get bob's issue", err)
	if got.GetTitle() != "Bob's loud squeak" || len(got.Labels) != 0 {
		t.Errorf("bob's issue after his edit: %q labels %v", got.GetTitle(), got.Labels)
	}
}

// TestNewIssueForm: the new issue's page asks an anonymous visitor to
// sign in first; its form opens the issue as POST .../issues does, for
// the signed-in user, and leads to it; a blank title is the API's 422.
func TestNewIssueForm(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	e := f.e
	repo := e.URL + "/" + f.org + "/widgets"
	action := e.URL + "/console/" + f.org + "/widgets/issues"
	anonymous := browser(t, e, false)
	resp, err := anonymous.Get(repo + "/issues/new")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/login?return_to=") {
		t.Errorf("an anonymous visitor at the new issue: %d %s", resp.StatusCode, loc)
	}
	if status, _, _ := postForm(t, anonymous, action, url.Values{"title": {"Anonymous"}}); status != http.StatusForbidden {
		t.Errorf("an anonymous new issue: %d, want 403", status)
	}
	c := browser(t, e, false)
	signIn(t, e, c, f.bob.Login)
	wantPage(t, c, repo+"/issues", 200, `href="/`+f.org+`/widgets/issues/new"`)
	page := wantPage(t, c, repo+"/issues/new", 200, `id="new-issue-form"`, `action="/console/`+f.org+`/widgets/issues"`)
	token := apptest.CSRFToken(t, page)
	if status, _, _ := postForm(t, c, action, url.Values{"authenticity_token": {token}, "title": {" "}}); status != http.StatusUnprocessableEntity {
		t.Errorf("a blank title: %d, want 422", status)
	}
	status, loc, body := postForm(t, c, action, url.Values{"authenticity_token": {token}, "title": {"Widgets rattle"}, "body": {"When shaken.\r\nLoudly."}})
	if status != http.StatusSeeOther || !strings.HasPrefix(loc, "/"+f.org+"/widgets/issues/") {
		t.Fatalf("the new issue: %d %s\n%.1000s", status, loc, body)
	}
	n, err := strconv.Atoi(strings.TrimPrefix(loc, "/"+f.org+"/widgets/issues/"))
	apptest.Must(t, "the new issue's number", err)
	is, _, err := e.Client(f.token).Issues.Get(context.Background(), f.org, "widgets", n)
	apptest.Must(t, "get the new issue", err)
	if is.GetTitle() != "Widgets rattle" || is.GetBody() != "When shaken.\nLoudly." || is.GetUser().GetLogin() != f.bob.Login {
		t.Errorf("the API's new issue: %q %q by %s", is.GetTitle(), is.GetBody(), is.GetUser().GetLogin())
	}
	wantPage(t, c, e.URL+loc, 200, "Widgets rattle")
}
