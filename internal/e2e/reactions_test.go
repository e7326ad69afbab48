package e2e_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// TestReactions reacts as a chat-ops bot and people do, through
// go-github: to an issue, an issue comment, a pull request review
// comment and a commit comment. A reaction is created once (201, then
// 200 with the same one), listed (filtered by content, paged), counted in
// its subject's `reactions` rollup (single objects and lists), deleted by
// its author (204) and not by someone else (403). Unknown contents,
// subjects of another repository and a token without access are
// refused as the platform refuses them.
func TestReactions(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo, bob, eve := env.User("octo"), env.User("bob"), env.User("eve")
	env.Repo(octo, "hello")
	env.Repo(octo, "secret", apptest.RepoOpts{Private: true})
	token := env.Token(octo, "repo")
	c := env.Client(token)
	bobToken := env.Token(bob, "public_repo")
	bobClient := env.Client(bobToken)
	eveToken := env.Token(eve, "repo")

	work := apptest.WorkTree(t, map[string]string{"README.md": "# hello\n", "app.txt": "one\n"})
	apptest.Git(t, work, "push", "-q", env.GitURL("octo", "hello", "octo", token), "HEAD:refs/heads/main")
	apptest.Git(t, work, "checkout", "-q", "-b", "feature")
	sha := apptest.Commit(t, work, "Two", map[string]string{"app.txt": "one\ntwo\n"})
	apptest.Git(t, work, "push", "-q", env.GitURL("octo", "hello", "octo", token), "HEAD:refs/heads/feature")

	issue, _, err := c.Issues.Create(ctx, "octo", "hello", github.CreateIssueRequest{Title: "Deploy please"})
	apptest.Must(t, "issue", err)
	comment, _, err := c.Issues.CreateComment(ctx, "octo", "hello", issue.GetNumber(), github.IssueCommentRequest{Body: "@bot deploy"})
	apptest.Must(t, "issue comment", err)

	apptest.Step(t, "an issue comment: created once, listed, counted", func(t *testing.T) {
		r, resp, err := bobClient.Reactions.CreateIssueCommentReaction(ctx, "octo", "hello", comment.GetID(), "eyes")
		apptest.Must(t, "react", err)
		if resp.StatusCode != http.StatusCreated || r.GetContent() != "eyes" || r.GetUser().GetLogin() != "bob" ||
			!strings.HasPrefix(r.GetNodeID(), "REA_") {
			t.Fatalf("created %d %+v", resp.StatusCode, r)
		}
		again, resp, err := bobClient.Reactions.CreateIssueCommentReaction(ctx, "octo", "hello", comment.GetID(), "eyes")
		apptest.Must(t, "react again", err)
		if resp.StatusCode != http.StatusOK || again.GetID() != r.GetID() {
			t.Fatalf("again %d %+v, want 200 with id %d", resp.StatusCode, again, r.GetID())
		}
		for _, content := range []string{"+1", "heart"} {
			_, _, err := c.Reactions.CreateIssueCommentReaction(ctx, "octo", "hello", comment.GetID(), content)
			apptest.Must(t, "octo reacts "+content, err)
		}
		list, _, err := c.Reactions.ListIssueCommentReactions(ctx, "octo", "hello", comment.GetID(), nil)
		apptest.Must(t, "list", err)
		if len(list) != 3 || list[0].GetID() != r.GetID() {
			t.Fatalf("list %+v", list)
		}
		hearts, _, err := c.Reactions.ListIssueCommentReactions(ctx, "octo", "hello", comment.GetID(),
			&github.ListReactionOptions{Content: "heart"})
		apptest.Must(t, "list hearts", err)
		if len(hearts) != 1 || hearts[0].GetUser().GetLogin() != "octo" {
			t.Fatalf("hearts %+v", hearts)
		}
		page, resp, err := c.Reactions.ListIssueCommentReactions(ctx, "octo", "hello", comment.GetID(),
			&github.ListReactionOptions{ListOptions: github.ListOptions{PerPage: 2}})
		apptest.Must(t, "page", err)
		if len(page) != 2 || resp.NextPage != 2 {
			t.Fatalf("page of 2: %d, next %d", len(page), resp.NextPage)
		}
		got, _, err := c.Issues.GetComment(ctx, "octo", "hello", comment.GetID())
		apptest.Must(t, "get comment", err)
		rollup := got.GetReactions()
		if rollup.GetTotalCount() != 3 || rollup.GetEyes() != 1 || rollup.GetPlusOne() != 1 || rollup.GetHeart() != 1 ||
			rollup.GetLaugh() != 0 || !strings.HasSuffix(rollup.GetURL(), "/issues/comments/"+itoa(comment.GetID())+"/reactions") {
			t.Fatalf("comment rollup %+v", rollup)
		}
	})
	apptest.Step(t, "an issue: counted in the issue and in lists", func(t *testing.T) {
		for _, client := range []*github.Client{c, bobClient} {
			_, resp, err := client.Reactions.CreateIssueReaction(ctx, "octo", "hello", issue.GetNumber(), "rocket")
			apptest.Must(t, "react to the issue", err)
			if resp.StatusCode != http.StatusCreated {
				t.Fatalf("issue reaction %d", resp.StatusCode)
			}
		}
		got, _, err := c.Issues.Get(ctx, "octo", "hello", issue.GetNumber())
		apptest.Must(t, "get issue", err)
		if got.GetReactions().GetRocket() != 2 || got.GetReactions().GetTotalCount() != 2 {
			t.Fatalf("issue rollup %+v", got.GetReactions())
		}
		list, _, err := c.Issues.ListByRepo(ctx, "octo", "hello", nil)
		apptest.Must(t, "list issues", err)
		if len(list) != 1 || list[0].GetReactions().GetRocket() != 2 {
			t.Fatalf("listed issue rollup %+v", list)
		}
	})
	apptest.Step(t, "a review comment and a commit comment", func(t *testing.T) {
		pr, _, err := c.PullRequests.Create(ctx, "octo", "hello", github.CreatePullRequest{Title: github.Ptr("Two"),
			Head: "feature", Base: "main"})
		apptest.Must(t, "pull request", err)
		rc, _, err := c.PullRequests.CreateComment(ctx, "octo", "hello", pr.GetNumber(), github.CreatePullRequestCommentRequest{
			Body: "Why two?", Path: "app.txt", Line: github.Ptr(2), Side: github.Ptr("RIGHT"), CommitID: sha})
		apptest.Must(t, "review comment", err)
		_, resp, err := bobClient.Reactions.CreatePullRequestCommentReaction(ctx, "octo", "hello", rc.GetID(), "confused")
		apptest.Must(t, "react to the review comment", err)
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("review comment reaction %d", resp.StatusCode)
		}
		got, _, err := c.PullRequests.GetComment(ctx, "octo", "hello", rc.GetID())
		apptest.Must(t, "get review comment", err)
		if got.GetReactions().GetConfused() != 1 {
			t.Fatalf("review comment rollup %+v", got.GetReactions())
		}
		cc, _, err := c.Repositories.CreateComment(ctx, "octo", "hello", sha, github.CreateCommitCommentRequest{Body: "Built"})
		apptest.Must(t, "commit comment", err)
		_, _, err = bobClient.Reactions.CreateCommentReaction(ctx, "octo", "hello", cc.GetID(), "hooray")
		apptest.Must(t, "react to the commit comment", err)
		gotCC, _, err := c.Repositories.GetComment(ctx, "octo", "hello", cc.GetID())
		apptest.Must(t, "get commit comment", err)
		if gotCC.GetReactions().GetHooray() != 1 || gotCC.GetReactions().GetTotalCount() != 1 {
			t.Fatalf("commit comment rollup %+v", gotCC.GetReactions())
		}
		// A deleted comment takes its reactions with it.
		_, err = c.Repositories.DeleteComment(ctx, "octo", "hello", cc.GetID())
		apptest.Must(t, "delete commit comment", err)
		resp2, body := env.Do("GET", "/repos/octo/hello/comments/"+itoa(cc.GetID())+"/reactions", token, nil)
		if resp2.StatusCode != http.StatusNotFound {
			t.Fatalf("reactions of a deleted comment: %d %s", resp2.StatusCode, body)
		}
	})
	apptest.Step(t, "a release takes six contents", func(t *testing.T) {
		rel, _, err := c.Repositories.CreateRelease(ctx, "octo", "hello", github.CreateReleaseRequest{TagName: "v1.0.0",
			TargetCommitish: github.Ptr("main")})
		apptest.Must(t, "release", err)
		_, resp, err := bobClient.Reactions.CreateReleaseReaction(ctx, "octo", "hello", rel.GetID(), "hooray")
		apptest.Must(t, "react to the release", err)
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("release reaction %d", resp.StatusCode)
		}
		_, resp, _ = bobClient.Reactions.CreateReleaseReaction(ctx, "octo", "hello", rel.GetID(), "-1")
		if resp == nil || resp.StatusCode != http.StatusUnprocessableEntity {
			t.Fatalf("-1 on a release: %v", resp)
		}
		resp2, body := env.Do("GET", "/repos/octo/hello/releases/"+itoa(rel.GetID()), token, nil)
		if resp2.StatusCode != http.StatusOK || !strings.Contains(string(body), `"hooray":1`) {
			t.Fatalf("release rollup: %d %s", resp2.StatusCode, body)
		}
	})
	apptest.Step(t, "deleted by their author only", func(t *testing.T) {
		list, _, err := c.Reactions.ListIssueReactions(ctx, "octo", "hello", issue.GetNumber(), nil)
		apptest.Must(t, "list", err)
		var octos, bobs int64
		for _, r := range list {
			if r.GetUser().GetLogin() == "octo" {
				octos = r.GetID()
			} else {
				bobs = r.GetID()
			}
		}
		resp, err := bobClient.Reactions.DeleteIssueReaction(ctx, "octo", "hello", issue.GetNumber(), octos)
		if resp == nil || resp.StatusCode != http.StatusForbidden {
			t.Fatalf("bob deletes octo's reaction: %v %v", resp, err)
		}
		resp, err = bobClient.Reactions.DeleteIssueReaction(ctx, "octo", "hello", issue.GetNumber(), bobs)
		apptest.Must(t, "bob deletes his own", err)
		if resp.StatusCode != http.StatusNoContent {
			t.Fatalf("delete %d", resp.StatusCode)
		}
		resp, _ = bobClient.Reactions.DeleteIssueReaction(ctx, "octo", "hello", issue.GetNumber(), bobs)
		if resp.StatusCode != http.StatusNotFound {
			t.Fatalf("delete twice: %d", resp.StatusCode)
		}
		got, _, err := c.Issues.Get(ctx, "octo", "hello", issue.GetNumber())
		apptest.Must(t, "get issue", err)
		if got.GetReactions().GetRocket() != 1 {
			t.Fatalf("after delete %+v", got.GetReactions())
		}
	})
	apptest.Step(t, "refusals", func(t *testing.T) {
		base := "/repos/octo/hello/issues/" + itoa(int64(issue.GetNumber())) + "/reactions"
		for _, tc := range []struct {
			name, method, path, token, body string
			status                          int
		}{
			{"an unknown content", "POST", base, bobToken, `{"content":"party"}`, 422},
			{"no content", "POST", base, bobToken, `{}`, 422},
			{"an unknown content filter", "GET", base + "?content=party", token, "", 422},
			{"an issue that does not exist", "POST", "/repos/octo/hello/issues/999/reactions", bobToken, `{"content":"eyes"}`, 404},
			{"a comment of another repository", "POST", "/repos/octo/secret/issues/comments/" + itoa(comment.GetID()) + "/reactions", token, `{"content":"eyes"}`, 404},
			{"a private repository to a stranger", "GET", "/repos/octo/secret/issues/1/reactions", eveToken, "", 404},
			{"anonymously", "POST", base, "", `{"content":"eyes"}`, 404},
		} {
			resp, body := env.DoJSON(tc.method, tc.path, tc.token, tc.body)
			if resp.StatusCode != tc.status || !strings.Contains(string(body), `"message"`) {
				t.Errorf("%s: %d %s, want %d", tc.name, resp.StatusCode, body, tc.status)
			}
		}
		resp, body := env.Get(base, "")
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"rocket"`) {
			t.Fatalf("anonymous list of a public repository: %d %s", resp.StatusCode, body)
		}
	})
}
