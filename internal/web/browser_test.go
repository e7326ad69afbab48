package web_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/apptest/browsertest"
)

// TestBlobPageInBrowser opens a file's page at a line anchor in headless
// chromium (skipped without it; .ci/run installs it): the code is
// highlighted, the anchored line is marked, and the page fits a phone's
// width. A screenshot stays in the test's temp dir.
func TestBlobPageInBrowser(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := newTab(t)
	err := chromedp.Do(ctx,
		chromedp.Navigate(f.e.URL+"/"+f.org+"/widgets/blob/main/main.go#L4"),
		chromedp.WaitVisible(chromedp.CSS("#L4")))
	if err != nil {
		t.Fatalf("open the blob page: %v", err)
	}
	lineText := run(t, ctx, chromedp.Text(chromedp.CSS("#L4")))
	keyword := run(t, ctx, chromedp.Text(chromedp.CSS(".chroma .kn")))
	background := run(t, ctx, chromedp.Evaluate[string](`getComputedStyle(document.querySelector('#L4').closest('.line')).backgroundColor`))
	overflow := run(t, ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > document.documentElement.clientWidth`))
	png := run(t, ctx, chromedp.FullScreenshot(90))
	shot := filepath.Join(t.TempDir(), "blob.png")
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", shot)
	if strings.TrimSpace(lineText) != "4" {
		t.Errorf("#L4 reads %q, want 4", lineText)
	}
	if keyword != "package" {
		t.Errorf("the highlighted keyword is %q, want package", keyword)
	}
	if background == "" || background == "rgba(0, 0, 0, 0)" {
		t.Errorf("the anchored line is not marked (background %q)", background)
	}
	if overflow {
		t.Errorf("the page is wider than a 375 px screen")
	}
}

// run runs one browser action and returns its result, failing the test
// on an error.
func run[T any](t *testing.T, ctx context.Context, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	return v
}

// TestMain closes the package's chromium after the last test.
func TestMain(m *testing.M) {
	code := m.Run()
	chromium.Close()
	os.Exit(code)
}

// chromium is the package's one headless browser.
var chromium browsertest.Chromium

// newTab opens a tab in the package's chromium, in a browser context of
// its own (its own cookies and storage), at a phone's viewport (375x800),
// and returns its context, which ends after two minutes; the tab and its
// browser context close when the test ends. The test is skipped without
// chromium (.ci/run installs it) and under the race detector
// (apptest.OnceWithoutRace).
func newTab(t *testing.T) context.Context {
	t.Helper()
	apptest.OnceWithoutRace(t)
	return chromium.Tab(t, 375, 800, 2*time.Minute)
}

// TestBrowseAndComment is a visit in chromium: follow a repository's
// links down to a file, open the issue from the issues' list, sign in
// from its "Sign in to comment" link (which comes back to the issue) and
// comment with the form, then open a new issue with its form and comment
// on it. Screenshots stay under the test's temp dir.
func TestBrowseAndComment(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	b := newStory(t)
	ctx := b.ctx
	repo := f.e.URL + "/" + f.org + "/widgets"
	do := func(t *testing.T, what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		b.t = t
		b.do(what, actions...)
	}
	apptest.Step(t, "browse to a file", func(t *testing.T) {
		do(t, "open the repository", chromedp.Navigate(repo), chromedp.WaitVisible(chromedp.CSS("table.files")))
		do(t, "open docs", chromedp.Click(chromedp.CSS(`a.dir[href$="/tree/main/docs"]`)), chromedp.WaitVisible(chromedp.CSS(`a.dir[href$="/docs/guide"]`)))
		do(t, "open guide", chromedp.Click(chromedp.CSS(`a.dir[href$="/docs/guide"]`)), chromedp.WaitVisible(chromedp.CSS(`a.file[href$="/use.md"]`)))
		do(t, "open use.md", chromedp.Click(chromedp.CSS(`a.file[href$="/use.md"]`)), chromedp.WaitVisible(chromedp.CSS("#L1")))
		b.shot("file")
		if text := run(t, ctx, chromedp.Text(chromedp.CSS(".code-view"))); !strings.Contains(text, "Use it.") {
			t.Fatalf("the file's page shows %q", text)
		}
	})
	apptest.Step(t, "sign in from the issue", func(t *testing.T) {
		do(t, "open the issues", chromedp.Navigate(repo+"/issues"), chromedp.WaitVisible(chromedp.CSS(".issue-list")))
		do(t, "open the issue", chromedp.Click(chromedp.CSS(`.issue-list a[href$="/issues/1"]`)), chromedp.WaitVisible(chromedp.CSS(".sign-in-to-comment a")))
		do(t, "sign in", chromedp.Click(chromedp.CSS(".sign-in-to-comment a")), chromedp.WaitVisible(chromedp.CSS("#login-form")),
			chromedp.SendKeys(chromedp.CSS("#login"), f.bob.Login), chromedp.SendKeys(chromedp.CSS("#password"), password),
			chromedp.Click(chromedp.CSS("#sign-in")), chromedp.WaitVisible(chromedp.CSS("#comment-form")))
		b.shot("issue-signed-in")
	})
	apptest.Step(t, "comment on the issue", func(t *testing.T) {
		do(t, "comment", chromedp.SendKeys(chromedp.CSS("#comment-body"), "Seen from a **browser**."),
			// The opening post and one comment before: the new page has a third.
			chromedp.Click(chromedp.CSS("#comment-submit")), chromedp.WaitVisible(chromedp.CSS(`article.comment:nth-of-type(3) strong`)))
		b.shot("commented")
		if loc := run(t, ctx, chromedp.Location()); !strings.Contains(loc, "/issues/1#issuecomment-") {
			t.Errorf("after the comment the browser is at %s", loc)
		}
		if text := run(t, ctx, chromedp.Text(chromedp.CSS("article.comment:last-of-type"))); !strings.Contains(text, f.bob.Login) || !strings.Contains(text, "Seen from a browser.") {
			t.Errorf("the last comment reads %q", text)
		}
	})
	apptest.Step(t, "open an issue and comment on it", func(t *testing.T) {
		do(t, "open the issues", chromedp.Navigate(repo+"/issues"), chromedp.WaitVisible(chromedp.CSS("#new-issue")))
		do(t, "new issue", chromedp.Click(chromedp.CSS("#new-issue")), chromedp.WaitVisible(chromedp.CSS("#new-issue-form")),
			chromedp.SendKeys(chromedp.CSS("#new-issue-title"), "Widgets rattle"),
			chromedp.SendKeys(chromedp.CSS("#new-issue-body"), "When **shaken**, see #1."),
			chromedp.Click(chromedp.CSS("#new-issue-submit")), chromedp.WaitVisible(chromedp.CSS("#issue-body strong")))
		b.shot("opened")
		if title := run(t, ctx, chromedp.Text(chromedp.CSS(".issue-title"))); !strings.Contains(title, "Widgets rattle") {
			t.Errorf("the new issue's page is titled %q", title)
		}
		href := run(t, ctx, chromedp.Evaluate[string](`document.querySelector("#issue-body a[href$='/issues/1']")?.getAttribute("href") || ""`))
		if href == "" {
			t.Error("the new issue's #1 is not linked")
		}
		do(t, "comment", chromedp.SendKeys(chromedp.CSS("#comment-body"), "Rattles here too."),
			chromedp.Click(chromedp.CSS("#comment-submit")), chromedp.WaitVisible(chromedp.CSS(`article.comment:nth-of-type(2)`)))
		if text := run(t, ctx, chromedp.Text(chromedp.CSS("article.comment:last-of-type"))); !strings.Contains(text, "Rattles here too.") {
			t.Errorf("the new issue's comment reads %q", text)
		}
	})
}

// a11yProblems is a small accessibility check run in the page: the
// document's language, one h1 outside rendered Markdown, no heading level
// skipped, a label for every form control, header cells in every table,
// text or a label on every link and button, alt text on every image.
const a11yProblems = `(() => {
  const out = [];
  if (!document.documentElement.lang) out.push("no lang on <html>");
  const outside = (el) => !el.closest(".markdown");
  const h1 = [...document.querySelectorAll("h1")].filter(outside);
  if (h1.length !== 1) out.push(h1.length + " h1 elements");
  let last = 0;
  for (const h of [...document.querySelectorAll("h1,h2,h3,h4,h5,h6")].filter(outside)) {
    const level = +h.tagName[1];
    if (level > last + 1) out.push("heading " + h.tagName + " after h" + last + ": " + h.textContent.trim());
    last = level;
  }
  for (const c of document.querySelectorAll("input:not([type=hidden]),textarea,select")) {
    const labelled = c.labels && c.labels.length > 0 || c.getAttribute("aria-label");
    if (!labelled) out.push("unlabelled " + c.tagName + " " + (c.id || c.name));
  }
  for (const t of document.querySelectorAll("table")) {
    if (!t.querySelector("th")) out.push("a table without header cells");
  }
  for (const a of document.querySelectorAll("a,button")) {
    if (!a.textContent.trim() && !a.getAttribute("aria-label")) out.push("an empty " + a.tagName + " " + (a.getAttribute("href") || ""));
  }
  for (const img of document.querySelectorAll("img:not([alt])")) out.push("an image without alt: " + img.src);
  return out;
})()`

// TestPagesAccessible runs the accessibility check on each kind of page,
// signed in (so that the page has its comment form).
func TestPagesAccessible(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := newTab(t)
	repo := f.e.URL + "/" + f.org + "/widgets"
	if err := chromedp.Do(ctx, chromedp.Navigate(f.e.URL+"/login"), chromedp.WaitVisible(chromedp.CSS("#login-form")),
		chromedp.SendKeys(chromedp.CSS("#login"), f.bob.Login), chromedp.SendKeys(chromedp.CSS("#password"), password),
		chromedp.Click(chromedp.CSS("#sign-in")), chromedp.WaitVisible(chromedp.CSS("header .who"))); err != nil {
		t.Fatalf("sign in: %v", err)
	}
	// The check itself finds what it looks for.
	bad := `data:text/html,<h2>x</h2><h4>y</h4><table><tr><td>1</td></tr></table><input id=q><a href="/x"></a><img src="/i.png">`
	if err := chromedp.Do(ctx, chromedp.Navigate(bad), chromedp.WaitReady(chromedp.CSS("body"))); err != nil {
		t.Fatal(err)
	}
	if problems := run(t, ctx, chromedp.Evaluate[[]string](a11yProblems)); len(problems) != 8 {
		t.Fatalf("the check found %d problems in a page with 8: %q", len(problems), problems)
	}
	n := strconv.Itoa(f.merged)
	for _, p := range []string{"/" + f.org, "", "/tree/main/docs", "/blob/main/main.go", "/commits/main", "/commit/" + f.first,
		"/compare/" + f.first + "...main", "/issues", "/issues/1", "/pulls?state=all", "/pull/" + n, "/pull/" + n + "/commits",
		"/pull/" + n + "/files", "/releases", "/releases/tag/v1.0", "/search?q=squeak", "/search?q=widgets&type=repositories", "/issues/new", "/pull/" + n + "/files?line=diff-1R4"} {
		target := repo + p
		if strings.HasPrefix(p, "/"+f.org) || strings.HasPrefix(p, "/search") {
			target = f.e.URL + p
		}
		if err := chromedp.Do(ctx, chromedp.Navigate(target), chromedp.WaitVisible(chromedp.CSS("main"))); err != nil {
			t.Fatalf("open %s: %v", target, err)
		}
		if problems := run(t, ctx, chromedp.Evaluate[[]string](a11yProblems)); len(problems) > 0 {
			t.Errorf("%s:\n  %s", target, strings.Join(problems, "\n  "))
		}
	}
}

// browserStory is a chromium tab of a story, its screenshots kept under
// the test's temp dir.
type browserStory struct {
	t     *testing.T
	ctx   context.Context
	shots string
}

func newStory(t *testing.T) *browserStory {
	t.Helper()
	ctx := newTab(t)
	dir := filepath.Join(t.TempDir(), "screenshots")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots in %s", dir)
	return &browserStory{t: t, ctx: ctx, shots: dir}
}

// do runs the actions of a step, failing the test with the page's
// address on an error.
func (b *browserStory) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		loc, _ := chromedp.Run(b.ctx, chromedp.Location())
		b.t.Fatalf("%s: %v (at %s)", what, err, loc)
	}
}

// shot keeps a screenshot of the whole page as NAME.png.
func (b *browserStory) shot(name string) {
	b.t.Helper()
	png := run(b.t, b.ctx, chromedp.FullScreenshot(90))
	if err := os.WriteFile(filepath.Join(b.shots, name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// signIn signs the tab in as login from the sign-in page.
func (b *browserStory) signIn(base, login string) {
	b.t.Helper()
	b.do("sign in as "+login, chromedp.Navigate(base+"/login"), chromedp.WaitVisible(chromedp.CSS("#login-form")),
		chromedp.SendKeys(chromedp.CSS("#login"), login), chromedp.SendKeys(chromedp.CSS("#password"), password),
		chromedp.Click(chromedp.CSS("#sign-in")), chromedp.WaitVisible(chromedp.CSS("header .who")))
}

// TestReviewAndMergeInBrowser is the pull request's story in chromium: a
// reader approves it with the review form and comments on a line of its
// diff; its author, an administrator,
// presses the merge button while the required check "ci" fails and is
// refused with the API's message, then merges once the check passes, and
// the page shows it merged. Screenshots of each step stay under the
// test's temp dir.
func TestReviewAndMergeInBrowser(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	e, ctx := f.e, context.Background()
	api := e.Client(f.token)
	pr, head := openProtectedPull(t, f)
	page := f.e.URL + "/" + f.org + "/widgets/pull/" + strconv.Itoa(pr.GetNumber())
	_, _, err := api.Repositories.CreateStatus(ctx, f.org, "widgets", head, github.RepoStatus{State: github.Ptr("failure"), Context: github.Ptr("ci")})
	apptest.Must(t, "fail the check", err)

	reader := newStory(t)
	apptest.Step(t, "a reader approves", func(t *testing.T) {
		reader.t = t
		reader.signIn(e.URL, f.bob.Login)
		reader.do("open the pull request", chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS("#review-form")))
		if n := run(t, reader.ctx, chromedp.Evaluate[int](`document.querySelectorAll("#merge-form").length`)); n != 0 {
			t.Error("a reader gets the merge button")
		}
		reader.do("approve", chromedp.SendKeys(chromedp.CSS("#review-body"), "Red is right."),
			chromedp.Click(chromedp.CSS(`input[name=event][value=APPROVE]`)), chromedp.Click(chromedp.CSS("#review-submit")),
			chromedp.WaitVisible(chromedp.CSS("article.review")))
		reader.shot("approved")
		if text := run(t, reader.ctx, chromedp.Text(chromedp.CSS("article.review"))); !strings.Contains(text, "approved") || !strings.Contains(text, "Red is right.") {
			t.Errorf("the review reads %q", text)
		}
	})
	apptest.Step(t, "a reader comments on a line of the diff", func(t *testing.T) {
		reader.t = t
		reader.do("open the files", chromedp.Navigate(page+"/files"), chromedp.WaitVisible(chromedp.CSS(`a.add-comment[href$="?line=diff-1R4#diff-1R4"]`)))
		reader.do("open the line's form", chromedp.Click(chromedp.CSS(`a.add-comment[href$="?line=diff-1R4#diff-1R4"]`)),
			chromedp.WaitVisible(chromedp.CSS("#line-comment-form")))
		reader.do("comment", chromedp.SendKeys(chromedp.CSS("#line-comment-body"), "Redder, maybe?"),
			chromedp.Click(chromedp.CSS("#line-comment-submit")), chromedp.WaitVisible(chromedp.CSS("tr.line-comments .line-comment")))
		reader.shot("line-comment")
		if text := run(t, reader.ctx, chromedp.Text(chromedp.CSS("tr.line-comments .line-comment"))); !strings.Contains(text, "Redder, maybe?") {
			t.Errorf("the line comment reads %q", text)
		}
		list, _, err := api.PullRequests.ListComments(ctx, f.org, "widgets", pr.GetNumber(), nil)
		apptest.Must(t, "list the review comments", err)
		if len(list) != 1 || list[0].GetLine() != 4 || list[0].GetPath() != "main.go" || list[0].GetUser().GetLogin() != f.bob.Login {
			t.Errorf("the API's review comments: %v", list)
		}
	})

	owner := newStory(t)
	apptest.Step(t, "the merge refused while the check fails", func(t *testing.T) {
		owner.t = t
		owner.signIn(e.URL, f.alice.Login)
		owner.do("open the pull request", chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS("#merge-form")))
		owner.shot("before-merge")
		owner.do("merge", chromedp.SetValue(chromedp.CSS("#merge-method"), "squash"), chromedp.Click(chromedp.CSS("#merge-submit")),
			chromedp.WaitVisible(chromedp.CSS("#error-message")))
		owner.shot("merge-refused")
		if text := run(t, owner.ctx, chromedp.Text(chromedp.CSS("#error-message"))); !strings.Contains(text, "Required status check") {
			t.Errorf("the refused merge's page reads %q", text)
		}
		got, _, err := api.PullRequests.Get(ctx, f.org, "widgets", pr.GetNumber())
		apptest.Must(t, "get the pull request", err)
		if got.GetMerged() {
			t.Fatal("merged while the required check fails")
		}
	})

	_, _, err = api.Repositories.CreateStatus(ctx, f.org, "widgets", head, github.RepoStatus{State: github.Ptr("success"), Context: github.Ptr("ci")})
	apptest.Must(t, "pass the check", err)
	apptest.Step(t, "the merge once the check passes", func(t *testing.T) {
		owner.t = t
		owner.do("open the pull request", chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS("#merge-form")))
		owner.do("merge", chromedp.SetValue(chromedp.CSS("#merge-method"), "squash"), chromedp.Click(chromedp.CSS("#merge-submit")),
			chromedp.WaitVisible(chromedp.CSS(".state-merged")))
		owner.shot("merged")
		if loc := run(t, owner.ctx, chromedp.Location()); loc != page {
			t.Errorf("after the merge the browser is at %s", loc)
		}
		got, _, err := api.PullRequests.Get(ctx, f.org, "widgets", pr.GetNumber())
		apptest.Must(t, "get the pull request", err)
		if !got.GetMerged() || got.GetMergedBy().GetLogin() != f.alice.Login {
			t.Errorf("after the merge button: merged %v by %s", got.GetMerged(), got.GetMergedBy().GetLogin())
		}
		if n := run(t, owner.ctx, chromedp.Evaluate[int](`document.querySelectorAll("#merge-form").length`)); n != 0 {
			t.Error("the merged pull request still has the merge button")
		}
	})
}
