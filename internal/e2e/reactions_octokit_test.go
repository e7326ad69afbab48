package e2e_test

import (
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// botSummary is what testdata/node/octokit-bot.mjs prints.
type botSummary struct {
	First, Second struct {
		Found    int
		Opened   *int
		Statuses []int
	}
	Error string
}

// TestOctokitChatOpsBot runs a chat-ops bot on octokit.js
// (testdata/node/octokit-bot.mjs) twice: the first run finds no open pull
// request for its branch through search, opens one, and reacts `eyes` to
// the two comments that mention it (201 each); the second finds the pull
// request and does not open another, and its reactions are the same ones
// (200). The comments' rollups count one `eyes` each.
func TestOctokitChatOpsBot(t *testing.T) {
	t.Parallel()
	dir := apptest.NodeModules(t, "@octokit/rest")
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo, bot := env.User("octo"), env.User("deploybot")
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo")
	c := env.Client(token)
	inv, _, err := c.Repositories.AddCollaborator(ctx, "octo", "hello", "deploybot", &github.RepositoryAddCollaboratorOptions{Permission: "push"})
	apptest.Must(t, "invite the bot", err)
	botToken := env.Token(bot, "repo")
	_, err = env.Client(botToken).Users.AcceptInvitation(ctx, inv.GetID())
	apptest.Must(t, "the bot accepts", err)
	work := apptest.WorkTree(t, map[string]string{"README.md": "# hello\n"})
	apptest.Git(t, work, "push", "-q", env.GitURL("octo", "hello", "octo", token), "HEAD:refs/heads/main")
	apptest.Commit(t, work, "Bump", map[string]string{"v.txt": "2\n"})
	apptest.Git(t, work, "push", "-q", env.GitURL("octo", "hello", "octo", token), "HEAD:refs/heads/bot/bump")
	issue, _, err := c.Issues.Create(ctx, "octo", "hello", github.CreateIssueRequest{Title: "Deploy"})
	apptest.Must(t, "issue", err)
	var mentions []int64
	for _, body := range []string{"@deploybot deploy staging", "no bot here", "thanks @deploybot"} {
		cm, _, err := c.Issues.CreateComment(ctx, "octo", "hello", issue.GetNumber(), github.IssueCommentRequest{Body: body})
		apptest.Must(t, "comment", err)
		if body != "no bot here" {
			mentions = append(mentions, cm.GetID())
		}
	}

	app := apptest.StartNodeApp(t, dir, "octokit-bot.mjs", "FORGEAPI_URL="+env.URL+"/api/v3", "FORGEAPI_TOKEN="+botToken,
		"OWNER=octo", "REPO=hello", "BRANCH=bot/bump", "BOT=deploybot", "ISSUE=1")
	var s botSummary
	out := app.Summary(&s)
	if s.Error != "" || s.First.Found != 0 || s.First.Opened == nil || *s.First.Opened != 2 ||
		len(s.First.Statuses) != 2 || s.First.Statuses[0] != 201 || s.First.Statuses[1] != 201 {
		t.Fatalf("first run: %s", out)
	}
	if s.Second.Found != 1 || s.Second.Opened != nil || len(s.Second.Statuses) != 2 || s.Second.Statuses[0] != 200 {
		t.Fatalf("second run: %s", out)
	}
	for _, id := range mentions {
		cm, _, err := c.Issues.GetComment(ctx, "octo", "hello", id)
		apptest.Must(t, "comment", err)
		if cm.GetReactions().GetEyes() != 1 || cm.GetReactions().GetTotalCount() != 1 {
			t.Fatalf("comment %d rollup %+v", id, cm.GetReactions())
		}
	}
	prs, _, err := c.PullRequests.List(ctx, "octo", "hello", nil)
	apptest.Must(t, "pulls", err)
	if len(prs) != 1 {
		t.Fatalf("%d pull requests, want the bot's one", len(prs))
	}
}
