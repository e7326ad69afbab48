package e2e_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/webhooks"
)

// recordingSigner is a go-github MessageSigner that keeps what it signed
// and answers a fixed armored signature.
type recordingSigner struct{ signed string }

const fakeSignature = "-----BEGIN PGP SIGNATURE-----\n\niQEzBAABCAAdFiEE\n=abcd\n-----END PGP SIGNATURE-----\n"

func (s *recordingSigner) Sign(w io.Writer, r io.Reader) error {
	data, err := io.ReadAll(r)
	s.signed = string(data)
	_, _ = io.WriteString(w, fakeSignature)
	return err
}

// gitIn runs git in the work tree dir with extra environment.
func gitIn(t *testing.T, dir string, stdin string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(append(apptest.GitEnv(t.TempDir()), env...), "GIT_DIR="+filepath.Join(dir, ".git"))
	cmd.Stdin = strings.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s: %v %s", strings.Join(args, " "), err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

// TestReleasePleaseCommit commits without a clone as release-please does,
// with go-github: blobs, a tree on the branch head's tree, a commit whose
// parent is the head, the branch moved by a ref update. git fetch sees
// the commit with the same tree, a push webhook (signed) fires, and the
// objects are the ones git makes of the same input. A non-fast-forward
// update, one a ruleset blocks and one branch protection blocks are
// refused and move nothing.
func TestReleasePleaseCommit(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	ctx := apptest.Ctx()
	octo := env.User("octo", apptest.UserOpts{Email: "octo@example.com"})
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo", "admin:repo_hook")
	c := env.Client(token)
	work := apptest.WorkTree(t, map[string]string{"README.md": "# hello\n", "src/app.go": "package app\n",
		"docs/a/b.md": "b\n", "run.sh": "#!/bin/sh\n"})
	apptest.Git(t, work, "remote", "add", "origin", env.GitURL("octo", "hello", "octo", token))
	apptest.Git(t, work, "push", "-q", "origin", "HEAD:refs/heads/main")
	rc := apptest.NewReceiver(t, "s")
	_, _, err := c.Repositories.CreateHook(ctx, "octo", "hello", &github.Hook{Events: []string{"push"},
		Config: &github.HookConfig{URL: github.Ptr(rc.URL), ContentType: github.Ptr("json"), Secret: github.Ptr("s")}})
	apptest.Must(t, "hook", err)

	ref, _, err := c.Git.GetRef(ctx, "octo", "hello", "heads/main")
	apptest.Must(t, "get ref", err)
	head := ref.GetObject().GetSHA()
	headCommit, _, err := c.Git.GetCommit(ctx, "octo", "hello", head)
	apptest.Must(t, "get commit", err)
	if v := headCommit.GetVerification(); v.GetReason() != "unsigned" || v.GetVerified() || v.Signature != nil {
		t.Fatalf("verification of an unsigned commit: %+v", v)
	}

	changelog := "## 1.0.0\n\n* first release\n"
	blob, resp, err := c.Git.CreateBlob(ctx, "octo", "hello", github.Blob{Content: github.Ptr(changelog), Encoding: github.Ptr("utf-8")})
	apptest.Must(t, "create blob", err)
	if resp.StatusCode != http.StatusCreated || blob.GetSHA() != gitIn(t, work, changelog, nil, "hash-object", "--stdin") {
		t.Fatalf("blob: %d %s", resp.StatusCode, blob.GetSHA())
	}
	binary := []byte{0, 1, 2, 0xff, '\n'}
	bin, _, err := c.Git.CreateBlob(ctx, "octo", "hello", github.Blob{Content: github.Ptr(base64.StdEncoding.EncodeToString(binary)), Encoding: github.Ptr("base64")})
	apptest.Must(t, "create base64 blob", err)
	got, _, err := c.Git.GetBlobRaw(ctx, "octo", "hello", bin.GetSHA())
	apptest.Must(t, "read blob", err)
	if !bytes.Equal(got, binary) {
		t.Fatalf("blob read back %q", got)
	}

	version := "package app\n\nconst Version = \"1.0.0\"\n"
	tree, resp, err := c.Git.CreateTree(ctx, "octo", "hello", headCommit.GetTree().GetSHA(), []*github.TreeEntry{
		{Path: github.Ptr("CHANGELOG.md"), Mode: github.Ptr("100644"), Type: github.Ptr("blob"), SHA: blob.SHA},
		{Path: github.Ptr("src/version.go"), Mode: github.Ptr("100644"), Type: github.Ptr("blob"), Content: github.Ptr(version)},
		{Path: github.Ptr("assets/data.bin"), Mode: github.Ptr("100644"), Type: github.Ptr("blob"), SHA: bin.SHA},
		{Path: github.Ptr("docs/a/b.md"), Mode: github.Ptr("100644"), Type: github.Ptr("blob")}, // sha null: deleted
	})
	apptest.Must(t, "create tree", err)
	if resp.StatusCode != http.StatusCreated || len(tree.Entries) == 0 {
		t.Fatalf("tree: %d %+v", resp.StatusCode, tree)
	}
	when := time.Date(2025, 3, 4, 5, 6, 7, 0, time.FixedZone("", 2*3600))
	author := &github.CommitAuthor{Name: github.Ptr("release-please[bot]"), Email: github.Ptr("bot@example.com"), Date: &github.Timestamp{Time: when}}
	message := "chore(main): release 1.0.0"
	commit, resp, err := c.Git.CreateCommit(ctx, "octo", "hello", github.Commit{Message: github.Ptr(message), Tree: &github.Tree{SHA: tree.SHA},
		Parents: []*github.Commit{{SHA: github.Ptr(head)}}, Author: author}, nil)
	apptest.Must(t, "create commit", err)
	if resp.StatusCode != http.StatusCreated || commit.GetTree().GetSHA() != tree.GetSHA() || commit.GetAuthor().GetName() != "release-please[bot]" ||
		commit.GetCommitter().GetEmail() != "bot@example.com" || len(commit.Parents) != 1 || commit.Parents[0].GetSHA() != head ||
		!commit.GetAuthor().GetDate().Time.Equal(when) || commit.GetVerification().GetReason() != "valid" {
		t.Fatalf("commit: %d %+v", resp.StatusCode, commit)
	}

	apptest.Step(t, "the objects are the ones git makes of the same input", func(t *testing.T) {
		gitIn(t, work, "", nil, "read-tree", head)
		gitIn(t, work, "", nil, "update-index", "--add", "--cacheinfo", "100644,"+gitIn(t, work, changelog, nil, "hash-object", "-w", "--stdin")+",CHANGELOG.md")
		gitIn(t, work, "", nil, "update-index", "--add", "--cacheinfo", "100644,"+gitIn(t, work, version, nil, "hash-object", "-w", "--stdin")+",src/version.go")
		gitIn(t, work, "", nil, "update-index", "--add", "--cacheinfo", "100644,"+gitIn(t, work, string(binary), nil, "hash-object", "-w", "--stdin")+",assets/data.bin")
		gitIn(t, work, "", nil, "update-index", "--force-remove", "docs/a/b.md")
		if want := gitIn(t, work, "", nil, "write-tree"); tree.GetSHA() != want {
			t.Fatalf("tree %s, git write-tree %s", tree.GetSHA(), want)
		}
		ids := []string{"GIT_AUTHOR_NAME=release-please[bot]", "GIT_AUTHOR_EMAIL=bot@example.com", "GIT_AUTHOR_DATE=1741057567 +0200",
			"GIT_COMMITTER_NAME=release-please[bot]", "GIT_COMMITTER_EMAIL=bot@example.com", "GIT_COMMITTER_DATE=1741057567 +0200"}
		// The server signs the commit (web-flow): without its signature,
		// the commit is git's.
		unsigned := gitIn(t, work, commit.GetVerification().GetPayload(), nil, "hash-object", "-t", "commit", "--stdin")
		if want := gitIn(t, work, message, ids, "commit-tree", tree.GetSHA(), "-p", head); unsigned != want {
			t.Fatalf("commit %s without its signature %s, git commit-tree %s", commit.GetSHA(), unsigned, want)
		}
		gitIn(t, work, "", nil, "read-tree", "HEAD")
	})

	apptest.Step(t, "a non-fast-forward update is refused", func(t *testing.T) {
		orphan, _, err := c.Git.CreateCommit(ctx, "octo", "hello", github.Commit{Message: github.Ptr("orphan"), Tree: &github.Tree{SHA: tree.SHA}, Author: author}, nil)
		apptest.Must(t, "orphan commit", err)
		_, resp, err := c.Git.UpdateRef(ctx, "octo", "hello", "heads/main", github.UpdateRef{SHA: orphan.GetSHA()})
		var ghErr *github.ErrorResponse
		if apptest.ResponseStatus(resp) != http.StatusUnprocessableEntity || !errors.As(err, &ghErr) || ghErr.Message != "Update is not a fast forward" {
			t.Fatalf("non-fast-forward: %v", err) // the platform's message, as tools compare it
		}
	})

	apptest.Step(t, "the ref update is a push: git fetch sees it, a push webhook fires", func(t *testing.T) {
		updated, _, err := c.Git.UpdateRef(ctx, "octo", "hello", "heads/main", github.UpdateRef{SHA: commit.GetSHA()})
		apptest.Must(t, "update ref", err)
		if updated.GetObject().GetSHA() != commit.GetSHA() {
			t.Fatalf("updated ref: %+v", updated)
		}
		apptest.Git(t, work, "fetch", "-q", "origin")
		if got := apptest.Git(t, work, "rev-parse", "origin/main"); strings.TrimSpace(got) != commit.GetSHA() {
			t.Fatalf("fetched main %s, want %s", got, commit.GetSHA())
		}
		if got := apptest.Git(t, work, "rev-parse", "origin/main^{tree}"); strings.TrimSpace(got) != tree.GetSHA() {
			t.Fatalf("fetched tree %s, want %s", got, tree.GetSHA())
		}
		if got := apptest.Git(t, work, "show", "origin/main:src/version.go"); strings.TrimSpace(got) != strings.TrimSpace(version) {
			t.Fatalf("fetched version.go %q", got)
		}
		apptest.Git(t, work, "fsck", "--strict")
		after := commit.GetSHA()
		rc.WaitFor(t, func(d apptest.Delivery) string {
			if p, ok := d.Parsed.(*github.PushEvent); ok && p.GetAfter() == after && p.GetBefore() == head && p.GetRef() == "refs/heads/main" {
				return "push main"
			}
			return ""
		}, "push main")
	})

	apptest.Step(t, "a ref update a ruleset blocks is refused", func(t *testing.T) {
		_, _, err := c.Repositories.CreateRuleset(ctx, "octo", "hello", github.RepositoryRuleset{
			Name: "No force pushes", Target: github.Ptr(github.RulesetTargetBranch), Enforcement: github.RulesetEnforcementActive,
			Conditions: &github.RepositoryRulesetConditions{RefName: &github.RepositoryRulesetRefConditionParameters{Include: []string{"~DEFAULT_BRANCH"}, Exclude: []string{}}},
			Rules:      &github.RepositoryRulesetRules{NonFastForward: &github.EmptyRuleParameters{}},
		})
		apptest.Must(t, "ruleset", err)
		_, resp, err := c.Git.UpdateRef(ctx, "octo", "hello", "heads/main", github.UpdateRef{SHA: head, Force: github.Ptr(true)})
		if apptest.ResponseStatus(resp) != http.StatusConflict || !strings.Contains(err.Error(), "No force pushes") ||
			strings.Count(err.Error(), "Repository rule violations found") != 1 {
			t.Fatalf("a forced update under the ruleset: %v (the platform's prefix once)", err)
		}
		now, _, err := c.Git.GetRef(ctx, "octo", "hello", "heads/main")
		apptest.Must(t, "get ref", err)
		if now.GetObject().GetSHA() != commit.GetSHA() {
			t.Fatalf("a refused update moved main to %s", now.GetObject().GetSHA())
		}
	})

	apptest.Step(t, "a ref update branch protection blocks is refused", func(t *testing.T) {
		_, _, err := c.Repositories.UpdateBranchProtection(ctx, "octo", "hello", "main", &github.ProtectionRequest{
			RequiredStatusChecks: &github.RequiredStatusChecks{Strict: false, Contexts: &[]string{"ci"}}, EnforceAdmins: true})
		apptest.Must(t, "protect main", err)
		next, _, err := c.Git.CreateCommit(ctx, "octo", "hello", github.Commit{Message: github.Ptr("next"), Tree: &github.Tree{SHA: tree.SHA},
			Parents: []*github.Commit{{SHA: commit.SHA}}, Author: author}, nil)
		apptest.Must(t, "next commit", err)
		_, resp, err := c.Git.UpdateRef(ctx, "octo", "hello", "heads/main", github.UpdateRef{SHA: next.GetSHA()})
		if s := apptest.ResponseStatus(resp); s < 400 || s >= 500 || !strings.Contains(err.Error(), `Required status check "ci" is expected`) {
			t.Fatalf("an update of protected main without its check: %d %v", s, err)
		}
		now, _, err := c.Git.GetRef(ctx, "octo", "hello", "heads/main")
		apptest.Must(t, "get ref", err)
		if now.GetObject().GetSHA() != commit.GetSHA() {
			t.Fatalf("a refused update moved main to %s", now.GetObject().GetSHA())
		}
	})
}

// TestGitDataObjects: a signed commit keeps its signature (verification
// unknown_key, the payload being what the signer signed), annotated tags
// are written and read back, references are listed, and trees are read
// by branch and tag names, with "/" too, recursively.
func TestGitDataObjects(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo", apptest.UserOpts{Email: "octo@example.com"})
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo")
	c := env.Client(token)
	work := apptest.WorkTree(t, map[string]string{"README.md": "# hello\n", "a/b/c.txt": "c\n"})
	apptest.Git(t, work, "remote", "add", "origin", env.GitURL("octo", "hello", "octo", token))
	apptest.Git(t, work, "push", "-q", "origin", "HEAD:refs/heads/main")
	head := strings.TrimSpace(apptest.Git(t, work, "rev-parse", "HEAD"))
	treeSHA := strings.TrimSpace(apptest.Git(t, work, "rev-parse", "HEAD^{tree}"))

	apptest.Step(t, "a signed commit", func(t *testing.T) {
		signer := &recordingSigner{}
		when := &github.Timestamp{Time: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}
		signed, _, err := c.Git.CreateCommit(ctx, "octo", "hello", github.Commit{Message: github.Ptr("signed\n"), Tree: &github.Tree{SHA: &treeSHA},
			Parents: []*github.Commit{{SHA: &head}}, Author: &github.CommitAuthor{Name: github.Ptr("Octo"), Email: github.Ptr("octo@example.com"), Date: when}},
			&github.CreateCommitOptions{Signer: signer})
		apptest.Must(t, "signed commit", err)
		for _, v := range []*github.SignatureVerification{signed.GetVerification(), getCommitVerification(t, c, signed.GetSHA())} {
			if v.GetVerified() || v.GetReason() != "unknown_key" || v.GetSignature() != fakeSignature || v.GetPayload() != signer.signed {
				t.Fatalf("verification %+v\nsigned %q", v, signer.signed)
			}
		}
		full, _, err := c.Repositories.GetCommit(ctx, "octo", "hello", signed.GetSHA(), nil)
		apptest.Must(t, "commits API", err)
		if full.GetCommit().GetVerification().GetReason() != "unknown_key" {
			t.Fatalf("commits API verification: %+v", full.GetCommit().GetVerification())
		}
		apptest.Git(t, work, "fetch", "-q", "origin", signed.GetSHA())
		if got := apptest.Git(t, work, "cat-file", "commit", signed.GetSHA()); !strings.Contains(got, "gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n") {
			t.Fatalf("the commit's gpgsig header:\n%s", got)
		}
	})

	apptest.Step(t, "an annotated tag", func(t *testing.T) {
		tagger := &github.CommitAuthor{Name: github.Ptr("Rel"), Email: github.Ptr("rel@example.com"), Date: &github.Timestamp{Time: time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)}}
		tag, resp, err := c.Git.CreateTag(ctx, "octo", "hello", github.CreateTag{Tag: "v1.0.0", Message: "Release 1.0.0\n",
			Object: head, Type: "commit", Tagger: tagger})
		apptest.Must(t, "create tag", err)
		if resp.StatusCode != http.StatusCreated || tag.GetTag() != "v1.0.0" || tag.GetObject().GetSHA() != head ||
			tag.GetObject().GetType() != "commit" || tag.GetTagger().GetName() != "Rel" || tag.GetVerification().GetReason() != "unsigned" {
			t.Fatalf("tag: %d %+v", resp.StatusCode, tag)
		}
		in := "object " + head + "\ntype commit\ntag v1.0.0\ntagger Rel <rel@example.com> 1748736000 +0000\n\nRelease 1.0.0\n"
		if want := gitIn(t, work, in, nil, "mktag"); tag.GetSHA() != want {
			t.Fatalf("tag %s, git mktag %s", tag.GetSHA(), want)
		}
		again, _, err := c.Git.GetTag(ctx, "octo", "hello", tag.GetSHA())
		apptest.Must(t, "get tag", err)
		if again.GetSHA() != tag.GetSHA() || again.GetMessage() != "Release 1.0.0\n" {
			t.Fatalf("tag read back: %+v", again)
		}
		_, _, err = c.Git.CreateRef(ctx, "octo", "hello", github.CreateRef{Ref: "refs/tags/v1.0.0", SHA: tag.GetSHA()})
		apptest.Must(t, "tag ref", err)
		apptest.Git(t, work, "fetch", "-q", "--tags", "origin")
		if got := strings.TrimSpace(apptest.Git(t, work, "cat-file", "-t", "v1.0.0")); got != "tag" {
			t.Fatalf("fetched v1.0.0 is a %s", got)
		}
		if _, resp, _ := c.Git.GetTag(ctx, "octo", "hello", head); apptest.ResponseStatus(resp) != http.StatusNotFound {
			t.Fatalf("a commit as a tag: %d", apptest.ResponseStatus(resp))
		}
	})

	apptest.Step(t, "references listed; trees read by name", func(t *testing.T) {
		_, _, err := c.Git.CreateRef(ctx, "octo", "hello", github.CreateRef{Ref: "refs/heads/feature/x", SHA: head})
		apptest.Must(t, "branch with a slash", err)
		resp, body := env.DoJSON("GET", "/repos/octo/hello/git/refs", token, "")
		apptest.WantStatus(t, "list refs", resp, body, http.StatusOK)
		for _, want := range []string{`"ref":"refs/heads/feature/x"`, `"ref":"refs/heads/main"`, `"ref":"refs/tags/v1.0.0"`, `"type":"tag"`} {
			if !strings.Contains(string(body), want) {
				t.Fatalf("GET git/refs lacks %s: %s", want, body)
			}
		}
		resp, body = env.DoJSON("GET", "/repos/octo/hello/git/refs/heads", token, "")
		apptest.WantStatus(t, "refs/heads", resp, body, http.StatusOK)
		if !strings.HasPrefix(string(body), "[") || strings.Contains(string(body), "refs/tags") {
			t.Fatalf("GET git/refs/heads: %s", body)
		}
		resp, body = env.DoJSON("GET", "/repos/octo/hello/git/refs/heads/main", token, "")
		apptest.WantStatus(t, "refs/heads/main", resp, body, http.StatusOK)
		if !strings.HasPrefix(string(body), `{"ref":"refs/heads/main"`) {
			t.Fatalf("GET git/refs/heads/main: %s", body)
		}
		for _, name := range []string{"main", "feature/x", "v1.0.0", head, treeSHA} {
			tree, _, err := c.Git.GetTree(ctx, "octo", "hello", name, true)
			apptest.Must(t, "tree of "+name, err)
			if tree.GetSHA() != treeSHA || len(tree.Entries) != 4 || tree.GetTruncated() { // README.md, a, a/b, a/b/c.txt
				t.Fatalf("tree of %s: %+v", name, tree)
			}
		}
		if _, resp, _ := c.Git.GetTree(ctx, "octo", "hello", "nope/x", false); apptest.ResponseStatus(resp) != http.StatusNotFound {
			t.Fatalf("tree of an unknown name: %d", apptest.ResponseStatus(resp))
		}
	})
}

func getCommitVerification(t *testing.T, c *github.Client, sha string) *github.SignatureVerification {
	t.Helper()
	got, _, err := c.Git.GetCommit(apptest.Ctx(), "octo", "hello", sha)
	apptest.Must(t, "get commit", err)
	return got.GetVerification()
}

// TestGitDataValidation: what the platform refuses is a 4xx with its
// message, and writes nothing a client sees; never a 500.
func TestGitDataValidation(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octo := env.User("octo")
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo")
	work := apptest.WorkTree(t, map[string]string{"README.md": "# hello\n"})
	apptest.Git(t, work, "remote", "add", "origin", env.GitURL("octo", "hello", "octo", token))
	apptest.Git(t, work, "push", "-q", "origin", "HEAD:refs/heads/main")
	head := strings.TrimSpace(apptest.Git(t, work, "rev-parse", "HEAD"))
	tree := strings.TrimSpace(apptest.Git(t, work, "rev-parse", "HEAD^{tree}"))
	blob := strings.TrimSpace(apptest.Git(t, work, "rev-parse", "HEAD:README.md"))
	missing := strings.Repeat("1", 40)
	reader := env.Token(env.User("reader"), "repo")
	for _, tc := range []struct{ path, body, message string }{
		{"blobs", `{}`, "content"},
		{"blobs", `{"content":"!!","encoding":"base64"}`, "Base64"},
		{"blobs", `{"content":"x","encoding":"utf-16"}`, "encoding"},
		{"trees", `{}`, "tree"},
		{"trees", `{"base_tree":"` + missing + `","tree":[]}`, "base_tree is not a valid tree oid"},
		{"trees", `{"base_tree":"` + blob + `","tree":[]}`, "base_tree is not a valid tree oid"},
		{"trees", `{"tree":[{"path":"a","mode":"100644","type":"blob","sha":"` + missing + `"}]}`, "tree.sha " + missing + " is not a valid blob"},
		{"trees", `{"tree":[{"path":"a","mode":"040000","type":"tree","sha":"` + blob + `"}]}`, "is not a valid tree"},
		{"trees", `{"tree":[{"path":"a","mode":"100664","type":"blob","sha":"` + blob + `"}]}`, "tree.mode"},
		{"trees", `{"tree":[{"path":"a","mode":"100644","type":"tree","sha":"` + blob + `"}]}`, "tree.type"},
		{"trees", `{"tree":[{"path":".git/config","mode":"100644","type":"blob","sha":"` + blob + `"}]}`, "tree.path"},
		{"trees", `{"tree":[{"path":"a//b","mode":"100644","type":"blob","sha":"` + blob + `"}]}`, "tree.path contains a malformed path component"},
		{"trees", `{"tree":[{"path":"a","mode":"100644","type":"blob","sha":"` + blob + `","content":"x"}]}`, "both"},
		{"trees", `{"tree":[{"path":"a","mode":"100644","type":"blob"}]}`, "tree.sha or tree.content"},
		{"trees", `{"tree":[{"mode":"100644","type":"blob","sha":"` + blob + `"}]}`, "tree.path"},
		{"commits", `{"tree":"` + tree + `"}`, "message"},
		{"commits", `{"message":"m"}`, "tree"},
		{"commits", `{"message":"m","tree":"` + missing + `"}`, "Tree SHA does not exist"},
		{"commits", `{"message":"m","tree":"` + head + `"}`, "Tree SHA does not exist"},
		{"commits", `{"message":"m","tree":"` + tree + `","parents":["` + tree + `"]}`, "Parent SHA does not exist or is not a commit object"},
		{"commits", `{"message":"m","tree":"` + tree + `","author":{"name":"a"}}`, "author.email"},
		{"commits", `{"message":"m","tree":"` + tree + `","author":{"name":"a","email":"e","date":"yesterday"}}`, "author.date"},
		{"commits", `{"message":"m","tree":"` + tree + `","author":{"name":"a","email":"e","date":"1900-01-01T00:00:00Z"}}`, "date"},
		{"tags", `{"tag":"v1","message":"m","object":"` + head + `"}`, "type"},
		{"tags", `{"tag":"v1","message":"m","object":"` + head + `","type":"tree"}`, "is not a tree"},
		{"tags", `{"tag":"v1","message":"m","object":"` + missing + `","type":"commit"}`, "is not a commit"},
		{"tags", `{"tag":"a..b","message":"m","object":"` + head + `","type":"commit"}`, "tag name"},
		{"tags", `{"tag":"v1","message":"m","object":"` + head + `","type":"nope"}`, "type must be"},
	} {
		resp, body := env.DoJSON("POST", "/repos/octo/hello/git/"+tc.path, token, tc.body)
		if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(string(body), tc.message) {
			t.Errorf("POST %s %s: %d %s, want 422 with %q", tc.path, tc.body, resp.StatusCode, body, tc.message)
		}
	}
	for _, path := range []string{"blobs", "trees", "commits", "tags"} {
		if resp, body := env.DoJSON("POST", "/repos/octo/hello/git/"+path, token, `{"x":`); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("POST %s with malformed JSON: %d %s", path, resp.StatusCode, body)
		}
		if resp, body := env.DoJSON("POST", "/repos/octo/hello/git/"+path, reader, `{}`); resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusNotFound {
			t.Errorf("POST %s by a reader: %d %s", path, resp.StatusCode, body)
		}
	}
	if resp, body := env.DoJSON("GET", "/repos/octo/hello/git/tags/nothex", token, ""); resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET a malformed tag: %d %s", resp.StatusCode, body)
	}
	if _, err := os.Stat(work); err != nil {
		t.Fatal(err)
	}
}
