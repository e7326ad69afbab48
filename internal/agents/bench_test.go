package agents_test

import (
	"context"
	"fmt"
	"testing"

	"forgeapi/internal/apptest"
	"forgeapi/internal/git/githttp"
	"forgeapi/internal/githost"
)

// BenchmarkListCustomAgents is GET .../custom-agents?per_page=100 over
// HTTP, on a source repository with 300 definitions with front matter:
// with the front matter names cached by blob SHA, and cold (every file of
// the page read and parsed).
func BenchmarkListCustomAgents(b *testing.B) {
	f := newFixture(b)
	files := map[string]string{}
	for i := range 300 {
		files[fmt.Sprintf("agents/agent-%03d.md", i)] = fmt.Sprintf("---\nname: Agent %d\ndescription: does %d things\ntools: [a, b]\n---\n# Agent\n\nBody text.\n", i, i)
	}
	f.bossPush(b, apptest.WorkTree(b, files), f.repo)
	f.putSource(b, f.acme, nil)
	b.Run("names cached", func(b *testing.B) {
		for b.Loop() {
			f.mustCall(b, 200, "GET", base+"?per_page=100&page=2", f.bossToken, "")
		}
	})
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			f.env.App.Agents.ForgetNames()
			f.mustCall(b, 200, "GET", base+"?per_page=100&page=2", f.bossToken, "")
		}
	})
}

// BenchmarkPushCheck is the ruleset check a push runs before its
// references move: on a repository no ruleset targets (every push to
// every other repository), and on the protected source repository by an
// enterprise owner (who bypasses it).
func BenchmarkPushCheck(b *testing.B) {
	f := newFixture(b)
	f.putSource(b, f.acme, nil)
	other := f.env.Repo(f.acme, "other")
	ctx := context.Background()
	updates := []githttp.RefUpdate{{Ref: "refs/heads/main", OldSHA: "1111111111111111111111111111111111111111", NewSHA: "2222222222222222222222222222222222222222"}}
	b.Run("unprotected repository", func(b *testing.B) {
		push := &githost.Push{Repo: other, Pusher: f.dev, Updates: updates}
		for b.Loop() {
			if err := f.env.App.Agents.CheckPush(ctx, push); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("source repository, enterprise owner", func(b *testing.B) {
		push := &githost.Push{Repo: f.repo, Pusher: f.boss, Updates: updates}
		for b.Loop() {
			if err := f.env.App.Agents.CheckPush(ctx, push); err != nil {
				b.Fatal(err)
			}
		}
	})
}
