package actions

import (
	"context"
	"errors"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/auth"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// BotLogin is the account a job's GITHUB_TOKEN acts as.
const BotLogin = "github-actions[bot]"

// jobTokenLifetime bounds a job's GITHUB_TOKEN when its job never ends
// (the server is killed): the platform's longest job, six hours.
const jobTokenLifetime = 6 * time.Hour

// jobToken mints a job's GITHUB_TOKEN: an installation-like token of
// github-actions[bot] that selects the run's repository alone, with
// grant (the job's permissions, permissions.go), expiring after
// jobTokenLifetime. It returns the token and its id, which the job keeps
// until revokeJobTokens deletes it (when the job ends).
func (s *Service) jobToken(ctx context.Context, repo *repos.Repository, grant auth.Grant) (value string, id int64, err error) {
	bot, err := s.bot(ctx)
	if err != nil {
		return "", 0, err
	}
	expires := store.Now().Add(jobTokenLifetime)
	t, err := auth.CreateToken(ctx, s.DB, auth.TokenSpec{Kind: auth.KindInstallation, UserID: bot.ID, Grant: grant,
		ResourceOwnerID: repo.Owner.ID, RepositoryIDs: []int64{repo.ID}, ExpiresAt: &expires, Note: "GITHUB_TOKEN"})
	if err != nil {
		return "", 0, err
	}
	return t.Value, t.ID, nil
}

// bot returns github-actions[bot], made on first use.
func (s *Service) bot(ctx context.Context) (*accounts.Account, error) {
	a, err := accounts.ByLogin(ctx, s.DB, BotLogin)
	if !errors.Is(err, store.ErrNotFound) {
		return a, err
	}
	a, err = accounts.Create(ctx, s.DB, accounts.NewAccount{Type: accounts.TypeBot, Login: BotLogin})
	if errors.Is(err, store.ErrConflict) { // made by another job meanwhile
		return accounts.ByLogin(ctx, s.DB, BotLogin)
	}
	return a, err
}
