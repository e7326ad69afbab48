package repos

import (
	"context"
	"strconv"
	"strings"

	"forgeapi/internal/accounts"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/wire"
)

// Permissions is the caller's access to a repository, as the platform
// reports it.
type Permissions struct {
	Admin    bool `json:"admin"`
	Maintain bool `json:"maintain"`
	Push     bool `json:"push"`
	Triage   bool `json:"triage"`
	Pull     bool `json:"pull"`
}

// PermissionsFor renders a role.
func PermissionsFor(role auth.Role) *Permissions {
	return &Permissions{Admin: role >= auth.RoleAdmin, Maintain: role >= auth.RoleAdmin,
		Push: role >= auth.RoleWrite, Triage: role >= auth.RoleWrite, Pull: role >= auth.RoleRead}
}

// License is a repository's license object (license-simple): see
// LicenseOf.
type License struct {
	Key     string  `json:"key"`
	Name    string  `json:"name"`
	SpdxID  string  `json:"spdx_id"`
	URL     *string `json:"url"`
	NodeID  string  `json:"node_id"`
	HTMLURL string  `json:"html_url,omitempty"`
}

// Stats are the counters of a repository object.
type Stats struct {
	Stargazers  int
	Subscribers int
	Forks       int
	// OpenIssues counts the open issues and open pull requests, as the
	// platform's open_issues_count does.
	OpenIssues int
	// SizeKB is the size of the git data in KB (git count-objects' size
	// plus size-pack) as last measured: after the latest recorded push,
	// the fork's creation, pull request test merge or git maintenance.
	SizeKB int
	// Network is the forks_count of the root of the repository's fork
	// network (the repository source names; its own for a repository
	// that is not a fork).
	Network int
	// LicenseKey is the license detected on the default branch (the
	// licenses area keeps it in repository_licenses): a key of the
	// platform's list, "other", or "" for none.
	LicenseKey string
}

// JSON is the platform's full repository object.
type JSON struct {
	ID                  int64               `json:"id"`
	NodeID              string              `json:"node_id"`
	Name                string              `json:"name"`
	FullName            string              `json:"full_name"`
	Owner               accounts.SimpleUser `json:"owner"`
	Private             bool                `json:"private"`
	HTMLURL             string              `json:"html_url"`
	Description         *string             `json:"description"`
	Fork                bool                `json:"fork"`
	URL                 string              `json:"url"`
	ArchiveURL          string              `json:"archive_url"`
	AssigneesURL        string              `json:"assignees_url"`
	BlobsURL            string              `json:"blobs_url"`
	BranchesURL         string              `json:"branches_url"`
	CollaboratorsURL    string              `json:"collaborators_url"`
	CommentsURL         string              `json:"comments_url"`
	CommitsURL          string              `json:"commits_url"`
	CompareURL          string              `json:"compare_url"`
	ContentsURL         string              `json:"contents_url"`
	ContributorsURL     string              `json:"contributors_url"`
	DeploymentsURL      string              `json:"deployments_url"`
	DownloadsURL        string              `json:"downloads_url"`
	EventsURL           string              `json:"events_url"`
	ForksURL            string              `json:"forks_url"`
	GitCommitsURL       string              `json:"git_commits_url"`
	GitRefsURL          string              `json:"git_refs_url"`
	GitTagsURL          string              `json:"git_tags_url"`
	GitURL              string              `json:"git_url"`
	IssueCommentURL     string              `json:"issue_comment_url"`
	IssueEventsURL      string              `json:"issue_events_url"`
	IssuesURL           string              `json:"issues_url"`
	KeysURL             string              `json:"keys_url"`
	LabelsURL           string              `json:"labels_url"`
	LanguagesURL        string              `json:"languages_url"`
	MergesURL           string              `json:"merges_url"`
	MilestonesURL       string              `json:"milestones_url"`
	NotificationsURL    string              `json:"notifications_url"`
	PullsURL            string              `json:"pulls_url"`
	ReleasesURL         string              `json:"releases_url"`
	SSHURL              string              `json:"ssh_url"`
	StargazersURL       string              `json:"stargazers_url"`
	StatusesURL         string              `json:"statuses_url"`
	SubscribersURL      string              `json:"subscribers_url"`
	SubscriptionURL     string              `json:"subscription_url"`
	TagsURL             string              `json:"tags_url"`
	TeamsURL            string              `json:"teams_url"`
	TreesURL            string              `json:"trees_url"`
	CloneURL            string              `json:"clone_url"`
	MirrorURL           *string             `json:"mirror_url"`
	HooksURL            string              `json:"hooks_url"`
	SvnURL              string              `json:"svn_url"`
	Homepage            *string             `json:"homepage"`
	Language            *string             `json:"language"`
	ForksCount          int                 `json:"forks_count"`
	StargazersCount     int                 `json:"stargazers_count"`
	WatchersCount       int                 `json:"watchers_count"`
	Size                int                 `json:"size"`
	DefaultBranch       string              `json:"default_branch"`
	OpenIssuesCount     int                 `json:"open_issues_count"`
	IsTemplate          bool                `json:"is_template"`
	Topics              []string            `json:"topics"`
	HasIssues           bool                `json:"has_issues"`
	HasProjects         bool                `json:"has_projects"`
	HasWiki             bool                `json:"has_wiki"`
	HasPages            bool                `json:"has_pages"`
	HasDownloads        bool                `json:"has_downloads"`
	HasDiscussions      bool                `json:"has_discussions"`
	Archived            bool                `json:"archived"`
	Disabled            bool                `json:"disabled"`
	Visibility          string              `json:"visibility"`
	PushedAt            *wire.Time          `json:"pushed_at"`
	CreatedAt           wire.Time           `json:"created_at"`
	UpdatedAt           wire.Time           `json:"updated_at"`
	Permissions         *Permissions        `json:"permissions,omitempty"`
	AllowRebaseMerge    bool                `json:"allow_rebase_merge"`
	TemplateRepository  *JSON               `json:"template_repository"`
	TempCloneToken      *string             `json:"temp_clone_token,omitempty"`
	AllowSquashMerge    bool                `json:"allow_squash_merge"`
	AllowAutoMerge      bool                `json:"allow_auto_merge"`
	DeleteBranchOnMerge bool                `json:"delete_branch_on_merge"`
	AllowMergeCommit    bool                `json:"allow_merge_commit"`
	// The settings the platform added to the object (see Settings).
	AllowUpdateBranch         bool                 `json:"allow_update_branch"`
	UseSquashPRTitleAsDefault bool                 `json:"use_squash_pr_title_as_default"`
	SquashMergeCommitTitle    string               `json:"squash_merge_commit_title"`
	SquashMergeCommitMessage  string               `json:"squash_merge_commit_message"`
	MergeCommitTitle          string               `json:"merge_commit_title"`
	MergeCommitMessage        string               `json:"merge_commit_message"`
	AllowForking              bool                 `json:"allow_forking"`
	WebCommitSignoffRequired  bool                 `json:"web_commit_signoff_required"`
	SubscribersCount          int                  `json:"subscribers_count"`
	NetworkCount              int                  `json:"network_count"`
	License                   *License             `json:"license"`
	Forks                     int                  `json:"forks"`
	OpenIssues                int                  `json:"open_issues"`
	Watchers                  int                  `json:"watchers"`
	Organization              *accounts.SimpleUser `json:"organization,omitempty"`
	SecurityAndAnalysis       *SecurityAndAnalysis `json:"security_and_analysis,omitempty"`
	// Parent and Source are, for a fork shown alone, the repository it
	// was forked from and the root of its network.
	Parent *JSON `json:"parent,omitempty"`
	Source *JSON `json:"source,omitempty"`
}

// SimpleJSON is the platform's simple-repository object (the repository
// objects API version 2026-03-10 puts in migrations): the full object's
// fields from id to hooks_url, in the same order, without the clone
// addresses (git_url, ssh_url, clone_url, mirror_url). Build it with
// JSON.Simple; it renders through AppendJSON, and MarshalJSON for
// encoding/json.
type SimpleJSON struct{ full *JSON }

// Simple returns the simple-repository object of the repository; it
// shares j, so later changes to j show in it.
func (j *JSON) Simple() SimpleJSON { return SimpleJSON{full: j} }

// SecurityAndAnalysis reports the advanced security flag (shown to admins).
type SecurityAndAnalysis struct {
	AdvancedSecurity struct {
		Status string `json:"status"`
	} `json:"advanced_security"`
}

// URLs are the server's public addresses a repository object names: the
// API base URL, and the port git over SSH listens on (0 when it is off).
type URLs struct {
	Base    string
	SSHPort int
}

// URLsOf returns the addresses an API request's context carries
// (httpapi.BaseURL and httpapi.SSHPort).
func URLsOf(ctx context.Context) URLs {
	return URLs{Base: httpapi.BaseURL(ctx), SSHPort: httpapi.SSHPort(ctx)}
}

// SSHURL is the repository's git address over SSH (ssh_url) on the web
// base's host: "git@HOST:OWNER/NAME.git" on port 22 or when git over SSH
// is off, "ssh://git@HOST:PORT/OWNER/NAME.git" on any other port, as
// self-managed installs print it.
func SSHURL(u URLs, fullName string) string {
	host := hostOf(accounts.WebBase(u.Base))
	if u.SSHPort == 0 || u.SSHPort == 22 {
		return "git@" + host + ":" + fullName + ".git"
	}
	return "ssh://git@" + host + ":" + strconv.Itoa(u.SSHPort) + "/" + fullName + ".git"
}

// ToJSON renders the repository under u. role, when not RoleNone, adds
// the caller's permissions.
func ToJSON(u URLs, r *Repository, st Stats, role auth.Role) JSON {
	base := u.Base
	api := base + "/repos/" + r.FullName()
	web := accounts.WebBase(base) + "/" + r.FullName()
	j := JSON{
		ID: r.ID, NodeID: wire.NodeID("R", r.ID), Name: r.Name, FullName: r.FullName(),
		Owner: accounts.ToSimpleUser(base, r.Owner), Private: r.Private, HTMLURL: web,
		Description: optional(r.Description), Fork: r.ForkOfID != 0, URL: api,
		ArchiveURL: api + "/{archive_format}{/ref}", AssigneesURL: api + "/assignees{/user}",
		BlobsURL: api + "/git/blobs{/sha}", BranchesURL: api + "/branches{/branch}",
		CollaboratorsURL: api + "/collaborators{/collaborator}", CommentsURL: api + "/comments{/number}",
		CommitsURL: api + "/commits{/sha}", CompareURL: api + "/compare/{base}...{head}",
		ContentsURL: api + "/contents/{+path}", ContributorsURL: api + "/contributors",
		DeploymentsURL: api + "/deployments", DownloadsURL: api + "/downloads", EventsURL: api + "/events",
		ForksURL: api + "/forks", GitCommitsURL: api + "/git/commits{/sha}", GitRefsURL: api + "/git/refs{/sha}",
		GitTagsURL: api + "/git/tags{/sha}", GitURL: "git:" + trimScheme(web) + ".git",
		IssueCommentURL: api + "/issues/comments{/number}", IssueEventsURL: api + "/issues/events{/number}",
		IssuesURL: api + "/issues{/number}", KeysURL: api + "/keys{/key_id}", LabelsURL: api + "/labels{/name}",
		LanguagesURL: api + "/languages", MergesURL: api + "/merges", MilestonesURL: api + "/milestones{/number}",
		NotificationsURL: api + "/notifications{?since,all,participating}", PullsURL: api + "/pulls{/number}",
		ReleasesURL: api + "/releases{/id}", SSHURL: SSHURL(u, r.FullName()),
		StargazersURL: api + "/stargazers", StatusesURL: api + "/statuses/{sha}", SubscribersURL: api + "/subscribers",
		SubscriptionURL: api + "/subscription", TagsURL: api + "/tags", TeamsURL: api + "/teams",
		TreesURL: api + "/git/trees{/sha}", CloneURL: web + ".git", HooksURL: api + "/hooks", SvnURL: web,
		ForksCount: st.Forks, StargazersCount: st.Stargazers, WatchersCount: st.Stargazers, Size: st.SizeKB,
		DefaultBranch: r.DefaultBranch, Topics: []string{}, HasIssues: true, HasProjects: true, HasWiki: true,
		HasDownloads: true, Visibility: r.Visibility(), PushedAt: pushedAt(r),
		CreatedAt: wire.T(r.CreatedAt), UpdatedAt: wire.T(r.UpdatedAt), AllowRebaseMerge: true,
		AllowSquashMerge: true, AllowMergeCommit: true, SubscribersCount: st.Subscribers,
		NetworkCount: st.Network, Forks: st.Forks, Watchers: st.Stargazers,
		OpenIssuesCount: st.OpenIssues, OpenIssues: st.OpenIssues, License: LicenseOf(base, st.LicenseKey),
	}
	j.setSettings(r)
	if role != auth.RoleNone {
		j.Permissions = PermissionsFor(role)
	}
	if r.Owner.IsOrg() {
		org := accounts.ToSimpleUser(base, r.Owner)
		j.Organization = &org
	}
	if role >= auth.RoleAdmin {
		s := &SecurityAndAnalysis{}
		s.AdvancedSecurity.Status = "disabled"
		if r.AdvancedSecurity {
			s.AdvancedSecurity.Status = "enabled"
		}
		j.SecurityAndAnalysis = s
	}
	return j
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func trimScheme(u string) string {
	for _, p := range []string{"https:", "http:"} {
		if len(u) > len(p) && u[:len(p)] == p {
			return u[len(p):]
		}
	}
	return u
}

// hostOf is the host of a URL, an IPv6 literal in its brackets.
func hostOf(u string) string {
	s := trimScheme(u)
	for len(s) > 0 && s[0] == '/' {
		s = s[1:]
	}
	if len(s) > 0 && s[0] == '[' {
		if i := strings.IndexByte(s, ']'); i >= 0 {
			return s[:i+1]
		}
	}
	for i := 0; i < len(s); i++ {
		if s[i] == '/' || s[i] == ':' {
			return s[:i]
		}
	}
	return s
}

// pushedAt is the repository's pushed_at: its last push, or its creation
// when nothing was pushed yet, as the platform shows a new repository.
func pushedAt(r *Repository) *wire.Time {
	if r.PushedAt != nil {
		return wire.TP(r.PushedAt)
	}
	return wire.TP(&r.CreatedAt)
}

// setSettings shows the repository's settings, topics and template flag.
func (j *JSON) setSettings(r *Repository) {
	s := r.Settings
	j.Homepage = optional(s.Homepage)
	j.HasIssues, j.HasProjects, j.HasWiki, j.HasDiscussions = s.HasIssues, s.HasProjects, s.HasWiki, s.HasDiscussions
	j.AllowSquashMerge, j.AllowMergeCommit, j.AllowRebaseMerge = s.AllowSquashMerge, s.AllowMergeCommit, s.AllowRebaseMerge
	j.AllowAutoMerge, j.DeleteBranchOnMerge, j.AllowUpdateBranch = s.AllowAutoMerge, s.DeleteBranchOnMerge, s.AllowUpdateBranch
	j.UseSquashPRTitleAsDefault = s.UseSquashPRTitle
	j.SquashMergeCommitTitle, j.SquashMergeCommitMessage = s.SquashMergeCommitTitle, s.SquashMergeCommitMessage
	j.MergeCommitTitle, j.MergeCommitMessage = s.MergeCommitTitle, s.MergeCommitMessage
	j.AllowForking, j.WebCommitSignoffRequired = s.AllowForking, s.WebCommitSignoffRequired
	j.IsTemplate = r.IsTemplate
	j.Archived = r.Archived
	if r.Topics != nil {
		j.Topics = r.Topics
	}
}
