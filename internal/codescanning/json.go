package codescanning

import (
	"fmt"
	"net/url"

	"forgeapi/internal/accounts"
	"forgeapi/internal/repos"
	"forgeapi/internal/wire"
)

// alertJSON is the platform's code-scanning-alert (code-scanning-alert-
// items in lists; with Repository, the organization's items).
type alertJSON struct {
	Number             int64                 `json:"number"`
	CreatedAt          wire.Time             `json:"created_at"`
	UpdatedAt          wire.Time             `json:"updated_at"`
	URL                string                `json:"url"`
	HTMLURL            string                `json:"html_url"`
	InstancesURL       string                `json:"instances_url"`
	State              string                `json:"state"`
	FixedAt            *wire.Time            `json:"fixed_at"`
	DismissedBy        *accounts.SimpleUser  `json:"dismissed_by"`
	DismissedAt        *wire.Time            `json:"dismissed_at"`
	DismissedReason    *string               `json:"dismissed_reason"`
	DismissedComment   *string               `json:"dismissed_comment"`
	Rule               ruleJSON              `json:"rule"`
	Tool               toolJSON              `json:"tool"`
	MostRecentInstance *instanceJSON         `json:"most_recent_instance"`
	Repository         *repos.SimpleJSON     `json:"repository,omitempty"`
	Assignees          []accounts.SimpleUser `json:"assignees"`
}

type ruleJSON struct {
	ID                    string   `json:"id"`
	Name                  string   `json:"name"`
	Severity              *string  `json:"severity"`
	SecuritySeverityLevel *string  `json:"security_severity_level"`
	Description           string   `json:"description"`
	FullDescription       string   `json:"full_description"`
	Tags                  []string `json:"tags"`
	Help                  *string  `json:"help"`
	HelpURI               *string  `json:"help_uri"`
}

type toolJSON struct {
	Name    string  `json:"name"`
	Version *string `json:"version"`
	GUID    *string `json:"guid"`
}

type messageJSON struct {
	Text string `json:"text"`
}

type locationJSON struct {
	Path        string `json:"path"`
	StartLine   int    `json:"start_line"`
	EndLine     int    `json:"end_line"`
	StartColumn int    `json:"start_column"`
	EndColumn   int    `json:"end_column"`
}

// instanceJSON is the platform's code-scanning-alert-instance.
type instanceJSON struct {
	Ref             string       `json:"ref"`
	AnalysisKey     string       `json:"analysis_key"`
	Environment     string       `json:"environment"`
	Category        string       `json:"category"`
	State           string       `json:"state"`
	CommitSHA       string       `json:"commit_sha"`
	Message         messageJSON  `json:"message"`
	Location        locationJSON `json:"location"`
	HTMLURL         string       `json:"html_url"`
	Classifications []string     `json:"classifications"`
}

// analysisJSON is the platform's code-scanning-analysis.
type analysisJSON struct {
	Ref          string    `json:"ref"`
	CommitSHA    string    `json:"commit_sha"`
	AnalysisKey  string    `json:"analysis_key"`
	Environment  string    `json:"environment"`
	Category     string    `json:"category"`
	Error        string    `json:"error"`
	CreatedAt    wire.Time `json:"created_at"`
	ResultsCount int       `json:"results_count"`
	RulesCount   int       `json:"rules_count"`
	ID           int64     `json:"id"`
	URL          string    `json:"url"`
	SARIFID      string    `json:"sarif_id"`
	Tool         toolJSON  `json:"tool"`
	Deletable    bool      `json:"deletable"`
	Warning      string    `json:"warning"`
}

// view renders one request's (or one event's) objects.
type view struct {
	base  string
	users map[int64]*accounts.Account
}

func (v view) api(repo *repos.Repository) string { return v.base + "/repos/" + repo.FullName() }

func (v view) web(repo *repos.Repository) string {
	return accounts.WebBase(v.base) + "/" + repo.FullName()
}

func (v view) user(id *int64) *accounts.SimpleUser {
	if id == nil || v.users[*id] == nil {
		return nil
	}
	u := accounts.ToSimpleUser(v.base, v.users[*id])
	return &u
}

// analysisKey is the analysis_key of uploads through the API, which name
// no workflow job.
const analysisKey = "(API upload)"

func (v view) alert(repo *repos.Repository, a *Alert, withRepo bool) alertJSON {
	u := fmt.Sprintf("%s/code-scanning/alerts/%d", v.api(repo), a.Number)
	j := alertJSON{
		Number: a.Number, CreatedAt: wire.T(a.CreatedAt), UpdatedAt: wire.T(a.UpdatedAt), URL: u,
		HTMLURL: fmt.Sprintf("%s/security/code-scanning/%d", v.web(repo), a.Number), InstancesURL: u + "/instances",
		State: a.State, FixedAt: wire.TP(a.FixedAt), DismissedBy: v.user(a.DismissedByID), DismissedAt: wire.TP(a.DismissedAt),
		DismissedReason: a.DismissedReason, DismissedComment: a.DismissedComment,
		Rule: ruleJSON{ID: a.Rule.ID, Name: a.Rule.Name, Severity: a.Rule.Severity, SecuritySeverityLevel: a.Rule.SecuritySeverityLevel,
			Description: a.Rule.Description, FullDescription: a.Rule.FullDescription, Tags: a.Rule.Tags, Help: a.Rule.Help,
			HelpURI: a.Rule.HelpURI},
		Tool:      toolJSON{Name: a.ToolName, Version: a.ToolVersion, GUID: a.ToolGUID},
		Assignees: []accounts.SimpleUser{},
	}
	if a.Recent != nil {
		in := v.instance(repo, a.Recent, a)
		j.MostRecentInstance = &in
	}
	if withRepo {
		full := repos.ToJSON(repos.URLs{Base: v.base}, repo, repos.Stats{}, 0)
		simple := full.Simple()
		j.Repository = &simple
	}
	return j
}

// instance renders an instance of the alert: dismissed when the alert
// is, else open while its analysis is the latest of its set, fixed
// after.
func (v view) instance(repo *repos.Repository, in *Instance, a *Alert) instanceJSON {
	state := StateFixed
	switch {
	case a.Dismissed:
		state = StateDismissed
	case in.Open:
		state = StateOpen
	}
	return instanceJSON{
		Ref: in.Analysis.Ref, AnalysisKey: analysisKey, Environment: "{}", Category: in.Analysis.Category, State: state,
		CommitSHA: in.Analysis.CommitSHA, Message: messageJSON{Text: in.Message},
		Location:        locationJSON{Path: in.Path, StartLine: in.StartLine, EndLine: in.EndLine, StartColumn: in.StartCol, EndColumn: in.EndCol},
		HTMLURL:         fmt.Sprintf("%s/security/code-scanning/%d?ref=%s", v.web(repo), a.Number, url.QueryEscape(in.Analysis.Ref)),
		Classifications: []string{},
	}
}

func (v view) analysis(repo *repos.Repository, an *Analysis) analysisJSON {
	return analysisJSON{
		Ref: an.Ref, CommitSHA: an.CommitSHA, AnalysisKey: analysisKey, Environment: "{}", Category: an.Category,
		CreatedAt: wire.T(an.CreatedAt), ResultsCount: an.ResultsCount, RulesCount: an.RulesCount, ID: an.ID,
		URL: fmt.Sprintf("%s/code-scanning/analyses/%d", v.api(repo), an.ID), SARIFID: an.SARIFID,
		Tool: toolJSON{Name: an.ToolName, Version: an.ToolVersion, GUID: an.ToolGUID}, Deletable: an.Deletable,
	}
}
