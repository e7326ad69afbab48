package issues

import (
	"encoding/json"
	"net/url"
	"strconv"

	"forgeapi/internal/accounts"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/reactions"
	"forgeapi/internal/repos"
	"forgeapi/internal/wire"
)

// issueJSON is the platform's issue object.
type issueJSON struct {
	ID                int64                 `json:"id"`
	NodeID            string                `json:"node_id"`
	URL               string                `json:"url"`
	RepositoryURL     string                `json:"repository_url"`
	LabelsURL         string                `json:"labels_url"`
	CommentsURL       string                `json:"comments_url"`
	EventsURL         string                `json:"events_url"`
	HTMLURL           string                `json:"html_url"`
	TimelineURL       string                `json:"timeline_url"`
	Number            int64                 `json:"number"`
	State             string                `json:"state"`
	StateReason       *string               `json:"state_reason"`
	Title             string                `json:"title"`
	Body              *string               `json:"body"`
	User              *accounts.SimpleUser  `json:"user"`
	Labels            []labelJSON           `json:"labels"`
	Assignee          *accounts.SimpleUser  `json:"assignee"`
	Assignees         []accounts.SimpleUser `json:"assignees"`
	Milestone         *milestoneJSON        `json:"milestone"`
	Locked            bool                  `json:"locked"`
	ActiveLockReason  *string               `json:"active_lock_reason"`
	Comments          int                   `json:"comments"`
	PullRequest       *pullRequestRef       `json:"pull_request,omitempty"`
	ClosedAt          *wire.Time            `json:"closed_at"`
	CreatedAt         wire.Time             `json:"created_at"`
	UpdatedAt         wire.Time             `json:"updated_at"`
	ClosedBy          *accounts.SimpleUser  `json:"closed_by"`
	AuthorAssociation string                `json:"author_association"`
	Reactions         reactions.Rollup      `json:"reactions"`
	ViaApp            *struct{}             `json:"performed_via_github_app"`
	Dependencies      dependenciesJSON      `json:"issue_dependencies_summary"`
	// Repository is set in the lists across repositories.
	Repository *repos.JSON `json:"repository,omitempty"`
}

// dependenciesJSON is the platform's issue-dependencies-summary: the
// open issues blocking the issue and open issues it blocks, and the
// totals.
type dependenciesJSON struct {
	BlockedBy      int `json:"blocked_by"`
	Blocking       int `json:"blocking"`
	TotalBlockedBy int `json:"total_blocked_by"`
	TotalBlocking  int `json:"total_blocking"`
}

// pullRequestRef is the pull_request key of an issue that is a pull
// request.
type pullRequestRef struct {
	URL      string     `json:"url"`
	HTMLURL  string     `json:"html_url"`
	DiffURL  string     `json:"diff_url"`
	PatchURL string     `json:"patch_url"`
	MergedAt *wire.Time `json:"merged_at"`
}

// labelJSON is the platform's label object.
type labelJSON struct {
	ID          int64   `json:"id"`
	NodeID      string  `json:"node_id"`
	URL         string  `json:"url"`
	Name        string  `json:"name"`
	Color       string  `json:"color"`
	Default     bool    `json:"default"`
	Description *string `json:"description"`
}

// milestoneJSON is the platform's milestone object.
type milestoneJSON struct {
	URL          string               `json:"url"`
	HTMLURL      string               `json:"html_url"`
	LabelsURL    string               `json:"labels_url"`
	ID           int64                `json:"id"`
	NodeID       string               `json:"node_id"`
	Number       int64                `json:"number"`
	State        string               `json:"state"`
	Title        string               `json:"title"`
	Description  *string              `json:"description"`
	Creator      *accounts.SimpleUser `json:"creator"`
	OpenIssues   int                  `json:"open_issues"`
	ClosedIssues int                  `json:"closed_issues"`
	CreatedAt    wire.Time            `json:"created_at"`
	UpdatedAt    wire.Time            `json:"updated_at"`
	ClosedAt     *wire.Time           `json:"closed_at"`
	DueOn        *wire.Time           `json:"due_on"`
}

// commentJSON is the platform's issue-comment object.
type commentJSON struct {
	ID                int64                `json:"id"`
	NodeID            string               `json:"node_id"`
	URL               string               `json:"url"`
	HTMLURL           string               `json:"html_url"`
	IssueURL          string               `json:"issue_url"`
	Body              string               `json:"body"`
	User              *accounts.SimpleUser `json:"user"`
	CreatedAt         wire.Time            `json:"created_at"`
	UpdatedAt         wire.Time            `json:"updated_at"`
	AuthorAssociation string               `json:"author_association"`
	Reactions         reactions.Rollup     `json:"reactions"`
	ViaApp            *struct{}            `json:"performed_via_github_app"`
}

// urls are a repository's API and web addresses.
type urls struct{ base, api, web string }

func urlsOf(base string, repo *repos.Repository) urls {
	return urls{base: base, api: base + "/repos/" + repo.FullName(), web: httpapi.WebBase(base) + "/" + repo.FullName()}
}

func simpleUser(base string, a *accounts.Account) *accounts.SimpleUser {
	if a == nil {
		return nil
	}
	u := accounts.ToSimpleUser(base, a)
	return &u
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func toIssueJSON(u urls, is *Issue) issueJSON {
	n := strconv.FormatInt(is.Number, 10)
	api := u.api + "/issues/" + n
	j := issueJSON{ID: is.ID, NodeID: wire.NodeID("I", is.ID), URL: api, RepositoryURL: u.api,
		LabelsURL: api + "/labels{/name}", CommentsURL: api + "/comments", EventsURL: api + "/events",
		HTMLURL: u.web + "/issues/" + n, TimelineURL: api + "/timeline", Number: is.Number, State: is.State,
		StateReason: optional(is.StateReason), Title: is.Title, Body: optional(is.Body), User: simpleUser(u.base, is.User),
		Labels: make([]labelJSON, 0, len(is.Labels)), Assignees: make([]accounts.SimpleUser, 0, len(is.Assignees)),
		Locked: is.Locked, ActiveLockReason: optional(is.LockReason), Comments: is.Comments,
		ClosedAt: wire.TP(is.ClosedAt), CreatedAt: wire.T(is.CreatedAt), UpdatedAt: wire.T(is.UpdatedAt),
		ClosedBy: simpleUser(u.base, is.ClosedBy), AuthorAssociation: is.Association, Reactions: is.Reactions.Rollup(api),
		Dependencies: dependenciesJSON{BlockedBy: is.Dependencies.BlockedBy, Blocking: is.Dependencies.Blocking,
			TotalBlockedBy: is.Dependencies.TotalBlockedBy, TotalBlocking: is.Dependencies.TotalBlocking}}
	for _, lb := range is.Labels {
		j.Labels = append(j.Labels, toLabelJSON(u, lb))
	}
	for _, a := range is.Assignees {
		j.Assignees = append(j.Assignees, accounts.ToSimpleUser(u.base, a))
	}
	if len(j.Assignees) > 0 {
		j.Assignee = &j.Assignees[0]
	}
	if is.Milestone != nil {
		m := toMilestoneJSON(u, is.Milestone)
		j.Milestone = &m
	}
	if is.PullRequest {
		j.PullRequest = &pullRequestRef{URL: u.api + "/pulls/" + n, HTMLURL: u.web + "/pull/" + n,
			DiffURL: u.web + "/pull/" + n + ".diff", PatchURL: u.web + "/pull/" + n + ".patch", MergedAt: wire.TP(is.MergedAt)}
	}
	return j
}

func toLabelJSON(u urls, lb *Label) labelJSON {
	return labelJSON{ID: lb.ID, NodeID: wire.NodeID("LA", lb.ID), URL: u.api + "/labels/" + pathEscape(lb.Name),
		Name: lb.Name, Color: lb.Color, Default: lb.Default, Description: optional(lb.Description)}
}

func toMilestoneJSON(u urls, m *Milestone) milestoneJSON {
	n := strconv.FormatInt(m.Number, 10)
	return milestoneJSON{URL: u.api + "/milestones/" + n, HTMLURL: u.web + "/milestone/" + n,
		LabelsURL: u.api + "/milestones/" + n + "/labels", ID: m.ID, NodeID: wire.NodeID("MI", m.ID), Number: m.Number,
		State: m.State, Title: m.Title, Description: optional(m.Description), Creator: simpleUser(u.base, m.Creator),
		OpenIssues: m.OpenIssues, ClosedIssues: m.ClosedIssues, CreatedAt: wire.T(m.CreatedAt), UpdatedAt: wire.T(m.UpdatedAt),
		ClosedAt: wire.TP(m.ClosedAt), DueOn: wire.TP(m.DueOn)}
}

func toCommentJSON(u urls, c *Comment) commentJSON {
	id := strconv.FormatInt(c.ID, 10)
	api := u.api + "/issues/comments/" + id
	return commentJSON{ID: c.ID, NodeID: wire.NodeID("IC", c.ID), URL: api,
		HTMLURL:  u.web + "/issues/" + strconv.FormatInt(c.IssueNumber, 10) + "#issuecomment-" + id,
		IssueURL: u.api + "/issues/" + strconv.FormatInt(c.IssueNumber, 10), Body: c.Body, User: simpleUser(u.base, c.User),
		CreatedAt: wire.T(c.CreatedAt), UpdatedAt: wire.T(c.UpdatedAt), AuthorAssociation: c.Association, Reactions: c.Reactions.Rollup(api)}
}

// pathEscape escapes a label name for a URL path segment.
func pathEscape(s string) string { return url.PathEscape(s) }

// eventJSON is the platform's issue-event object (the issue only in the
// repository's list and a single event).
type eventJSON struct {
	ID           int64                `json:"id"`
	NodeID       string               `json:"node_id"`
	URL          string               `json:"url"`
	Actor        *accounts.SimpleUser `json:"actor"`
	Event        string               `json:"event"`
	CommitID     *string              `json:"commit_id"`
	CommitURL    *string              `json:"commit_url"`
	CreatedAt    wire.Time            `json:"created_at"`
	Label        *eventLabelJSON      `json:"label,omitempty"`
	Assignee     *accounts.SimpleUser `json:"assignee,omitempty"`
	Assigner     *accounts.SimpleUser `json:"assigner,omitempty"`
	Milestone    *eventMilestoneJSON  `json:"milestone,omitempty"`
	Rename       *eventRenameJSON     `json:"rename,omitempty"`
	LockReason   json.RawMessage      `json:"lock_reason,omitempty"` // a string or null, for locked only
	StateReason  *string              `json:"state_reason,omitempty"`
	Issue        *issueJSON           `json:"issue,omitempty"`
	PerformedVia *struct{}            `json:"performed_via_github_app"`
}

type eventLabelJSON struct {
	Name  string `json:"name"`
	Color string `json:"color"`
}

type eventMilestoneJSON struct {
	Title string `json:"title"`
}

type eventRenameJSON struct {
	From string `json:"from"`
	To   string `json:"to"`
}

func toEventJSON(u urls, e *Event) eventJSON {
	j := eventJSON{ID: e.ID, NodeID: wire.NodeID("IE", e.ID), URL: u.api + "/issues/events/" + strconv.FormatInt(e.ID, 10),
		Actor: simpleUser(u.base, e.Actor), Event: e.Event, CommitID: optional(e.CommitID), CreatedAt: wire.T(e.CreatedAt)}
	if e.CommitID != "" {
		j.CommitURL = optional(u.api + "/commits/" + e.CommitID)
	}
	switch e.Event {
	case "labeled", "unlabeled":
		j.Label = &eventLabelJSON{Name: e.LabelName, Color: e.LabelColor}
	case "assigned", "unassigned":
		j.Assignee, j.Assigner = simpleUser(u.base, e.Assignee), simpleUser(u.base, e.Actor)
	case "milestoned", "demilestoned":
		j.Milestone = &eventMilestoneJSON{Title: e.MilestoneTitle}
	case "renamed":
		j.Rename = &eventRenameJSON{From: e.RenameFrom, To: e.RenameTo}
	case "locked":
		j.LockReason, _ = json.Marshal(optional(e.LockReason))
	case "closed", "reopened":
		j.StateReason = optional(e.StateReason)
	}
	if e.issue != nil {
		is := toIssueJSON(u, e.issue)
		j.Issue = &is
	}
	return j
}

// timelineCommentJSON is a comment in an issue's timeline: the comment
// with event "commented" and its author as actor.
type timelineCommentJSON struct {
	Event string               `json:"event"`
	Actor *accounts.SimpleUser `json:"actor"`
	commentJSON
}
