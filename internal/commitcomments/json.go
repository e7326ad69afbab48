package commitcomments

import (
	"strconv"

	"forgeapi/internal/accounts"
	"forgeapi/internal/reactions"
	"forgeapi/internal/repos"
	"forgeapi/internal/wire"
)

// commentJSON is the platform's commit-comment object.
type commentJSON struct {
	HTMLURL           string               `json:"html_url"`
	URL               string               `json:"url"`
	ID                int64                `json:"id"`
	NodeID            string               `json:"node_id"`
	Body              string               `json:"body"`
	Path              *string              `json:"path"`
	Position          *int                 `json:"position"`
	Line              *int                 `json:"line"`
	CommitID          string               `json:"commit_id"`
	User              *accounts.SimpleUser `json:"user"`
	CreatedAt         wire.Time            `json:"created_at"`
	UpdatedAt         wire.Time            `json:"updated_at"`
	AuthorAssociation string               `json:"author_association"`
	Reactions         reactions.Rollup     `json:"reactions"`
}

// toJSON renders a comment of repo; base is the API's base URL.
func toJSON(base string, repo *repos.Repository, c *Comment) commentJSON {
	id := strconv.FormatInt(c.ID, 10)
	j := commentJSON{
		HTMLURL: accounts.WebBase(base) + "/" + repo.FullName() + "/commit/" + c.CommitID + "#commitcomment-" + id,
		URL:     base + "/repos/" + repo.FullName() + "/comments/" + id,
		ID:      c.ID, NodeID: wire.NodeID("CC", c.ID), Body: c.Body, CommitID: c.CommitID,
		CreatedAt: wire.T(c.CreatedAt), UpdatedAt: wire.T(c.UpdatedAt), AuthorAssociation: c.Association,
	}
	j.Reactions = c.Reactions.Rollup(j.URL)
	if c.Path != "" {
		j.Path = &c.Path
	}
	if c.Position != 0 {
		j.Position = &c.Position
	}
	if c.Line != 0 {
		j.Line = &c.Line
	}
	if c.User != nil {
		u := accounts.ToSimpleUser(base, c.User)
		j.User = &u
	}
	return j
}

func itoa(n int) string { return strconv.Itoa(n) }
