package repository_test

import (
	"context"
	"fmt"
	"testing"

	"forgeapi/internal/apptest"
	"forgeapi/internal/git/githttp"
	"forgeapi/internal/githost"
	"forgeapi/internal/protection"
	"forgeapi/internal/statuses"
	"forgeapi/internal/store"
)

// linearInspector answers a push's inspection as a fast-forward without
// merge commits, so that the benchmark measures the protection's own
// work (its reads and rules) rather than git's.
type linearInspector struct{}

func (linearInspector) NewCommits(context.Context, githttp.RefUpdate) ([]string, error) {
	return nil, nil
}
func (linearInspector) ChangedPaths(context.Context, githttp.RefUpdate) ([]string, error) {
	return nil, nil
}
func (linearInspector) TreeChanges(context.Context, githttp.RefUpdate) ([]string, error) {
	return nil, nil
}
func (linearInspector) IsAncestor(context.Context, string, string) (bool, error) { return true, nil }
func (linearInspector) MergeCommits(context.Context, githttp.RefUpdate) ([]string, error) {
	return nil, nil
}
func (linearInspector) NewBlobs(context.Context, githttp.RefUpdate) ([]githttp.Blob, error) {
	return nil, nil
}
func (linearInspector) NewCommitSignatures(context.Context, githttp.RefUpdate) ([]githttp.CommitSignature, error) {
	return nil, nil
}

// BenchmarkCheckPush checks a push to one of 50 protected branches by a
// writer that every rule lets through (restrictions, bypass of required
// reviews, a required status check that passed, linear history): the
// whole evaluation, reads included, without git.
func BenchmarkCheckPush(b *testing.B) {
	env := apptest.Start(b)
	ctx := apptest.Ctx()
	octo, bob := env.User("octo"), env.User("bob")
	repo := env.Repo(octo, "hello")
	svc := env.App.Protection
	sha := "1111111111111111111111111111111111111111"
	for i := range 50 {
		_, err := svc.Update(ctx, repo, octo, fmt.Sprintf("release-%d", i), true, func(_ store.Q, s *protection.Settings) error {
			*s = protection.Settings{LinearHistory: true,
				StatusChecks: &protection.StatusChecks{Strict: true, Checks: []protection.Check{{Context: "ci"}}},
				Reviews:      &protection.Reviews{Count: 1, Bypass: &protection.Actors{Users: []int64{bob.ID}}},
				Restrictions: &protection.Actors{Users: []int64{bob.ID}}}
			return nil
		})
		apptest.Must(b, "protect", err)
	}
	_, err := env.App.Statuses.Create(ctx, repo, octo, statuses.Status{SHA: sha, State: "success", Context: "ci"},
		func(*statuses.Status) map[string]any { return map[string]any{"sha": sha} })
	apptest.Must(b, "status", err)
	push := &githost.Push{Repo: repo, Pusher: bob, Inspect: linearInspector{},
		Updates: []githttp.RefUpdate{{Ref: "refs/heads/release-25", OldSHA: "2222222222222222222222222222222222222222", NewSHA: sha}}}
	if err := svc.CheckPush(ctx, push); err != nil {
		b.Fatalf("the push is refused: %v", err)
	}
	b.ResetTimer()
	for b.Loop() {
		if err := svc.CheckPush(ctx, push); err != nil {
			b.Fatal(err)
		}
	}
}
