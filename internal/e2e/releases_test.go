package e2e_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apptest"
	"forgeapi/internal/webhooks"
)

// bigAsset is the size of the large asset of the goreleaser-style run.
const bigAsset = 50 << 20

// deterministic returns a reader of n pseudo-random bytes that are the
// same for the same seed: the large asset, generated while it streams.
func deterministic(seed uint64, n int64) io.Reader {
	var key [32]byte
	key[0] = byte(seed)
	return io.LimitReader(rand.NewChaCha8(key), n)
}

// sum is the sha256 of what r reads, hex.
func sum(t testing.TB, r io.Reader) string {
	t.Helper()
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		t.Fatalf("read: %v", err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// project pushes a repository octo/hello with two commits on main and
// returns its owner, its work tree and a token of its owner.
func releaseProject(t *testing.T, env *apptest.Env) (octo *accounts.Account, dir, token string) {
	t.Helper()
	octo = env.User("octo")
	env.Repo(octo, "hello")
	token = env.Token(octo, "repo", "admin:repo_hook")
	dir = apptest.WorkTree(t, map[string]string{"README.md": "# hello\n"})
	apptest.Commit(t, dir, "Second", map[string]string{"main.go": "package main\n"})
	apptest.Git(t, dir, "push", "-q", env.GitURL("octo", "hello", "octo", token), "HEAD:refs/heads/main")
	return octo, dir, token
}

// TestGoreleaserStyleRelease releases as goreleaser does, with go-github:
// a draft release whose tag does not exist yet, three assets uploaded at
// its upload_url (one of 50 MB, streamed from a generator), published
// (the tag appears at the default branch's head, as a push); each asset
// downloaded through the asset API (octet-stream, following the 302) and
// through browser_download_url has the uploaded bytes. Webhook release
// deliveries (created, published, released) validate against the
// platform's schemas; the feed shows ReleaseEvent; download counts grow.
func TestGoreleaserStyleRelease(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	ctx := apptest.Ctx()
	_, dir, token := releaseProject(t, env)
	head := strings.TrimSpace(apptest.Git(t, dir, "rev-parse", "HEAD"))
	c := env.Client(token)
	rc := apptest.NewReceiver(t, "s")
	_, _, err := c.Repositories.CreateHook(ctx, "octo", "hello", &github.Hook{Events: []string{"release", "create"},
		Config: &github.HookConfig{URL: github.Ptr(rc.URL), ContentType: github.Ptr("json"), Secret: github.Ptr("s")}})
	apptest.Must(t, "hook", err)

	var rel *github.RepositoryRelease
	apptest.Step(t, "a draft release of a new tag", func(t *testing.T) {
		if _, resp, err := c.Repositories.GetReleaseByTag(ctx, "octo", "hello", "v1.0.0"); resp == nil || resp.StatusCode != http.StatusNotFound {
			t.Fatalf("release by tag before: %v", err)
		}
		rel, _, err = c.Repositories.CreateRelease(ctx, "octo", "hello", github.CreateReleaseRequest{TagName: "v1.0.0",
			Name: github.Ptr("v1.0.0"), Body: github.Ptr("First"), Draft: github.Ptr(true)})
		apptest.Must(t, "create", err)
		if !rel.GetDraft() || rel.PublishedAt != nil || rel.GetTargetCommitish() != "main" ||
			!strings.HasSuffix(rel.GetUploadURL(), "/api/uploads/repos/octo/hello/releases/"+strconv.FormatInt(rel.GetID(), 10)+"/assets{?name,label}") {
			t.Fatalf("draft %+v", rel)
		}
		if out, _ := apptest.TryGit(t, dir, "ls-remote", "--tags", env.GitURL("octo", "hello", "octo", token)); strings.Contains(out, "v1.0.0") {
			t.Fatalf("a draft made its tag: %s", out)
		}
		if _, _, err := c.Repositories.CreateRelease(ctx, "octo", "hello", github.CreateReleaseRequest{TagName: "v1.0.0"}); !isValidation(err, "tag_name", "already_exists") {
			t.Fatalf("a second release of the tag: %v", err)
		}
		anon := env.Client("")
		if _, resp, _ := anon.Repositories.GetRelease(ctx, "octo", "hello", rel.GetID()); resp == nil || resp.StatusCode != http.StatusNotFound {
			t.Fatalf("an anonymous caller sees the draft")
		}
	})

	sums := map[string]string{}
	apptest.Step(t, "three assets uploaded", func(t *testing.T) {
		tmp := t.TempDir()
		for name, content := range map[string]string{"checksums.txt": "abc  hello.tar.gz\n", "hello_linux_amd64.tar.gz": strings.Repeat("tarball", 40000)} {
			p := filepath.Join(tmp, name)
			apptest.Must(t, "write", os.WriteFile(p, []byte(content), 0o644))
			f, err := os.Open(p)
			apptest.Must(t, "open", err)
			a, resp, err := c.Repositories.UploadReleaseAsset(ctx, "octo", "hello", rel.GetID(), &github.UploadOptions{Name: name}, f)
			f.Close()
			apptest.Must(t, "upload "+name, err)
			sums[name] = sum(t, strings.NewReader(content))
			if resp.StatusCode != http.StatusCreated || a.GetSize() != len(content) || a.GetState() != "uploaded" ||
				a.GetDigest() != "sha256:"+sums[name] || a.GetUploader().GetLogin() != "octo" {
				t.Fatalf("uploaded %s: %d %+v", name, resp.StatusCode, a)
			}
		}
		a, _, err := c.Repositories.UploadReleaseAssetFromRelease(ctx, rel, &github.UploadOptions{Name: "hello_big.bin", Label: "Big"},
			deterministic(7, bigAsset), bigAsset)
		apptest.Must(t, "upload the big asset", err)
		sums["hello_big.bin"] = sum(t, deterministic(7, bigAsset))
		if a.GetSize() != bigAsset || a.GetLabel() != "Big" || a.GetContentType() != "application/octet-stream" {
			t.Fatalf("big asset %+v", a)
		}
		_, _, err = c.Repositories.UploadReleaseAssetFromRelease(ctx, rel, &github.UploadOptions{Name: "checksums.txt"}, strings.NewReader("x"), 1)
		if !isValidation(err, "name", "already_exists") {
			t.Fatalf("a second asset of one name: %v", err)
		}
	})

	apptest.Step(t, "published, its tag made", func(t *testing.T) {
		rel, _, err = c.Repositories.UpdateRelease(ctx, "octo", "hello", rel.GetID(), github.UpdateReleaseRequest{Draft: github.Ptr(false)})
		apptest.Must(t, "publish", err)
		if rel.GetDraft() || rel.PublishedAt == nil || len(rel.Assets) != 3 {
			t.Fatalf("published %+v", rel)
		}
		out := apptest.Git(t, dir, "ls-remote", "--tags", env.GitURL("octo", "hello", "octo", token))
		if !strings.Contains(out, head+"\trefs/tags/v1.0.0") {
			t.Fatalf("tags after publishing: %q, want v1.0.0 at %s", out, head)
		}
		latest, _, err := c.Repositories.GetLatestRelease(ctx, "octo", "hello")
		apptest.Must(t, "latest", err)
		byTag, _, err := env.Client("").Repositories.GetReleaseByTag(ctx, "octo", "hello", "v1.0.0")
		apptest.Must(t, "by tag", err)
		if latest.GetID() != rel.GetID() || byTag.GetID() != rel.GetID() {
			t.Fatalf("latest %d, by tag %d, want %d", latest.GetID(), byTag.GetID(), rel.GetID())
		}
	})

	apptest.Step(t, "every asset downloaded both ways", func(t *testing.T) {
		follow := env.HTTPClient()
		for _, a := range rel.Assets {
			rc, redirect, err := c.Repositories.DownloadReleaseAsset(ctx, "octo", "hello", a.GetID(), nil)
			apptest.Must(t, "asset API", err)
			if rc != nil || redirect == "" {
				t.Fatalf("the asset API did not redirect for %s", a.GetName())
			}
			rc, _, err = c.Repositories.DownloadReleaseAsset(ctx, "octo", "hello", a.GetID(), follow)
			apptest.Must(t, "asset API, followed", err)
			if got := sum(t, rc); got != sums[a.GetName()] {
				t.Errorf("%s through the asset API: sha256 %s, want %s", a.GetName(), got, sums[a.GetName()])
			}
			rc.Close()
			resp, err := follow.Get(a.GetBrowserDownloadURL())
			apptest.Must(t, "browser download", err)
			if got := sum(t, resp.Body); resp.StatusCode != http.StatusOK || got != sums[a.GetName()] {
				t.Errorf("%s through %s: %d sha256 %s, want %s", a.GetName(), a.GetBrowserDownloadURL(), resp.StatusCode, got, sums[a.GetName()])
			}
			resp.Body.Close()
		}
		a, _, err := c.Repositories.GetReleaseAsset(ctx, "octo", "hello", rel.Assets[0].GetID())
		apptest.Must(t, "asset", err)
		if a.GetDownloadCount() != 3 { // the redirect twice, the browser once
			t.Errorf("download count %d, want 3", a.GetDownloadCount())
		}
	})

	apptest.Step(t, "webhooks and the feed", func(t *testing.T) {
		describe := func(d apptest.Delivery) string {
			var p struct {
				Action  string `json:"action"`
				RefType string `json:"ref_type"`
			}
			_ = json.Unmarshal(d.Body, &p)
			return d.Event + " " + p.Action + p.RefType
		}
		rc.WaitFor(t, describe, "release created", "release published", "release released", "create tag")
		events, _, err := c.Activity.ListRepositoryEvents(ctx, "octo", "hello", nil)
		apptest.Must(t, "events", err)
		found := false
		for _, e := range events {
			found = found || e.GetType() == "ReleaseEvent"
		}
		if !found {
			t.Errorf("the repository's feed has no ReleaseEvent")
		}
	})
}

// isValidation reports whether err is a 422 with an errors[] entry of
// the field and code.
func isValidation(err error, field, code string) bool {
	e, ok := err.(*github.ErrorResponse)
	if !ok || e.Response.StatusCode != http.StatusUnprocessableEntity {
		return false
	}
	for _, fe := range e.Errors {
		if fe.Field == field && fe.Code == code {
			return true
		}
	}
	return false
}
