package repos

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"forgeapi/internal/apierr"
)

// Settings are a repository's settings that the repository object shows
// and that creation and PATCH set, with the platform's names. forgeapi
// keeps and shows them; what acts on them is in docs/repositories.md
// (the merge settings do not yet restrict merges, the has_* flags do not
// hide the features they name).
type Settings struct {
	Homepage                 string `json:"homepage"`
	HasIssues                bool   `json:"has_issues"`
	HasProjects              bool   `json:"has_projects"`
	HasWiki                  bool   `json:"has_wiki"`
	HasDiscussions           bool   `json:"has_discussions"`
	AllowSquashMerge         bool   `json:"allow_squash_merge"`
	AllowMergeCommit         bool   `json:"allow_merge_commit"`
	AllowRebaseMerge         bool   `json:"allow_rebase_merge"`
	AllowAutoMerge           bool   `json:"allow_auto_merge"`
	DeleteBranchOnMerge      bool   `json:"delete_branch_on_merge"`
	AllowUpdateBranch        bool   `json:"allow_update_branch"`
	UseSquashPRTitle         bool   `json:"use_squash_pr_title_as_default"`
	SquashMergeCommitTitle   string `json:"squash_merge_commit_title"`
	SquashMergeCommitMessage string `json:"squash_merge_commit_message"`
	MergeCommitTitle         string `json:"merge_commit_title"`
	MergeCommitMessage       string `json:"merge_commit_message"`
	AllowForking             bool   `json:"allow_forking"`
	WebCommitSignoffRequired bool   `json:"web_commit_signoff_required"`
}

// DefaultSettings are the settings of a new repository, the platform's.
func DefaultSettings() Settings {
	return Settings{HasIssues: true, HasProjects: true, HasWiki: true, AllowSquashMerge: true,
		AllowMergeCommit: true, AllowRebaseMerge: true, SquashMergeCommitTitle: "COMMIT_OR_PR_TITLE",
		SquashMergeCommitMessage: "COMMIT_MESSAGES", MergeCommitTitle: "MERGE_MESSAGE",
		MergeCommitMessage: "PR_TITLE", AllowForking: true}
}

// parseSettings reads the settings column: DefaultSettings with the keys
// it has.
func parseSettings(raw string) (Settings, error) {
	s := DefaultSettings()
	if raw == "" || raw == "{}" {
		return s, nil
	}
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		return s, fmt.Errorf("repository settings: %w", err)
	}
	return s, nil
}

// encode is the settings column's value.
func (s Settings) encode() string {
	b, _ := json.Marshal(s) // a struct of strings and bools always encodes
	return string(b)
}

// SettingsChanges are the settings a creation or PATCH sends; nil fields
// stay as they are.
type SettingsChanges struct {
	Homepage                 *string `json:"homepage"`
	HasIssues                *bool   `json:"has_issues"`
	HasProjects              *bool   `json:"has_projects"`
	HasWiki                  *bool   `json:"has_wiki"`
	HasDiscussions           *bool   `json:"has_discussions"`
	AllowSquashMerge         *bool   `json:"allow_squash_merge"`
	AllowMergeCommit         *bool   `json:"allow_merge_commit"`
	AllowRebaseMerge         *bool   `json:"allow_rebase_merge"`
	AllowAutoMerge           *bool   `json:"allow_auto_merge"`
	DeleteBranchOnMerge      *bool   `json:"delete_branch_on_merge"`
	AllowUpdateBranch        *bool   `json:"allow_update_branch"`
	UseSquashPRTitle         *bool   `json:"use_squash_pr_title_as_default"`
	SquashMergeCommitTitle   *string `json:"squash_merge_commit_title"`
	SquashMergeCommitMessage *string `json:"squash_merge_commit_message"`
	MergeCommitTitle         *string `json:"merge_commit_title"`
	MergeCommitMessage       *string `json:"merge_commit_message"`
	AllowForking             *bool   `json:"allow_forking"`
	WebCommitSignoffRequired *bool   `json:"web_commit_signoff_required"`
}

// The values the platform accepts for the merge commit settings.
var (
	squashTitles   = []string{"PR_TITLE", "COMMIT_OR_PR_TITLE"}
	squashMessages = []string{"PR_BODY", "COMMIT_MESSAGES", "BLANK"}
	mergeTitles    = []string{"PR_TITLE", "MERGE_MESSAGE"}
	mergeMessages  = []string{"PR_BODY", "PR_TITLE", "BLANK"}
)

// validate adds the field errors of values the platform refuses.
func (c *SettingsChanges) validate(fields *apierr.Fields) {
	for _, f := range []struct {
		name  string
		v     *string
		allow []string
	}{
		{"squash_merge_commit_title", c.SquashMergeCommitTitle, squashTitles},
		{"squash_merge_commit_message", c.SquashMergeCommitMessage, squashMessages},
		{"merge_commit_title", c.MergeCommitTitle, mergeTitles},
		{"merge_commit_message", c.MergeCommitMessage, mergeMessages},
	} {
		if f.v != nil && !slices.Contains(f.allow, *f.v) {
			fields.Add(resource, f.name, apierr.CodeInvalid)
		}
	}
	if c.Homepage != nil {
		fields.MaxLength(resource, "homepage", *c.Homepage, 255)
	}
}

// empty reports whether the changes set nothing.
func (c *SettingsChanges) empty() bool { return c == nil || *c == SettingsChanges{} }

// apply returns s with the changes set.
func (c *SettingsChanges) apply(s Settings) Settings {
	if c == nil {
		return s
	}
	for _, f := range []struct {
		dst *bool
		v   *bool
	}{
		{&s.HasIssues, c.HasIssues}, {&s.HasProjects, c.HasProjects}, {&s.HasWiki, c.HasWiki},
		{&s.HasDiscussions, c.HasDiscussions}, {&s.AllowSquashMerge, c.AllowSquashMerge},
		{&s.AllowMergeCommit, c.AllowMergeCommit}, {&s.AllowRebaseMerge, c.AllowRebaseMerge},
		{&s.AllowAutoMerge, c.AllowAutoMerge}, {&s.DeleteBranchOnMerge, c.DeleteBranchOnMerge},
		{&s.AllowUpdateBranch, c.AllowUpdateBranch}, {&s.UseSquashPRTitle, c.UseSquashPRTitle},
		{&s.AllowForking, c.AllowForking}, {&s.WebCommitSignoffRequired, c.WebCommitSignoffRequired},
	} {
		if f.v != nil {
			*f.dst = *f.v
		}
	}
	for _, f := range []struct {
		dst *string
		v   *string
	}{
		{&s.Homepage, c.Homepage}, {&s.SquashMergeCommitTitle, c.SquashMergeCommitTitle},
		{&s.SquashMergeCommitMessage, c.SquashMergeCommitMessage}, {&s.MergeCommitTitle, c.MergeCommitTitle},
		{&s.MergeCommitMessage, c.MergeCommitMessage},
	} {
		if f.v != nil {
			*f.dst = *f.v
		}
	}
	return s
}

// The platform's limits of a repository's topics.
const (
	MaxTopics      = 20
	MaxTopicLength = 50
)

var topicPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

// NormalizeTopics checks the names of a PUT .../topics, as the platform
// does: each lower-cased, starting with a letter or digit, of letters,
// digits and hyphens, at most MaxTopicLength characters; at most
// MaxTopics of them. Duplicates are dropped, the first kept. An invalid
// name is the platform's 422 with the names in its message.
func NormalizeTopics(names []string) ([]string, error) {
	out := make([]string, 0, len(names))
	var bad []string
	for _, n := range names {
		n = strings.ToLower(strings.TrimSpace(n))
		if len(n) > MaxTopicLength || !topicPattern.MatchString(n) {
			bad = append(bad, n)
			continue
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	if len(bad) > 0 {
		return nil, apierr.Validation(apierr.FieldError{Resource: "Topic", Field: "name", Code: apierr.CodeInvalid,
			Message: fmt.Sprintf("%s is not a valid topic. Topics must start with a lowercase letter or number, "+
				"consist of %d characters or less, and can include hyphens.", strings.Join(quoteAll(bad), ", "), MaxTopicLength)})
	}
	if len(out) > MaxTopics {
		return nil, apierr.Validation(apierr.FieldError{Resource: "Repository", Field: "topics", Code: apierr.CodeInvalid,
			Message: fmt.Sprintf("A repository cannot have more than %d topics.", MaxTopics)})
	}
	return out, nil
}

func quoteAll(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = fmt.Sprintf("%q", v)
	}
	return out
}

// parseTopics reads the topics column (names separated by spaces).
func parseTopics(raw string) []string {
	if raw == "" {
		return []string{}
	}
	return strings.Fields(raw)
}
