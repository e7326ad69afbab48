package teams

import (
	"context"
	"errors"

	"forgeapi/internal/accounts"
	"forgeapi/internal/store"
)

// TeamJSON returns the team id of the organization orgID as the
// platform's team object (with its parent), and false when the
// organization has no such team. Other areas show teams with it (an
// environment's required reviewers).
func (s *Service) TeamJSON(ctx context.Context, base string, orgID, id int64) (any, bool, error) {
	org, err := accounts.ByID(ctx, s.DB, orgID)
	if err != nil {
		return nil, false, err
	}
	t, err := ByID(ctx, s.DB, org, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	j, err := JSON(ctx, s.DB, base, t)
	return j, err == nil, err
}
