package pulls_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/githost"
	"forgeapi/internal/webhooks"
)

// TestMergeMethods merges with squash and rebase (authors kept, the
// merger as committer), finds a conflict in the background (mergeable
// false, dirty, 405 on merge), closes and reopens, refuses reopening a
// merged one, and merges a pull request from a fork whose commits were
// copied into refs/pull/N/head.
func TestMergeMethods(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	ctx := apptest.Ctx()
	octo, bob := env.User("octo"), env.User("bob")
	base := env.Repo(octo, "hello")
	token := env.Token(octo, "repo")
	owner := env.Client(token)
	proj := newProject(t, env, "octo", "hello", "octo", token)
	open := func(head, title string) *github.PullRequest {
		t.Helper()
		pr, _, err := owner.PullRequests.Create(ctx, "octo", "hello", github.CreatePullRequest{Title: github.Ptr(title), Head: head, Base: "main"})
		apptest.Must(t, "open "+head, err)
		return pr
	}

	proj.commitOn("squashed", "First", map[string]string{"a.txt": "a\n"})
	proj.commitOn("squashed", "Second", map[string]string{"b.txt": "b\n"})
	sq := open("squashed", "Squash me")
	res, _, err := owner.PullRequests.Merge(ctx, "octo", "hello", sq.GetNumber(), "", &github.PullRequestOptions{MergeMethod: "squash"})
	apptest.Must(t, "squash", err)
	got := apptest.Git(t, proj.dir, "show", "-s", "--format=%P|%s|%b|%an|%cn", proj.remoteRef("refs/heads/main"))
	if proj.remoteRef("refs/heads/main") != res.GetSHA() || len(strings.Fields(strings.Split(got, "|")[0])) != 1 ||
		!strings.Contains(got, "|Squash me (#1)|") || !strings.Contains(got, "* First") || !strings.Contains(got, "|octo|octo") {
		t.Fatalf("squash commit: %q", got)
	}
	apptest.Git(t, proj.dir, "pull", "-q", "--ff-only", "origin", "main")

	proj.commitOn("rebased", "Third", map[string]string{"c.txt": "c\n"})
	proj.commitOn("rebased", "Fourth", map[string]string{"c.txt": "c\nd\n"})
	proj.commitOn("other", "Unrelated", map[string]string{"z.txt": "z\n"})
	other := open("other", "Other")
	_, _, err = owner.PullRequests.Merge(ctx, "octo", "hello", other.GetNumber(), "", nil)
	apptest.Must(t, "merge other", err)
	rb := open("rebased", "Rebase me")
	res, _, err = owner.PullRequests.Merge(ctx, "octo", "hello", rb.GetNumber(), "", &github.PullRequestOptions{MergeMethod: "rebase"})
	apptest.Must(t, "rebase", err)
	log := apptest.Git(t, proj.dir, "log", "--format=%s|%an|%cn|%P", "-3", proj.remoteRef("refs/heads/main"))
	lines := strings.Split(strings.TrimSpace(log), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "Fourth|Test Author|octo|") || !strings.HasPrefix(lines[1], "Third|Test Author|octo|") ||
		!strings.HasPrefix(lines[2], "Merge pull request #2") || res.GetSHA() != proj.remoteRef("refs/heads/main") {
		t.Fatalf("rebased history:\n%s", log)
	}
	apptest.Git(t, proj.dir, "pull", "-q", "--ff-only", "origin", "main")

	proj.commitOn("left", "Left", map[string]string{"app.txt": "one\nleft\nthree\n"})
	proj.commitOn("right", "Right", map[string]string{"app.txt": "one\nright\nthree\n"})
	left, right := open("left", "Left"), open("right", "Right")
	if left.Mergeable != nil || left.GetMergeableState() != "unknown" {
		t.Fatalf("a new pull request's mergeability: %v %q", left.Mergeable, left.GetMergeableState())
	}
	_, _, err = owner.PullRequests.Merge(ctx, "octo", "hello", left.GetNumber(), "", nil)
	apptest.Must(t, "merge left", err)
	pr := waitMergeable(t, owner, "octo", "hello", right.GetNumber())
	if pr.GetMergeable() || pr.GetMergeableState() != "dirty" {
		t.Fatalf("conflicting: %v %q", pr.GetMergeable(), pr.GetMergeableState())
	}
	_, resp, _ := owner.PullRequests.Merge(ctx, "octo", "hello", right.GetNumber(), "", nil)
	status(t, "merge a conflict", resp, http.StatusMethodNotAllowed)

	pr, _, err = owner.PullRequests.Edit(ctx, "octo", "hello", right.GetNumber(), &github.PullRequest{State: github.Ptr("closed")})
	apptest.Must(t, "close", err)
	if pr.GetState() != "closed" || pr.GetMerged() || pr.ClosedAt == nil {
		t.Fatalf("closed: %+v", pr)
	}
	_, resp, _ = owner.PullRequests.Merge(ctx, "octo", "hello", right.GetNumber(), "", nil)
	status(t, "merge a closed one", resp, http.StatusMethodNotAllowed)
	pr, _, err = owner.PullRequests.Edit(ctx, "octo", "hello", right.GetNumber(), &github.PullRequest{State: github.Ptr("open")})
	apptest.Must(t, "reopen", err)
	if pr.GetState() != "open" {
		t.Fatalf("reopened: %+v", pr)
	}
	_, resp, _ = owner.PullRequests.Edit(ctx, "octo", "hello", left.GetNumber(), &github.PullRequest{State: github.Ptr("open")})
	status(t, "reopen a merged one", resp, http.StatusUnprocessableEntity)

	fork, err := env.App.Repos.Fork(ctx, base, bob, "hello", false, bob)
	apptest.Must(t, "fork", err)
	bobToken := env.Token(bob, "public_repo")
	forkProj := &project{t: t, dir: apptest.WorkTree(t, nil)}
	apptest.Git(t, forkProj.dir, "remote", "add", "origin", env.GitURL("bob", fork.Name, "bob", bobToken))
	apptest.Git(t, forkProj.dir, "fetch", "-q", "origin", "main")
	apptest.Git(t, forkProj.dir, "checkout", "-q", "-b", "main", "FETCH_HEAD")
	fromFork := forkProj.commitOn("idea", "An idea from a fork", map[string]string{"idea.txt": "idea\n"})
	bobClient := env.Client(bobToken)
	fpr, resp, err := bobClient.PullRequests.Create(ctx, "octo", "hello", github.CreatePullRequest{Title: github.Ptr("Idea"),
		Head: "bob:idea", Base: "main"})
	apptest.Must(t, "open from a fork", err)
	status(t, "open from a fork", resp, http.StatusCreated)
	if fpr.GetHead().GetRepo().GetFullName() != "bob/hello" || fpr.GetHead().GetLabel() != "bob:idea" || fpr.GetHead().GetSHA() != fromFork {
		t.Fatalf("fork head: %+v", fpr.GetHead())
	}
	if got := proj.remoteRef("refs/pull/" + itoa(fpr.GetNumber()) + "/head"); got != fromFork {
		t.Fatalf("fork's refs/pull head %s, want %s", got, fromFork)
	}
	again := forkProj.commitOn("idea", "More of the idea", map[string]string{"idea.txt": "idea\nmore\n"})
	pr = waitMergeable(t, owner, "octo", "hello", fpr.GetNumber())
	if pr.GetHead().GetSHA() != again || !pr.GetMergeable() || pr.GetCommits() != 2 {
		t.Fatalf("fork pull request after a push: head %s mergeable %v commits %d", pr.GetHead().GetSHA(), pr.GetMergeable(), pr.GetCommits())
	}
	res, _, err = owner.PullRequests.Merge(ctx, "octo", "hello", fpr.GetNumber(), "", &github.PullRequestOptions{SHA: again})
	apptest.Must(t, "merge from a fork", err)
	if proj.remoteRef("refs/heads/main") != res.GetSHA() {
		t.Fatal("main did not move to the fork's merge")
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestMergedByPush merges a pull request by pushing the merge over git:
// the push's transaction records it merged by the pusher at the pushed
// commit and sends pull_request closed with merged true.
func TestMergedByPush(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	ctx := apptest.Ctx()
	octo := env.User("octo")
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo", "admin:repo_hook")
	owner := env.Client(token)
	rc := apptest.NewReceiver(t, "s")
	_, _, err := owner.Repositories.CreateHook(ctx, "octo", "hello", &github.Hook{Events: []string{"pull_request"},
		Config: &github.HookConfig{URL: github.Ptr(rc.URL), ContentType: github.Ptr("json"), Secret: github.Ptr("s")}})
	apptest.Must(t, "hook", err)
	proj := newProject(t, env, "octo", "hello", "octo", token)
	proj.commitOn("topic", "Topic", map[string]string{"t.txt": "t\n"})
	pr, _, err := owner.PullRequests.Create(ctx, "octo", "hello", github.CreatePullRequest{Title: github.Ptr("Topic"), Head: "topic", Base: "main"})
	apptest.Must(t, "open", err)
	apptest.Git(t, proj.dir, "merge", "-q", "--no-ff", "-m", "Merge topic by hand", "topic")
	apptest.Git(t, proj.dir, "push", "-q", "origin", "main")
	merge := strings.TrimSpace(apptest.Git(t, proj.dir, "rev-parse", "HEAD"))
	got, _, err := owner.PullRequests.Get(ctx, "octo", "hello", pr.GetNumber())
	apptest.Must(t, "get", err)
	if !got.GetMerged() || got.GetState() != "closed" || got.GetMergeCommitSHA() != merge || got.GetMergedBy().GetLogin() != "octo" {
		t.Fatalf("after the pushed merge: merged %v state %q sha %s", got.GetMerged(), got.GetState(), got.GetMergeCommitSHA())
	}
	for _, e := range waitFor(t, rc, "pull_request opened", "pull_request closed") {
		if e.GetAction() == "closed" && !e.GetPullRequest().GetMerged() {
			t.Fatal("closed without merged")
		}
	}
	if commits, _, _ := owner.PullRequests.ListCommits(ctx, "octo", "hello", pr.GetNumber(), nil); len(commits) != 1 {
		t.Fatalf("commits of the merged pull request: %d", len(commits))
	}
}

// mergeAnswer merges the pull request through the raw API and returns
// the status, and the message or the merge's SHA.
func mergeAnswer(t *testing.T, env *apptest.Env, token string, number int, method string) (int, string) {
	t.Helper()
	resp, body := env.DoJSON(http.MethodPut, "/repos/octo/hello/pulls/"+itoa(number)+"/merge", token, `{"merge_method":"`+method+`"}`)
	var answer struct{ SHA, Message string }
	apptest.Must(t, "decode the merge's answer", json.Unmarshal(body, &answer))
	if resp.StatusCode == http.StatusOK {
		return resp.StatusCode, answer.SHA
	}
	return resp.StatusCode, answer.Message
}

// closedEvents counts the pull_request closed events the sink saw, by
// pull request number.
func closedEvents(rec *apptest.Recorder) map[string]int {
	closed := map[string]int{}
	for _, e := range rec.Hook("pull_request") {
		if e.HookPayload["action"] == "closed" {
			closed[fmt.Sprint(e.HookPayload["number"])]++
		}
	}
	return closed
}

// TestMergeCutShortIsRecordedWhole merges while the transaction that
// records the merge's push fails, as when the process dies right after
// the base branch moved: the merge is answered as done (the branch
// moved), a retry is a 405 "Merge already in progress" that applies
// nothing, a later merge whose commit contains the first one's does not
// claim it, and the push recovery records each pull request merged with
// its own merge commit (a squash too, whose commit contains no commit of
// the head), with one closed event each.
func TestMergeCutShortIsRecordedWhole(t *testing.T) {
	t.Parallel()
	rec := &apptest.Recorder{}
	env := apptest.Start(t, apptest.WithEventSink(rec), apptest.WithImmediatePushRecovery)
	ctx := apptest.Ctx()
	octo := env.User("octo")
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo")
	owner := env.Client(token)
	proj := newProject(t, env, "octo", "hello", "octo", token)
	open := func(branch string) int {
		t.Helper()
		proj.commitOn(branch, branch, map[string]string{branch + ".txt": branch + "\n"})
		pr, _, err := owner.PullRequests.Create(ctx, "octo", "hello", github.CreatePullRequest{Title: github.Ptr(branch), Head: branch, Base: "main"})
		apptest.Must(t, "open "+branch, err)
		return pr.GetNumber()
	}
	first, second, third := open("first"), open("second"), open("third")
	mergedAt := map[int]string{}
	cutShort := func(number int, method string) {
		t.Helper()
		rec.Fail(true)
		code, sha := mergeAnswer(t, env, token, number, method)
		rec.Fail(false)
		if code != http.StatusOK {
			t.Fatalf("merge #%d whose recording fails: %d %s, want 200 (the branch moved)", number, code, sha)
		}
		if tip := proj.remoteRef("refs/heads/main"); tip != sha {
			t.Fatalf("merge #%d: main at %s, want the merge %s", number, tip, sha)
		}
		mergedAt[number] = sha
		code, msg := mergeAnswer(t, env, token, number, method)
		if code != http.StatusMethodNotAllowed || msg != "Merge already in progress" {
			t.Errorf("retry of #%d before its recovery: %d %q, want 405 Merge already in progress", number, code, msg)
		}
		if tip := proj.remoteRef("refs/heads/main"); tip != sha {
			t.Fatalf("retry of #%d moved main to %s", number, tip)
		}
	}

	cutShort(first, "merge")
	code, sha := mergeAnswer(t, env, token, second, "squash")
	if code != http.StatusOK {
		t.Fatalf("merge #%d: %d %s", second, code, sha)
	}
	mergedAt[second] = sha
	if pr, _, err := owner.PullRequests.Get(ctx, "octo", "hello", first); err != nil || pr.GetMerged() || pr.GetState() != "open" {
		t.Fatalf("#%d after #%d's merge on top of its merge commit: merged %v state %q sha %s (%v); want open until its own push is recorded",
			first, second, pr.GetMerged(), pr.GetState(), pr.GetMergeCommitSHA(), err)
	}
	cutShort(third, "squash")

	if n := env.App.PushRecovery.RunOnce(ctx); n != 2 {
		t.Fatalf("recovered %d pushes, want the 2 merges cut short", n)
	}
	for _, number := range []int{first, second, third} {
		pr, _, err := owner.PullRequests.Get(ctx, "octo", "hello", number)
		apptest.Must(t, "get", err)
		if !pr.GetMerged() || pr.GetState() != "closed" || pr.GetMergeCommitSHA() != mergedAt[number] || pr.GetMergedBy().GetLogin() != "octo" {
			t.Errorf("#%d: merged %v state %q merge_commit_sha %s by %q; want merged at %s by octo", number, pr.GetMerged(), pr.GetState(),
				pr.GetMergeCommitSHA(), pr.GetMergedBy().GetLogin(), mergedAt[number])
		}
		if code, msg := mergeAnswer(t, env, token, number, "squash"); code != http.StatusMethodNotAllowed || msg != "Pull Request is not mergeable" {
			t.Errorf("retry of #%d once merged: %d %q", number, code, msg)
		}
	}
	if closed := closedEvents(rec); closed[itoa(first)] != 1 || closed[itoa(second)] != 1 || closed[itoa(third)] != 1 || len(closed) != 3 {
		t.Errorf("pull_request closed events by number: %v, want one each", closed)
	}
	if got := strings.Fields(apptest.Git(t, proj.dir, "rev-list", "--first-parent", proj.remoteRef("refs/heads/main"))); len(got) != 4 {
		t.Errorf("main's first-parent history holds %d commits, want the first one and the 3 merges", len(got))
	}
}

// TestMergeWhenTheBaseMoved moves the base branch after the merge read
// it and before its push (a push check, which runs in between): the
// platform's 405 "Base branch was modified", nothing merged, and the
// merge tried again succeeds on the new base.
func TestMergeWhenTheBaseMoved(t *testing.T) {
	t.Parallel()
	var moveTo atomic.Pointer[string]
	var repoDir string
	moveBase := func(ctx context.Context, push *githost.Push) error {
		if to := moveTo.Swap(nil); to != nil {
			out, err := exec.CommandContext(ctx, "git", "--git-dir", repoDir, "update-ref", "refs/heads/main", *to).CombinedOutput()
			if err != nil {
				return fmt.Errorf("move main: %v: %s", err, out)
			}
		}
		return nil
	}
	env := apptest.Start(t, apptest.WithPushCheck(moveBase))
	ctx := apptest.Ctx()
	octo := env.User("octo")
	repo := env.Repo(octo, "hello")
	repoDir = env.App.Repos.GitDir(repo.ID)
	token := env.Token(octo, "repo")
	owner := env.Client(token)
	proj := newProject(t, env, "octo", "hello", "octo", token)
	proj.commitOn("topic", "Topic", map[string]string{"topic.txt": "topic\n"})
	pr, _, err := owner.PullRequests.Create(ctx, "octo", "hello", github.CreatePullRequest{Title: github.Ptr("Topic"), Head: "topic", Base: "main"})
	apptest.Must(t, "open", err)
	moved := apptest.Commit(t, proj.dir, "Elsewhere", map[string]string{"elsewhere.txt": "moved\n"})
	apptest.Git(t, proj.dir, "push", "-q", "origin", "main:refs/heads/elsewhere") // the commit main moves to

	moveTo.Store(&moved)
	code, msg := mergeAnswer(t, env, token, pr.GetNumber(), "squash")
	if code != http.StatusMethodNotAllowed || msg != "Base branch was modified. Review and try the merge again." {
		t.Fatalf("merge while the base moved: %d %q, want 405 Base branch was modified", code, msg)
	}
	if tip := proj.remoteRef("refs/heads/main"); tip != moved {
		t.Fatalf("main at %s, want %s where the other change moved it", tip, moved)
	}
	if got, _, err := owner.PullRequests.Get(ctx, "octo", "hello", pr.GetNumber()); err != nil || got.GetMerged() || got.GetState() != "open" {
		t.Fatalf("after the refused merge: merged %v state %q (%v)", got.GetMerged(), got.GetState(), err)
	}
	code, sha := mergeAnswer(t, env, token, pr.GetNumber(), "squash")
	if code != http.StatusOK {
		t.Fatalf("merge tried again: %d %s", code, sha)
	}
	if parent := strings.TrimSpace(apptest.Git(t, proj.dir, "rev-parse", proj.remoteRef("refs/heads/main")+"^")); parent != moved {
		t.Errorf("the merge tried again has parent %s, want the moved base %s", parent, moved)
	}
}

// TestConcurrentMergesOfOnePullRequest merges one pull request from
// several requests at once: one merges it, the others are refused with a
// 405 (merged already, merge in progress, or the base moved under them),
// and the base gains one commit.
func TestConcurrentMergesOfOnePullRequest(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo")
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo")
	owner := env.Client(token)
	proj := newProject(t, env, "octo", "hello", "octo", token)
	before := proj.remoteRef("refs/heads/main")
	proj.commitOn("topic", "Topic", map[string]string{"topic.txt": "topic\n"})
	pr, _, err := owner.PullRequests.Create(ctx, "octo", "hello", github.CreatePullRequest{Title: github.Ptr("Topic"), Head: "topic", Base: "main"})
	apptest.Must(t, "open", err)

	const tries = 5
	codes, messages := make([]int, tries), make([]string, tries)
	var wg sync.WaitGroup
	for i := range tries {
		wg.Go(func() { codes[i], messages[i] = mergeAnswer(t, env, token, pr.GetNumber(), "squash") })
	}
	wg.Wait()
	merged := 0
	for i, code := range codes {
		switch {
		case code == http.StatusOK:
			merged++
		case code == http.StatusMethodNotAllowed && (messages[i] == "Pull Request is not mergeable" || messages[i] == "Merge already in progress" ||
			messages[i] == "Base branch was modified. Review and try the merge again."):
		default:
			t.Errorf("merge %d: %d %q", i, code, messages[i])
		}
	}
	if merged != 1 {
		t.Errorf("%d of %d merges answered 200, want 1: %v %q", merged, tries, codes, messages)
	}
	if got := strings.Fields(apptest.Git(t, proj.dir, "rev-list", "--first-parent", before+".."+proj.remoteRef("refs/heads/main"))); len(got) != 1 {
		t.Errorf("main gained %d commits, want the one squash", len(got))
	}
}
