package pulls

import (
	"context"
	"strconv"

	"forgeapi/internal/accounts"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/issues"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// link is the platform's {"href": ...}.
type link struct {
	Href string `json:"href"`
}

// linksJSON are a pull request's _links.
type linksJSON struct {
	Self           link `json:"self"`
	HTML           link `json:"html"`
	Issue          link `json:"issue"`
	Comments       link `json:"comments"`
	ReviewComments link `json:"review_comments"`
	ReviewComment  link `json:"review_comment"`
	Commits        link `json:"commits"`
	Statuses       link `json:"statuses"`
}

// branchJSON is a pull request's head or base.
type branchJSON struct {
	Label string              `json:"label"`
	Ref   string              `json:"ref"`
	SHA   string              `json:"sha"`
	User  accounts.SimpleUser `json:"user"`
	Repo  *repos.JSON         `json:"repo"`
}

// pullJSON is the platform's pull-request object; the simple form of
// the lists leaves out the fields after Draft (omitempty on pointers).
type pullJSON struct {
	URL                string                `json:"url"`
	ID                 int64                 `json:"id"`
	NodeID             string                `json:"node_id"`
	HTMLURL            string                `json:"html_url"`
	DiffURL            string                `json:"diff_url"`
	PatchURL           string                `json:"patch_url"`
	IssueURL           string                `json:"issue_url"`
	CommitsURL         string                `json:"commits_url"`
	ReviewCommentsURL  string                `json:"review_comments_url"`
	ReviewCommentURL   string                `json:"review_comment_url"`
	CommentsURL        string                `json:"comments_url"`
	StatusesURL        string                `json:"statuses_url"`
	Number             int64                 `json:"number"`
	State              string                `json:"state"`
	Locked             bool                  `json:"locked"`
	Title              string                `json:"title"`
	User               *accounts.SimpleUser  `json:"user"`
	Body               *string               `json:"body"`
	Labels             []any                 `json:"labels"`
	Milestone          any                   `json:"milestone"`
	ActiveLockReason   *string               `json:"active_lock_reason"`
	CreatedAt          wire.Time             `json:"created_at"`
	UpdatedAt          wire.Time             `json:"updated_at"`
	ClosedAt           *wire.Time            `json:"closed_at"`
	MergedAt           *wire.Time            `json:"merged_at"`
	MergeCommitSHA     *string               `json:"merge_commit_sha"`
	Assignee           *accounts.SimpleUser  `json:"assignee"`
	Assignees          []accounts.SimpleUser `json:"assignees"`
	RequestedReviewers []accounts.SimpleUser `json:"requested_reviewers"`
	RequestedTeams     []any                 `json:"requested_teams"`
	Head               branchJSON            `json:"head"`
	Base               branchJSON            `json:"base"`
	Links              linksJSON             `json:"_links"`
	AuthorAssociation  string                `json:"author_association"`
	AutoMerge          any                   `json:"auto_merge"`
	Draft              bool                  `json:"draft"`

	*detailJSON
}

// detailJSON are the fields of the full pull-request object beyond the
// simple one.
type detailJSON struct {
	Merged              bool                 `json:"merged"`
	Mergeable           *bool                `json:"mergeable"`
	Rebaseable          *bool                `json:"rebaseable"`
	MergeableState      string               `json:"mergeable_state"`
	MergedBy            *accounts.SimpleUser `json:"merged_by"`
	Comments            int                  `json:"comments"`
	ReviewComments      int                  `json:"review_comments"`
	MaintainerCanModify bool                 `json:"maintainer_can_modify"`
	Commits             int                  `json:"commits"`
	Additions           int                  `json:"additions"`
	Deletions           int                  `json:"deletions"`
	ChangedFiles        int                  `json:"changed_files"`
}

// renderer renders pull requests, reading each repository's counts once.
type renderer struct {
	q     store.Q
	base  string
	urls  repos.URLs
	repos map[int64]*repos.JSON
}

func newRenderer(ctx context.Context, q store.Q, urls repos.URLs) *renderer {
	return &renderer{q: q, base: urls.Base, urls: urls, repos: map[int64]*repos.JSON{}}
}

func (r *renderer) repo(ctx context.Context, repo *repos.Repository) (*repos.JSON, error) {
	if repo == nil {
		return nil, nil
	}
	if j, ok := r.repos[repo.ID]; ok {
		return j, nil
	}
	st, err := repos.StatsOf(ctx, r.q, repo.ID)
	if err != nil {
		return nil, err
	}
	j := repos.ToJSON(r.urls, repo, st, auth.RoleNone)
	// The platform's head and base repositories carry no organization (the
	// webhook schemas of several pull_request actions even type it a string).
	j.Organization = nil
	r.repos[repo.ID] = &j
	return &j, nil
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func simpleUser(base string, a *accounts.Account) *accounts.SimpleUser {
	if a == nil {
		return nil
	}
	u := accounts.ToSimpleUser(base, a)
	return &u
}

// pull renders p; full adds the fields of the full object.
func (r *renderer) pull(ctx context.Context, p *PullRequest, full bool) (*pullJSON, error) {
	is := p.Issue
	n := strconv.FormatInt(is.Number, 10)
	api := r.base + "/repos/" + p.Repo.FullName()
	web := httpapi.WebBase(r.base) + "/" + p.Repo.FullName()
	self := api + "/pulls/" + n
	html := web + "/pull/" + n
	issue := api + "/issues/" + n
	statuses := api + "/statuses/" + p.HeadSHA
	j := &pullJSON{URL: self, ID: p.ID, NodeID: wire.NodeID("PR", p.ID), HTMLURL: html, DiffURL: html + ".diff",
		PatchURL: html + ".patch", IssueURL: issue, CommitsURL: self + "/commits", ReviewCommentsURL: self + "/comments",
		ReviewCommentURL: api + "/pulls/comments{/number}", CommentsURL: issue + "/comments", StatusesURL: statuses,
		Number: is.Number, State: is.State, Locked: is.Locked, Title: is.Title, User: simpleUser(r.base, is.User),
		Body: optional(is.Body), Labels: []any{}, ActiveLockReason: optional(is.LockReason),
		CreatedAt: wire.T(is.CreatedAt), UpdatedAt: wire.T(is.UpdatedAt), ClosedAt: wire.TP(is.ClosedAt),
		MergedAt: wire.TP(p.MergedAt), MergeCommitSHA: optional(p.MergeCommitSHA), Assignees: []accounts.SimpleUser{},
		RequestedReviewers: []accounts.SimpleUser{}, RequestedTeams: []any{}, AuthorAssociation: is.Association, Draft: p.Draft,
		Links: linksJSON{Self: link{self}, HTML: link{html}, Issue: link{issue}, Comments: link{issue + "/comments"},
			ReviewComments: link{self + "/comments"}, ReviewComment: link{api + "/pulls/comments{/number}"},
			Commits: link{self + "/commits"}, Statuses: link{statuses}}}
	for _, lb := range is.Labels {
		j.Labels = append(j.Labels, issues.LabelJSON(r.base, p.Repo, lb))
	}
	for _, a := range p.RequestedReviewers {
		j.RequestedReviewers = append(j.RequestedReviewers, accounts.ToSimpleUser(r.base, a))
	}
	for _, a := range is.Assignees {
		j.Assignees = append(j.Assignees, accounts.ToSimpleUser(r.base, a))
	}
	if len(j.Assignees) > 0 {
		j.Assignee = &j.Assignees[0]
	}
	if is.Milestone != nil {
		j.Milestone = issues.MilestoneJSON(r.base, p.Repo, is.Milestone)
	}
	var err error
	if j.Head, err = r.branch(ctx, p.HeadRepo, p.HeadRef, p.HeadSHA); err != nil {
		return nil, err
	}
	if j.Base, err = r.branch(ctx, p.Repo, p.BaseRef, p.BaseSHA); err != nil {
		return nil, err
	}
	if full {
		j.detailJSON = &detailJSON{Merged: p.MergedAt != nil, Mergeable: p.Mergeable, Rebaseable: p.Mergeable,
			MergeableState: p.MergeableState, MergedBy: simpleUser(r.base, p.MergedBy), Comments: is.Comments,
			Commits: p.Commits, Additions: p.Additions, Deletions: p.Deletions, ChangedFiles: p.ChangedFiles}
	}
	return j, nil
}

// branch renders a head or base; a deleted head repository has a null
// repo and the user of the base's owner.
func (r *renderer) branch(ctx context.Context, repo *repos.Repository, ref, sha string) (branchJSON, error) {
	j, err := r.repo(ctx, repo)
	if err != nil || repo == nil {
		return branchJSON{Label: "unknown:" + ref, Ref: ref, SHA: sha}, err
	}
	return branchJSON{Label: repo.Owner.Login + ":" + ref, Ref: ref, SHA: sha, User: accounts.ToSimpleUser(r.base, repo.Owner), Repo: j}, nil
}
