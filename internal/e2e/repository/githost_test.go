package repository_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"forgeapi/internal/apptest"
	"forgeapi/internal/git/githttp"
	"forgeapi/internal/githost"
	"forgeapi/internal/repos"
)

type storedEvent struct {
	Type    string
	Public  bool
	Payload map[string]any
}

func eventsOf(t *testing.T, env *apptest.Env, repoID int64) []storedEvent {
	t.Helper()
	rows, err := env.Q().QueryContext(context.Background(), `SELECT type, public, payload FROM events WHERE repo_id = $1 ORDER BY id`, repoID)
	apptest.Must(t, "query events", err)
	defer rows.Close()
	var out []storedEvent
	for rows.Next() {
		var e storedEvent
		var payload string
		apptest.Must(t, "scan", rows.Scan(&e.Type, &e.Public, &payload))
		apptest.Must(t, "decode payload", json.Unmarshal([]byte(payload), &e.Payload))
		if e.Type == "CreateEvent" && e.Payload["ref_type"] == "repository" {
			continue // the repository's own creation, not a push
		}
		out = append(out, e)
	}
	return out
}

func types(evs []storedEvent) string {
	var ts []string
	for _, e := range evs {
		ts = append(ts, e.Type)
	}
	return strings.Join(ts, ",")
}

func TestCloneAndPushRecordEvents(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	owner := env.User("octocat")
	repo := env.Repo(owner, "hello")
	token := env.Token(owner, "repo")

	work := apptest.WorkTree(t, map[string]string{"README.md": "hello\n"})
	apptest.Commit(t, work, "second", map[string]string{"a.txt": "a\n"})
	apptest.Git(t, work, "push", env.GitURL("octocat", "hello", "octocat", token), "main")

	before := len(eventsOf(t, env, repo.ID))
	evs := eventsOf(t, env, repo.ID)
	if types(evs) != "CreateEvent,PushEvent" {
		t.Fatalf("events after first push: %s", types(evs))
	}
	push := evs[1].Payload
	if push["ref"] != "refs/heads/main" || push["size"].(float64) != 2 || push["distinct_size"].(float64) != 2 ||
		len(push["commits"].([]any)) != 2 || push["before"] != strings.Repeat("0", 40) || !evs[1].Public {
		t.Fatalf("push payload: %+v", push)
	}
	first := push["commits"].([]any)[0].(map[string]any)
	if first["message"] != "initial commit" || first["distinct"] != true ||
		first["author"].(map[string]any)["email"] != "author@example.com" {
		t.Fatalf("first commit: %+v (want oldest first)", first)
	}
	head := strings.TrimSpace(apptest.Git(t, work, "rev-parse", "HEAD"))
	last := push["commits"].([]any)[1].(map[string]any)
	if push["repository_id"] != float64(repo.ID) || push["head"] != head || last["sha"] != head ||
		last["url"] != env.URL+"/repos/octocat/hello/commits/"+head {
		t.Fatalf("push payload: %+v", push)
	}
	if id, ok := push["push_id"].(float64); !ok || id <= 0 || id != float64(int64(id)) {
		t.Fatalf("push_id %v is not a positive integer", push["push_id"])
	}
	if evs[0].Payload["ref_type"] != "branch" || evs[0].Payload["ref"] != "main" || evs[0].Payload["full_ref"] != "refs/heads/main" ||
		evs[0].Payload["master_branch"] != "main" {
		t.Fatalf("create payload: %+v", evs[0].Payload)
	}

	// An anonymous clone of a public repository, and a shallow fetch.
	clone := t.TempDir()
	apptest.Git(t, clone, "clone", "-q", "--depth", "1", env.GitURL("octocat", "hello", "", ""), ".")
	if n := strings.TrimSpace(apptest.Git(t, clone, "rev-list", "--count", "HEAD")); n != "1" {
		t.Fatalf("shallow clone has %s commits", n)
	}
	// A tag and a branch deletion.
	apptest.Git(t, work, "tag", "v1")
	apptest.Git(t, work, "push", env.GitURL("octocat", "hello", "octocat", token), "v1", "main:refs/heads/topic")
	apptest.Git(t, work, "push", env.GitURL("octocat", "hello", "octocat", token), ":topic")
	later := eventsOf(t, env, repo.ID)[before:]
	if got := types(later); got != "CreateEvent,CreateEvent,PushEvent,DeleteEvent" {
		t.Fatalf("events: %s", got)
	}
	for _, e := range later[:2] { // full_ref of each CreateEvent and of the DeleteEvent
		if prefix := map[any]string{"tag": "refs/tags/", "branch": "refs/heads/"}[e.Payload["ref_type"]]; e.Payload["full_ref"] != prefix+e.Payload["ref"].(string) {
			t.Fatalf("CreateEvent full_ref: %+v", e.Payload)
		}
	}
	if later[3].Payload["full_ref"] != "refs/heads/topic" || later[3].Payload["ref"] != "topic" {
		t.Fatalf("DeleteEvent full_ref: %+v", later[3].Payload)
	}
	// topic starts at a commit the repository has: nothing new, nothing distinct.
	if p := later[2].Payload; p["ref"] != "refs/heads/topic" || p["size"] != float64(0) || p["distinct_size"] != float64(0) || len(p["commits"].([]any)) != 0 {
		t.Fatalf("push of an existing commit to a new branch: %+v", p)
	}
	r, err := repos.ByID(context.Background(), env.Q(), repo.ID)
	apptest.Must(t, "reload repo", err)
	if r.PushedAt == nil {
		t.Fatal("pushed_at not set")
	}
}

func TestPrivateRepositoryAccess(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	owner := env.User("octocat", apptest.UserOpts{Password: "pw-octocat"})
	stranger := env.User("stranger")
	env.Repo(owner, "secret", apptest.RepoOpts{Private: true})
	dir := t.TempDir()

	out, err := apptest.TryGit(t, dir, "clone", "-q", env.GitURL("octocat", "secret", "", ""), "anon")
	if err == nil || !strings.Contains(out, "Authentication") && !strings.Contains(out, "could not read Username") {
		t.Fatalf("anonymous clone of private repo: %v %s", err, out)
	}
	resp, _ := env.Do("GET", "/octocat/secret.git/info/refs?service=git-upload-pack", "", nil)
	if resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") != `Basic realm="forgeapi"` {
		t.Fatalf("anonymous info/refs: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	resp, _ = env.Do("GET", "/octocat/secret.git/info/refs?service=git-upload-pack", env.Token(stranger, "repo"), nil)
	if resp.StatusCode != 404 {
		t.Fatalf("stranger: %d, want 404", resp.StatusCode)
	}
	resp, _ = env.Do("GET", "/octocat/secret.git/info/refs?service=git-upload-pack", env.Token(owner), nil)
	if resp.StatusCode != 404 {
		t.Fatalf("token without repo scope: %d, want 404", resp.StatusCode)
	}
	// Password push and clone work; an unknown repository is 404 to an authenticated user.
	work := apptest.WorkTree(t, map[string]string{"f": "1"})
	apptest.Git(t, work, "push", "-q", env.GitURL("octocat", "secret", "octocat", "pw-octocat"), "main")
	secret, err := repos.ByOwnerAndName(context.Background(), env.Q(), "octocat", "secret")
	apptest.Must(t, "load secret", err)
	if evs := eventsOf(t, env, secret.ID); types(evs) != "CreateEvent,PushEvent" || evs[0].Public || evs[1].Public {
		t.Fatalf("events of a push to a private repository must be private: %+v", evs)
	}
	apptest.Git(t, dir, "clone", "-q", env.GitURL("octocat", "secret", "octocat", "pw-octocat"), "pw")
	if out, err := apptest.TryGit(t, work, "push", env.GitURL("octocat", "secret", "octocat", env.Token(owner, "public_repo")), "main:other"); err == nil {
		t.Fatalf("public_repo pushed to a private repository:\n%s", out)
	}
	out, err = apptest.TryGit(t, dir, "clone", "-q", env.GitURL("octocat", "missing", "octocat", "pw-octocat"), "missing")
	if err == nil || !strings.Contains(out, "Repository not found") {
		t.Fatalf("missing repository: %v %s", err, out)
	}
	// Fine-grained tokens need contents:read on the selected repository.
	meta := env.FineGrainedToken(owner, owner, []*repos.Repository{secret}, "metadata:read")
	resp, _ = env.Do("GET", "/octocat/secret.git/info/refs?service=git-upload-pack", meta, nil)
	if resp.StatusCode != 403 {
		t.Fatalf("fine-grained without contents: %d", resp.StatusCode)
	}
	contents := env.FineGrainedToken(owner, owner, []*repos.Repository{secret}, "contents:read")
	apptest.Git(t, dir, "clone", "-q", env.GitURL("octocat", "secret", "x-access-token", contents), "fg")
}

func TestPushNeedsWriteAccess(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	owner := env.User("octocat", apptest.UserOpts{Password: "pw", TOTPSecret: "JBSWY3DPEHPK3PXP"})
	member := env.User("member")
	org := env.Org("acme", owner, member)
	repo := env.Repo(org, "widgets")
	other := env.Repo(org, "gadgets")
	elsewhere := env.Org("globex", owner)
	work := apptest.WorkTree(t, map[string]string{"f": "1"})

	cases := []struct {
		name, login, secret, want string
	}{
		{"anonymous", "", "", "could not read Username"},
		{"wrong password", "octocat", "wrong", "Invalid username or token"},
		{"unknown token", "x-access-token", "ghp_doesnotexist", "Invalid username or token"},
		{"member reads only", "member", env.Token(member, "repo"), "denied"},
		{"classic without scope", "octocat", env.Token(owner), "denied"},
		{"two-factor password", "octocat", "pw", "personal access token"},
		{"fine-grained read", "octocat", env.FineGrainedToken(owner, org, []*repos.Repository{repo}, "contents:read"), "denied"},
		{"installation read", "x-access-token", env.InstallationToken(org, apptest.AllRepos, "contents:read"), "denied"},
		// Tokens that may push, but elsewhere: the repository is public
		// and octocat owns its organization, yet it is outside what they
		// select.
		{"fine-grained write, another repository selected", "octocat",
			env.FineGrainedToken(owner, org, []*repos.Repository{other}, "contents:write"), "denied"},
		{"installation write, installed elsewhere", "x-access-token",
			env.InstallationToken(elsewhere, apptest.AllRepos, "contents:write"), "denied"},
		{"app user write, another installation", "octocat",
			env.AppUserToken(owner, elsewhere, apptest.AllRepos, "contents:write"), "denied"},
	}
	for _, c := range cases {
		out, err := apptest.TryGit(t, work, "push", env.GitURL("acme", "widgets", c.login, c.secret), "main")
		if err == nil || !strings.Contains(out, c.want) {
			t.Errorf("%s: push should fail with %q: %v\n%s", c.name, c.want, err, out)
		}
	}
	if n := len(eventsOf(t, env, repo.ID)); n != 0 {
		t.Fatalf("refused pushes recorded %d events", n)
	}
	for _, secret := range []string{
		env.Token(owner, "public_repo"),
		env.FineGrainedToken(owner, org, []*repos.Repository{repo}, "contents:write"),
		env.InstallationToken(org, []*repos.Repository{repo}, "contents:write"),
	} {
		apptest.Commit(t, work, "more", map[string]string{"f": time.Now().String()})
		apptest.Git(t, work, "push", env.GitURL("acme", "widgets", "x", secret), "main")
	}
	evs := eventsOf(t, env, repo.ID)
	if types(evs) != "CreateEvent,PushEvent,PushEvent,PushEvent" {
		t.Fatalf("events: %s", types(evs))
	}
	var actor string
	apptest.Must(t, "actor", env.Q().QueryRowContext(context.Background(),
		`SELECT actor_login FROM events WHERE repo_id = $1 ORDER BY id DESC LIMIT 1`, repo.ID).Scan(&actor))
	if actor != "forgeapi-app[bot]" {
		t.Fatalf("installation push actor %q, want the bot", actor)
	}
}

func TestLockedRepositoryRefusesPushesAndServesClones(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	owner := env.User("octocat")
	repo := env.Repo(owner, "hello")
	token := env.Token(owner, "repo")
	work := apptest.WorkTree(t, map[string]string{"f": "1"})
	apptest.Git(t, work, "push", env.GitURL("octocat", "hello", "octocat", token), "main")
	before := len(eventsOf(t, env, repo.ID))

	apptest.Must(t, "lock", repos.SetMigrationLock(context.Background(), env.Q(), repo.ID, true))
	apptest.Commit(t, work, "two", map[string]string{"f": "2"})
	out, err := apptest.TryGit(t, work, "push", env.GitURL("octocat", "hello", "octocat", token), "main")
	if err == nil || !strings.Contains(out, "repository is locked for migration") {
		t.Fatalf("push to locked repository: %v\n%s", err, out)
	}
	apptest.Git(t, t.TempDir(), "clone", "-q", env.GitURL("octocat", "hello", "octocat", token), "c")
	if n := len(eventsOf(t, env, repo.ID)); n != before {
		t.Fatalf("refused push recorded events: %d -> %d", before, n)
	}
}

func TestPushCheckVetoesBeforeRefsMove(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	owner := env.User("octocat")
	repo := env.Repo(owner, "hello")
	token := env.Token(owner, "repo")
	env.App.Git.AddCheck(func(ctx context.Context, push *githost.Push) error {
		for _, u := range push.Updates {
			paths, err := push.Inspect.ChangedPaths(ctx, u)
			if err != nil {
				return err
			}
			for _, p := range paths {
				if strings.HasPrefix(p, "protected/") {
					return githttp.Refuse("%s may not change %s", push.Pusher.Login, p)
				}
			}
		}
		return nil
	})
	work := apptest.WorkTree(t, map[string]string{"protected/x": "1"})
	out, err := apptest.TryGit(t, work, "push", env.GitURL("octocat", "hello", "octocat", token), "main")
	if err == nil || !strings.Contains(out, "octocat may not change protected/x") {
		t.Fatalf("veto: %v\n%s", err, out)
	}
	if n := len(eventsOf(t, env, repo.ID)); n != 0 {
		t.Fatalf("vetoed push recorded %d events", n)
	}
	resp, body := env.Do("GET", "/octocat/hello.git/info/refs?service=git-upload-pack", token, nil)
	if resp.StatusCode != 200 || strings.Contains(string(body), "refs/heads/main") {
		t.Fatalf("refs moved after a veto: %s", body)
	}
}

func TestConcurrentPushesAndManyRefs(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	owner := env.User("octocat")
	repo := env.Repo(owner, "hello")
	token := env.Token(owner, "repo")
	url := env.GitURL("octocat", "hello", "octocat", token)
	work := apptest.WorkTree(t, map[string]string{"f": "base"})
	apptest.Git(t, work, "push", url, "main")

	// 100 refs at once.
	var refspecs []string
	for i := range 100 {
		refspecs = append(refspecs, fmt.Sprintf("main:refs/heads/b%03d", i))
	}
	apptest.Git(t, work, append([]string{"push", url}, refspecs...)...)
	var creates int
	apptest.Must(t, "count", env.Q().QueryRowContext(context.Background(),
		`SELECT count(*) FROM events WHERE repo_id = $1 AND type = 'CreateEvent' AND payload NOT LIKE '%"ref_type":"repository"%'`, repo.ID).Scan(&creates))
	if creates != 101 {
		t.Fatalf("create events: %d, want 101", creates)
	}
	if n := strings.Count(types(eventsOf(t, env, repo.ID)), "PushEvent"); n != 101 {
		t.Fatalf("push events: %d, want 101 (one per branch)", n)
	}
	before := len(eventsOf(t, env, repo.ID))

	// Concurrent pushes to distinct branches of one repository.
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for i := range 4 {
		clone := t.TempDir()
		apptest.Git(t, clone, "clone", "-q", url, ".")
		apptest.Commit(t, clone, fmt.Sprintf("c%d", i), map[string]string{fmt.Sprintf("f%d", i): "x"})
		wg.Add(1)
		go func() {
			defer wg.Done()
			if out, err := apptest.TryGit(t, clone, "push", url, fmt.Sprintf("HEAD:refs/heads/c%d", i)); err != nil {
				errs <- fmt.Errorf("%v: %s", err, out)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := eventsOf(t, env, repo.ID)[before:]; strings.Count(types(got), "CreateEvent") != 4 || strings.Count(types(got), "PushEvent") != 4 {
		t.Fatalf("events of 4 concurrent pushes: %s", types(got))
	}

	// Concurrent pushes of different histories to one branch: git lets
	// one win per round; each accepted push is recorded once, with the
	// commit it moved the branch to, and refused ones leave no event.
	before = len(eventsOf(t, env, repo.ID))
	var accepted sync.Map
	for i := range 4 {
		clone := t.TempDir()
		apptest.Git(t, clone, "clone", "-q", url, ".")
		sha := apptest.Commit(t, clone, fmt.Sprintf("race %d", i), map[string]string{"race": fmt.Sprint(i)})
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := apptest.TryGit(t, clone, "push", "-q", url, "HEAD:refs/heads/race"); err == nil {
				accepted.Store(sha, true)
			}
		}()
	}
	wg.Wait()
	var heads []string
	for _, e := range eventsOf(t, env, repo.ID)[before:] {
		if e.Type == "PushEvent" {
			heads = append(heads, e.Payload["head"].(string))
		}
	}
	n := 0
	accepted.Range(func(sha, _ any) bool {
		n++
		if !slices.Contains(heads, sha.(string)) {
			t.Errorf("accepted push of %s has no PushEvent (heads %v)", sha, heads)
		}
		return true
	})
	if n == 0 || len(heads) != n {
		t.Fatalf("%d accepted pushes, %d PushEvents", n, len(heads))
	}
}

func TestPushOfThousandCommits(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	owner := env.User("octocat")
	repo := env.Repo(owner, "big")
	token := env.Token(owner, "repo")
	work := apptest.WorkTree(t, nil)
	// fast-import builds 1,000 commits in one process.
	var script strings.Builder
	for i := 1; i <= 1000; i++ {
		msg := fmt.Sprintf("commit %d", i)
		fmt.Fprintf(&script, "commit refs/heads/main\ncommitter T <t@example.com> %d +0000\ndata %d\n%s\n", 1700000000+i, len(msg), msg)
		content := fmt.Sprintf("%d\n", i)
		fmt.Fprintf(&script, "M 644 inline file.txt\ndata %d\n%s\n", len(content), content)
	}
	fastImport(t, work, script.String())
	apptest.Git(t, work, "push", env.GitURL("octocat", "big", "octocat", token), "main")
	evs := eventsOf(t, env, repo.ID)
	push := evs[len(evs)-1].Payload
	if push["size"].(float64) != 1000 || len(push["commits"].([]any)) != 20 {
		t.Fatalf("size %v, %d commits listed", push["size"], len(push["commits"].([]any)))
	}
	last := push["commits"].([]any)[19].(map[string]any)
	if last["message"] != "commit 1000" {
		t.Fatalf("newest listed commit %v, want commit 1000 last", last["message"])
	}
}
