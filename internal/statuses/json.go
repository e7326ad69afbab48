package statuses

import (
	"forgeapi/internal/accounts"
	"forgeapi/internal/repos"
	"forgeapi/internal/wire"
)

// statusJSON is the platform's status object.
type statusJSON struct {
	URL         string               `json:"url"`
	AvatarURL   *string              `json:"avatar_url"`
	ID          int64                `json:"id"`
	NodeID      string               `json:"node_id"`
	State       string               `json:"state"`
	Description *string              `json:"description"`
	TargetURL   *string              `json:"target_url"`
	Context     string               `json:"context"`
	CreatedAt   wire.Time            `json:"created_at"`
	UpdatedAt   wire.Time            `json:"updated_at"`
	Creator     *accounts.SimpleUser `json:"creator"`
}

// simpleStatusJSON is a status in a combined status.
type simpleStatusJSON struct {
	URL         string    `json:"url"`
	AvatarURL   *string   `json:"avatar_url"`
	ID          int64     `json:"id"`
	NodeID      string    `json:"node_id"`
	State       string    `json:"state"`
	Description *string   `json:"description"`
	TargetURL   *string   `json:"target_url"`
	Context     string    `json:"context"`
	CreatedAt   wire.Time `json:"created_at"`
	UpdatedAt   wire.Time `json:"updated_at"`
}

// combinedJSON is the platform's combined-commit-status.
type combinedJSON struct {
	State      string             `json:"state"`
	Statuses   []simpleStatusJSON `json:"statuses"`
	SHA        string             `json:"sha"`
	TotalCount int                `json:"total_count"`
	Repository repos.JSON         `json:"repository"`
	CommitURL  string             `json:"commit_url"`
	URL        string             `json:"url"`
}

func toStatusJSON(base string, repo *repos.Repository, s *Status) statusJSON {
	simple := toSimpleStatusJSON(base, repo, s)
	j := statusJSON{URL: simple.URL, AvatarURL: simple.AvatarURL, ID: s.ID, NodeID: simple.NodeID, State: s.State,
		Description: simple.Description, TargetURL: simple.TargetURL, Context: s.Context,
		CreatedAt: simple.CreatedAt, UpdatedAt: simple.UpdatedAt}
	if s.Creator != nil {
		su := accounts.ToSimpleUser(base, s.Creator)
		j.Creator = &su
	}
	return j
}

func toSimpleStatusJSON(base string, repo *repos.Repository, s *Status) simpleStatusJSON {
	return simpleStatusJSON{
		URL: base + "/repos/" + repo.FullName() + "/statuses/" + s.SHA, AvatarURL: avatarOf(base, s.Creator),
		ID: s.ID, NodeID: wire.NodeID("SC", s.ID), State: s.State, Description: optional(s.Description),
		TargetURL: optional(s.TargetURL), Context: s.Context, CreatedAt: wire.T(s.CreatedAt), UpdatedAt: wire.T(s.CreatedAt),
	}
}

// avatarOf is the creator's avatar URL, nil when the creator is gone.
func avatarOf(base string, a *accounts.Account) *string {
	if a == nil {
		return nil
	}
	u := accounts.AvatarURL(base, a)
	return &u
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
