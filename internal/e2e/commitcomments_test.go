package e2e_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/webhooks"
)

// TestCommitComments comments on a commit as a CI bot and a reviewer do,
// through go-github: on the whole commit, on a line of a file's diff by
// position and by line; lists them for the commit and the repository,
// paged; edits and deletes them (authors, or push access); receives
// commit_comment created signed and sees CommitCommentEvent in the feed.
// Every spot outside the diff, a missing body or commit is a 422. The
// commit's comment_count counts the comments left on it.
func TestCommitComments(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	ctx := apptest.Ctx()
	octo, bob := env.User("octo"), env.User("bob")
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo", "admin:repo_hook")
	c := env.Client(token)
	bobClient := env.Client(env.Token(bob, "public_repo"))
	work := apptest.WorkTree(t, map[string]string{"README.md": "# hello\n", "app.txt": "one\ntwo\nthree\n"})
	sha := apptest.Commit(t, work, "Second", map[string]string{"app.txt": "one\n2\nthree\nfour\n"})
	apptest.Git(t, work, "push", "-q", env.GitURL("octo", "hello", "octo", token), "HEAD:refs/heads/main")
	rc := apptest.NewReceiver(t, "s")
	_, _, err := c.Repositories.CreateHook(ctx, "octo", "hello", &github.Hook{Events: []string{"commit_comment"},
		Config: &github.HookConfig{URL: github.Ptr(rc.URL), ContentType: github.Ptr("json"), Secret: github.Ptr("s")}})
	apptest.Must(t, "hook", err)
	create := func(t *testing.T, client *github.Client, ref string, req github.CreateCommitCommentRequest) *github.RepositoryComment {
		t.Helper()
		cc, resp, err := client.Repositories.CreateComment(ctx, "octo", "hello", ref, req)
		apptest.Must(t, "create a commit comment", err)
		if resp.StatusCode != http.StatusCreated || resp.Header.Get("Location") != cc.GetURL() || cc.GetCommitID() != sha {
			t.Fatalf("created %d %+v", resp.StatusCode, cc)
		}
		return cc
	}
	var whole, byPosition, byLine, bobs *github.RepositoryComment

	apptest.Step(t, "comments on the commit, a position and a line", func(t *testing.T) {
		whole = create(t, c, sha, github.CreateCommitCommentRequest{Body: "Build passed"})
		if whole.Path != nil || whole.Position != nil || whole.GetAuthorAssociation() != "OWNER" || whole.GetUser().GetLogin() != "octo" ||
			!strings.HasSuffix(whole.GetHTMLURL(), "/octo/hello/commit/"+sha+"#commitcomment-"+itoa(whole.GetID())) {
			t.Fatalf("whole-commit comment %+v", whole)
		}
		// The diff: @@ -1,3 +1,4 @@ / one / -two / +2 / three / +four.
		byPosition = create(t, c, "main", github.CreateCommitCommentRequest{Body: "Why 2?", Path: github.Ptr("app.txt"), Position: github.Ptr(3)})
		if byPosition.GetPath() != "app.txt" || byPosition.GetPosition() != 3 {
			t.Fatalf("by position %+v", byPosition)
		}
		resp, body := env.Get("/repos/octo/hello/comments/"+itoa(byPosition.GetID()), "token "+token)
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"line":2`) {
			t.Fatalf("by position's line: %d %s", resp.StatusCode, body)
		}
		byLine = create(t, c, sha[:10], github.CreateCommitCommentRequest{Body: "New line", Path: github.Ptr("app.txt"), Line: github.Ptr(4)})
		if byLine.GetPosition() != 5 {
			t.Fatalf("by line: position %d, want 5", byLine.GetPosition())
		}
		bobs = create(t, bobClient, sha, github.CreateCommitCommentRequest{Body: "Nice"})
		if bobs.GetAuthorAssociation() != "NONE" {
			t.Fatalf("bob's association %q", bobs.GetAuthorAssociation())
		}
	})
	apptest.Step(t, "bad spots and bodies", func(t *testing.T) {
		for _, tc := range []struct{ name, path, body, field string }{
			{"a position outside the diff", "/commits/" + sha + "/comments", `{"body":"x","path":"app.txt","position":9}`, "position"},
			{"a line outside the diff", "/commits/" + sha + "/comments", `{"body":"x","path":"app.txt","line":9}`, "line"},
			{"a file the commit did not change", "/commits/" + sha + "/comments", `{"body":"x","path":"README.md","position":1}`, "path"},
			{"a position without a path", "/commits/" + sha + "/comments", `{"body":"x","position":1}`, "path"},
			{"no body", "/commits/" + sha + "/comments", `{"path":"app.txt"}`, "body"},
			{"a commit that does not exist", "/commits/" + strings.Repeat("0", 40) + "/comments", `{"body":"x"}`, "commit_id"},
		} {
			resp, body := env.DoJSON("POST", "/repos/octo/hello"+tc.path, token, tc.body)
			if e := apptest.WantError(t, tc.name, resp, body, http.StatusUnprocessableEntity); len(e.Errors) != 1 || e.Errors[0].Field != tc.field {
				t.Fatalf("%s: %+v", tc.name, e)
			}
		}
		reader := env.FineGrainedToken(octo, octo, nil, "contents:read")
		_, resp, _ := env.Client(reader).Repositories.CreateComment(ctx, "octo", "hello", sha, github.CreateCommitCommentRequest{Body: "x"})
		if apptest.ResponseStatus(resp) != http.StatusForbidden {
			t.Fatalf("a contents:read token comments: %d", apptest.ResponseStatus(resp))
		}
	})
	apptest.Step(t, "lists for the commit and the repository", func(t *testing.T) {
		list, _, err := c.Repositories.ListCommitComments(ctx, "octo", "hello", sha, nil)
		apptest.Must(t, "list the commit's", err)
		if len(list) != 4 || list[0].GetID() != whole.GetID() || list[3].GetID() != bobs.GetID() {
			t.Fatalf("commit's comments: %d", len(list))
		}
		page, resp, err := env.Client("").Repositories.ListComments(ctx, "octo", "hello", &github.ListOptions{PerPage: 3})
		apptest.Must(t, "list the repository's", err)
		if len(page) != 3 || resp.NextPage != 2 || page[1].GetID() != byPosition.GetID() {
			t.Fatalf("repository's first page: %d, next %d", len(page), resp.NextPage)
		}
		other, _, err := c.Repositories.ListCommitComments(ctx, "octo", "hello", strings.Repeat("a", 40), nil)
		apptest.Must(t, "list another commit's", err)
		if len(other) != 0 {
			t.Fatalf("an unknown commit's comments: %d", len(other))
		}
	})
	apptest.Step(t, "authors edit, push access deletes", func(t *testing.T) {
		_, resp, _ := bobClient.Repositories.UpdateComment(ctx, "octo", "hello", whole.GetID(), github.UpdateCommitCommentRequest{Body: "mine now"})
		if apptest.ResponseStatus(resp) != http.StatusForbidden {
			t.Fatalf("bob edits octo's: %d", apptest.ResponseStatus(resp))
		}
		edited, _, err := bobClient.Repositories.UpdateComment(ctx, "octo", "hello", bobs.GetID(), github.UpdateCommitCommentRequest{Body: "Very nice"})
		apptest.Must(t, "bob edits his own", err)
		if edited.GetBody() != "Very nice" {
			t.Fatalf("edited %+v", edited)
		}
		resp, err = bobClient.Repositories.DeleteComment(ctx, "octo", "hello", byLine.GetID())
		if apptest.ResponseStatus(resp) != http.StatusForbidden {
			t.Fatalf("bob deletes octo's: %d %v", apptest.ResponseStatus(resp), err)
		}
		_, err = c.Repositories.DeleteComment(ctx, "octo", "hello", bobs.GetID())
		apptest.Must(t, "the owner deletes bob's", err)
		_, resp, _ = c.Repositories.GetComment(ctx, "octo", "hello", bobs.GetID())
		if apptest.ResponseStatus(resp) != http.StatusNotFound {
			t.Fatalf("a deleted comment: %d", apptest.ResponseStatus(resp))
		}
	})
	apptest.Step(t, "the commit counts its comments", func(t *testing.T) {
		got, _, err := c.Repositories.GetCommit(ctx, "octo", "hello", sha, nil)
		apptest.Must(t, "get the commit", err)
		if got.GetCommit().GetCommentCount() != 3 {
			t.Fatalf("comment_count %d, want 3 (four made, one deleted)", got.GetCommit().GetCommentCount())
		}
		parent, _, err := c.Repositories.GetCommit(ctx, "octo", "hello", got.Parents[0].GetSHA(), nil)
		apptest.Must(t, "get the parent", err)
		if parent.GetCommit().GetCommentCount() != 0 {
			t.Fatalf("the parent's comment_count %d, want 0", parent.GetCommit().GetCommentCount())
		}
	})
	apptest.Step(t, "webhooks and the feed", func(t *testing.T) {
		rc.WaitFor(t, func(d apptest.Delivery) string {
			e, ok := d.Parsed.(*github.CommitCommentEvent)
			if !ok {
				return ""
			}
			return e.GetAction() + " " + e.GetComment().GetBody() + " " + e.GetSender().GetLogin()
		}, "created Build passed octo", "created Why 2? octo", "created New line octo", "created Nice bob")
		evs, _, err := c.Activity.ListRepositoryEvents(ctx, "octo", "hello", nil)
		apptest.Must(t, "repository events", err)
		n := 0
		for _, e := range evs {
			if e.GetType() == "CommitCommentEvent" {
				n++
			}
		}
		if n != 4 {
			t.Fatalf("CommitCommentEvents in the feed: %d, want 4", n)
		}
	})
}
