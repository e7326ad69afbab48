package repository_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"forgeapi/internal/apptest"
	"forgeapi/internal/events"
)

// commitAt adds a commit on top of main with a fixed committer date, so
// that consecutive commits share their date as commits made within one
// second do. files maps paths to contents; an empty content deletes the path.
func commitAt(t *testing.T, work, message string, files map[string]string) string {
	t.Helper()
	var s strings.Builder
	fmt.Fprintf(&s, "commit refs/heads/main\nauthor A <a@example.com> 1700000000 +0000\ncommitter C <c@example.com> 1700000000 +0000\ndata %d\n%s\n", len(message), message)
	if head, err := apptest.TryGit(t, work, "rev-parse", "-q", "--verify", "main"); err == nil {
		fmt.Fprintf(&s, "from %s\n", strings.TrimSpace(head))
	}
	for _, path := range slices.Sorted(func(yield func(string) bool) {
		for p := range files {
			if !yield(p) {
				return
			}
		}
	}) {
		if files[path] == "" {
			fmt.Fprintf(&s, "D %s\n", path)
			continue
		}
		fmt.Fprintf(&s, "M 644 inline %s\ndata %d\n%s\n", path, len(files[path]), files[path])
	}
	fastImport(t, work, s.String())
	return strings.TrimSpace(apptest.Git(t, work, "rev-parse", "HEAD"))
}

func lastHook(t *testing.T, rec *apptest.Recorder, name string) *events.Event {
	t.Helper()
	hooks := rec.Hook(name)
	if len(hooks) == 0 {
		t.Fatalf("no %s webhook event", name)
	}
	return hooks[len(hooks)-1]
}

// TestPushWebhookPayload checks the push webhook data of a new branch, a
// fast-forward (commits sharing one date), a force push and a deletion.
func TestPushWebhookPayload(t *testing.T) {
	t.Parallel()
	rec := &apptest.Recorder{}
	env := apptest.Start(t, apptest.WithEventSink(rec))
	owner := env.User("octocat")
	env.Repo(owner, "hello")
	// The URL without ".git" works as well.
	url := strings.TrimSuffix(env.GitURL("octocat", "hello", "octocat", env.Token(owner, "repo")), ".git")
	work := apptest.WorkTree(t, nil)
	root := commitAt(t, work, "root", map[string]string{"keep": "1", "gone": "1"})
	apptest.Git(t, work, "push", "-q", url, "main")
	web := env.URL + "/octocat/hello"

	p := lastHook(t, rec, "push").HookPayload
	if p["created"] != true || p["deleted"] != false || p["forced"] != false || p["before"] != zero ||
		p["after"] != root || p["compare"] != web+"/commit/"+root[:12] || p["ref"] != "refs/heads/main" {
		t.Fatalf("push creating main: %v", p)
	}
	if pusher := p["pusher"].(map[string]any); pusher["name"] != "octocat" {
		t.Fatalf("pusher: %v", pusher)
	}

	second := commitAt(t, work, "second", map[string]string{"keep": "2", "gone": "", "new": "1"})
	third := commitAt(t, work, "third", map[string]string{"new": "2"})
	apptest.Git(t, work, "push", "-q", url, "main")
	p = lastHook(t, rec, "push").HookPayload
	if p["created"] != false || p["forced"] != false || p["before"] != root || p["after"] != third ||
		p["compare"] != web+"/compare/"+root[:12]+"..."+third[:12] {
		t.Fatalf("fast-forward push: %v", p)
	}
	commits := p["commits"].([]map[string]any)
	if len(commits) != 2 || commits[0]["id"] != second || commits[1]["id"] != third {
		t.Fatalf("commits, oldest first: %v", commits)
	}
	c := commits[0]
	tree := strings.TrimSpace(apptest.Git(t, work, "rev-parse", second+"^{tree}"))
	if !slices.Equal(c["added"].([]string), []string{"new"}) || !slices.Equal(c["removed"].([]string), []string{"gone"}) ||
		!slices.Equal(c["modified"].([]string), []string{"keep"}) || c["tree_id"] != tree || c["distinct"] != true ||
		c["message"] != "second" || c["url"] != web+"/commit/"+second {
		t.Fatalf("second commit: %v", c)
	}
	if head := p["head_commit"].(map[string]any); head["id"] != third {
		t.Fatalf("head_commit: %v", head)
	}

	apptest.Git(t, work, "reset", "-q", "--hard", root)
	forced := commitAt(t, work, "rewritten", map[string]string{"keep": "3"})
	apptest.Git(t, work, "push", "-q", "--force", url, "main")
	p = lastHook(t, rec, "push").HookPayload
	if p["forced"] != true || p["before"] != third || p["after"] != forced {
		t.Fatalf("force push: %v", p)
	}

	apptest.Git(t, work, "push", "-q", url, "main:topic")
	apptest.Git(t, work, "push", "-q", url, ":topic")
	p = lastHook(t, rec, "push").HookPayload
	if p["deleted"] != true || p["after"] != zero || p["head_commit"] != nil || len(p["commits"].([]map[string]any)) != 0 {
		t.Fatalf("deletion: %v", p)
	}
}

const zero = "0000000000000000000000000000000000000000"

// TestPushOfTagsRecordsEveryReference pushes an annotated tag and a tag of
// a tree in one push: both are recorded, and the push is not reported as
// failed to be recorded.
func TestPushOfTagsRecordsEveryReference(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	owner := env.User("octocat")
	repo := env.Repo(owner, "hello")
	url := env.GitURL("octocat", "hello", "octocat", env.Token(owner, "repo"))
	work := apptest.WorkTree(t, map[string]string{"README.md": "hello\n"})
	apptest.Git(t, work, "push", "-q", url, "main")
	apptest.Git(t, work, "tag", "-a", "-m", "release", "v1")
	before := len(eventsOf(t, env, repo.ID))

	out := apptest.Git(t, work, "push", url, "v1", "HEAD^{tree}:refs/tags/tree")
	if strings.Contains(out, "failed") {
		t.Fatalf("push output: %s", out)
	}
	evs := eventsOf(t, env, repo.ID)[before:]
	if types(evs) != "CreateEvent,CreateEvent" || evs[0].Payload["ref_type"] != "tag" || evs[1].Payload["ref"] != "tree" {
		t.Fatalf("events of the tag push: %s %v", types(evs), evs)
	}
	apptest.Git(t, work, "push", "-q", url, ":refs/tags/tree", ":refs/tags/v1")
	if got := types(eventsOf(t, env, repo.ID)[before+2:]); got != "DeleteEvent,DeleteEvent" {
		t.Fatalf("events of the tag deletions: %s", got)
	}
}

// TestDistinctCommits pushes commits to a branch first, then moves main
// over them and one more: only the new one is distinct in main's push.
func TestDistinctCommits(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	owner := env.User("octocat")
	repo := env.Repo(owner, "hello")
	url := env.GitURL("octocat", "hello", "octocat", env.Token(owner, "repo"))
	work := apptest.WorkTree(t, map[string]string{"f": "0"})
	apptest.Git(t, work, "push", "-q", url, "main")
	a := apptest.Commit(t, work, "a", map[string]string{"f": "a"})
	b := apptest.Commit(t, work, "b", map[string]string{"f": "b"})
	apptest.Git(t, work, "push", "-q", url, "main:topic")
	c := apptest.Commit(t, work, "c", map[string]string{"f": "c"})
	apptest.Git(t, work, "push", "-q", url, "main")

	evs := eventsOf(t, env, repo.ID)
	p := evs[len(evs)-1].Payload
	if p["ref"] != "refs/heads/main" || p["size"] != float64(3) || p["distinct_size"] != float64(1) {
		t.Fatalf("main's push: %+v", p)
	}
	want := map[string]bool{a: false, b: false, c: true}
	for _, commit := range p["commits"].([]any) {
		m := commit.(map[string]any)
		if d, ok := want[m["sha"].(string)]; !ok || m["distinct"] != d {
			t.Errorf("commit %v distinct=%v, want %v", m["sha"], m["distinct"], d)
		}
	}
	topic := evs[len(evs)-2].Payload // topic's own push: both commits new
	if topic["ref"] != "refs/heads/topic" || topic["size"] != float64(2) || topic["distinct_size"] != float64(2) {
		t.Fatalf("topic's push: %+v", topic)
	}
}

// TestPushBaseRef: a tag pushed at the head of a branch names that branch
// in base_ref (the default branch first); other pushes have none.
func TestPushBaseRef(t *testing.T) {
	t.Parallel()
	rec := &apptest.Recorder{}
	env := apptest.Start(t, apptest.WithEventSink(rec))
	owner := env.User("octocat")
	env.Repo(owner, "hello")
	url := env.GitURL("octocat", "hello", "octocat", env.Token(owner, "repo"))
	work := apptest.WorkTree(t, map[string]string{"README.md": "hello\n"})
	baseRef := func() any {
		t.Helper()
		return lastHook(t, rec, "push").HookPayload["base_ref"]
	}

	apptest.Git(t, work, "push", "-q", url, "main", "main:refs/heads/another")
	if got := baseRef(); got != nil {
		t.Fatalf("branch push base_ref = %v, want null", got)
	}
	apptest.Git(t, work, "tag", "-a", "-m", "release", "v1")
	apptest.Git(t, work, "push", "-q", url, "v1")
	if got := baseRef(); got != "refs/heads/main" {
		t.Fatalf("annotated tag at main's head: base_ref = %v, want refs/heads/main", got)
	}
	apptest.Git(t, work, "push", "-q", url, "main:refs/heads/aaa")
	apptest.Git(t, work, "tag", "v1-light")
	apptest.Git(t, work, "push", "-q", url, "v1-light")
	if got := baseRef(); got != "refs/heads/main" {
		t.Fatalf("with a branch sorting before main at the same commit: base_ref = %v, want the default branch", got)
	}
	apptest.Commit(t, work, "unpushed", map[string]string{"README.md": "changed\n"})
	apptest.Git(t, work, "tag", "v2")
	apptest.Git(t, work, "push", "-q", url, "v2")
	if got := baseRef(); got != nil {
		t.Fatalf("tag at no branch head: base_ref = %v, want null", got)
	}
}
