package pulls

import (
	"strconv"
	"strings"

	"forgeapi/internal/accounts"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/reactions"
	"forgeapi/internal/repos"
	"forgeapi/internal/wire"
)

// reviewJSON is the platform's pull-request-review object (the webhook's
// review, with a lower-case state, when hook is set).
type reviewJSON struct {
	ID                int64                `json:"id"`
	NodeID            string               `json:"node_id"`
	User              *accounts.SimpleUser `json:"user"`
	Body              string               `json:"body"`
	State             string               `json:"state"`
	HTMLURL           string               `json:"html_url"`
	PullRequestURL    string               `json:"pull_request_url"`
	Links             reviewLinks          `json:"_links"`
	SubmittedAt       *wire.Time           `json:"submitted_at,omitempty"`
	CommitID          string               `json:"commit_id"`
	AuthorAssociation string               `json:"author_association"`
}

type reviewLinks struct {
	HTML        link `json:"html"`
	PullRequest link `json:"pull_request"`
}

func toReviewJSON(base string, p *PullRequest, r *Review, hook bool) reviewJSON {
	n := strconv.FormatInt(p.Number(), 10)
	html := httpapi.WebBase(base) + "/" + p.Repo.FullName() + "/pull/" + n + "#pullrequestreview-" + strconv.FormatInt(r.ID, 10)
	api := base + "/repos/" + p.Repo.FullName() + "/pulls/" + n
	state := r.State
	if hook {
		state = strings.ToLower(state)
	}
	return reviewJSON{ID: r.ID, NodeID: wire.NodeID("PRR", r.ID), User: simpleUser(base, r.User), Body: r.Body, State: state,
		HTMLURL: html, PullRequestURL: api, Links: reviewLinks{HTML: link{html}, PullRequest: link{api}},
		SubmittedAt: wire.TP(r.SubmittedAt), CommitID: r.CommitID, AuthorAssociation: r.Association}
}

// commentJSON is the platform's pull-request-review-comment object.
type commentJSON struct {
	URL                 string               `json:"url"`
	PullRequestReviewID int64                `json:"pull_request_review_id"`
	ID                  int64                `json:"id"`
	NodeID              string               `json:"node_id"`
	DiffHunk            string               `json:"diff_hunk"`
	Path                string               `json:"path"`
	Position            *int                 `json:"position"`
	OriginalPosition    *int                 `json:"original_position"`
	CommitID            string               `json:"commit_id"`
	OriginalCommitID    string               `json:"original_commit_id"`
	InReplyToID         *int64               `json:"in_reply_to_id,omitempty"`
	User                *accounts.SimpleUser `json:"user"`
	Body                string               `json:"body"`
	CreatedAt           wire.Time            `json:"created_at"`
	UpdatedAt           wire.Time            `json:"updated_at"`
	HTMLURL             string               `json:"html_url"`
	PullRequestURL      string               `json:"pull_request_url"`
	AuthorAssociation   string               `json:"author_association"`
	Links               commentLinks         `json:"_links"`
	StartLine           *int                 `json:"start_line"`
	OriginalStartLine   *int                 `json:"original_start_line"`
	StartSide           *string              `json:"start_side"`
	Line                *int                 `json:"line"`
	OriginalLine        *int                 `json:"original_line"`
	Side                string               `json:"side"`
	SubjectType         string               `json:"subject_type"`
	Reactions           reactions.Rollup     `json:"reactions"`
}

type commentLinks struct {
	Self        link `json:"self"`
	HTML        link `json:"html"`
	PullRequest link `json:"pull_request"`
}

func toCommentJSON(base string, repo *repos.Repository, number int64, c *ReviewComment) commentJSON {
	n := strconv.FormatInt(number, 10)
	id := strconv.FormatInt(c.ID, 10)
	self := base + "/repos/" + repo.FullName() + "/pulls/comments/" + id
	html := httpapi.WebBase(base) + "/" + repo.FullName() + "/pull/" + n + "#discussion_r" + id
	pr := base + "/repos/" + repo.FullName() + "/pulls/" + n
	return commentJSON{URL: self, PullRequestReviewID: c.ReviewID, ID: c.ID, NodeID: wire.NodeID("PRRC", c.ID), DiffHunk: c.DiffHunk,
		Path: c.Path, Position: c.Position, OriginalPosition: c.Position, CommitID: c.CommitID, OriginalCommitID: c.OriginalCommitID,
		InReplyToID: c.InReplyTo, User: simpleUser(base, c.User), Body: c.Body, CreatedAt: wire.T(c.CreatedAt),
		UpdatedAt: wire.T(c.UpdatedAt), HTMLURL: html, PullRequestURL: pr, AuthorAssociation: c.Association,
		Links: commentLinks{Self: link{self}, HTML: link{html}, PullRequest: link{pr}}, Line: c.Line, OriginalLine: c.Line,
		Side: c.Side, SubjectType: "line", Reactions: c.Reactions.Rollup(self)}
}
