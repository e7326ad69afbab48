package checks

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apps"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// runJSON is the platform's check-run object; CheckSuite is {id} in
// REST answers and the simple-check-suite in webhook payloads.
type runJSON struct {
	ID           int64      `json:"id"`
	HeadSHA      string     `json:"head_sha"`
	NodeID       string     `json:"node_id"`
	ExternalID   string     `json:"external_id"`
	URL          string     `json:"url"`
	HTMLURL      string     `json:"html_url"`
	DetailsURL   string     `json:"details_url"`
	Status       string     `json:"status"`
	Conclusion   *string    `json:"conclusion"`
	StartedAt    *wire.Time `json:"started_at"`
	CompletedAt  *wire.Time `json:"completed_at"`
	Output       outputJSON `json:"output"`
	Name         string     `json:"name"`
	CheckSuite   any        `json:"check_suite"`
	App          any        `json:"app"`
	PullRequests []prJSON   `json:"pull_requests"`
}

type outputJSON struct {
	Title            *string `json:"title"`
	Summary          *string `json:"summary"`
	Text             *string `json:"text"`
	AnnotationsCount int     `json:"annotations_count"`
	AnnotationsURL   string  `json:"annotations_url"`
}

// suiteJSON is the platform's check-suite object (Repository nil in the
// webhook's, which puts the repository beside it).
type suiteJSON struct {
	ID                   int64           `json:"id"`
	NodeID               string          `json:"node_id"`
	HeadBranch           *string         `json:"head_branch"`
	HeadSHA              string          `json:"head_sha"`
	Status               string          `json:"status"`
	Conclusion           *string         `json:"conclusion"`
	URL                  string          `json:"url"`
	Before               *string         `json:"before"`
	After                *string         `json:"after"`
	PullRequests         []prJSON        `json:"pull_requests"`
	App                  any             `json:"app"`
	Repository           *repos.JSON     `json:"repository,omitempty"`
	CreatedAt            wire.Time       `json:"created_at"`
	UpdatedAt            wire.Time       `json:"updated_at"`
	HeadCommit           json.RawMessage `json:"head_commit"`
	LatestCheckRunsCount int             `json:"latest_check_runs_count"`
	CheckRunsURL         string          `json:"check_runs_url"`
	Rerequestable        bool            `json:"rerequestable"`
	RunsRerequestable    bool            `json:"runs_rerequestable"`
}

// simpleSuiteJSON is the simple-check-suite of a check_run payload.
type simpleSuiteJSON struct {
	ID           int64     `json:"id"`
	NodeID       string    `json:"node_id"`
	HeadBranch   *string   `json:"head_branch"`
	HeadSHA      string    `json:"head_sha"`
	Status       string    `json:"status"`
	Conclusion   *string   `json:"conclusion"`
	URL          string    `json:"url"`
	Before       *string   `json:"before"`
	After        *string   `json:"after"`
	PullRequests []prJSON  `json:"pull_requests"`
	App          any       `json:"app"`
	CreatedAt    wire.Time `json:"created_at"`
	UpdatedAt    wire.Time `json:"updated_at"`
}

// prJSON is the pull-request-minimal object.
type prJSON struct {
	ID     int64     `json:"id"`
	Number int64     `json:"number"`
	URL    string    `json:"url"`
	Head   prRefJSON `json:"head"`
	Base   prRefJSON `json:"base"`
}

type prRefJSON struct {
	Ref  string    `json:"ref"`
	SHA  string    `json:"sha"`
	Repo repoRefJS `json:"repo"`
}

type repoRefJS struct {
	ID   int64  `json:"id"`
	URL  string `json:"url"`
	Name string `json:"name"`
}

type annotationJSON struct {
	Path            string  `json:"path"`
	BlobHref        string  `json:"blob_href"`
	StartLine       int     `json:"start_line"`
	EndLine         int     `json:"end_line"`
	StartColumn     *int    `json:"start_column"`
	EndColumn       *int    `json:"end_column"`
	AnnotationLevel string  `json:"annotation_level"`
	Title           *string `json:"title"`
	Message         string  `json:"message"`
	RawDetails      *string `json:"raw_details"`
}

// view renders the checks of one repository, in one transaction or
// request: it loads each app and each head's pull requests once.
type view struct {
	ctx  context.Context
	q    store.Q
	repo *repos.Repository
	base string
	apps map[int64]any
	prs  map[string][]prJSON
	// cache, when not nil, keeps the apps' objects across views.
	cache *store.ReadCache[appKey, any]
}

// appKey names an app's object rendered under a base URL.
type appKey struct {
	base string
	id   int64
}

func newView(ctx context.Context, q store.Q, repo *repos.Repository) *view {
	return &view{ctx: ctx, q: q, repo: repo, base: httpapi.BaseURL(ctx), apps: map[int64]any{}, prs: map[string][]prJSON{}}
}

func (v *view) api() string { return v.base + "/repos/" + v.repo.FullName() }

// app is the integration object of the app.
func (v *view) app(id int64) (any, error) {
	if j, ok := v.apps[id]; ok {
		return j, nil
	}
	load := func() (any, error) {
		a, err := apps.ByID(v.ctx, v.q, id)
		if err != nil {
			return nil, err
		}
		owner, err := accounts.ByID(v.ctx, v.q, a.OwnerID)
		if err != nil {
			return nil, err
		}
		return apps.IntegrationJSON(v.base, a, owner), nil
	}
	var j any
	var err error
	if v.cache != nil {
		j, err = v.cache.Get(appKey{base: v.base, id: id}, load)
	} else {
		j, err = load()
	}
	if err != nil {
		return nil, err
	}
	v.apps[id] = j
	return j, nil
}

// pullRequests are the open pull requests of the repository whose head
// is the commit, from a branch of the repository (the platform does not
// look at forks).
func (v *view) pullRequests(sha string) ([]prJSON, error) {
	if list, ok := v.prs[sha]; ok {
		return list, nil
	}
	rows, err := v.q.QueryContext(v.ctx, `SELECT p.id, p.number, p.head_ref, p.base_ref, p.base_sha
		FROM pull_requests p JOIN issues i ON i.id = p.issue_id
		WHERE p.repository_id = $1 AND p.head_repository_id = $1 AND p.head_sha = $2 AND i.state = 'open' ORDER BY p.id`,
		v.repo.ID, sha)
	if err != nil {
		return nil, store.Normalize(err)
	}
	defer rows.Close()
	list := []prJSON{}
	repo := repoRefJS{ID: v.repo.ID, URL: v.api(), Name: v.repo.Name}
	for rows.Next() {
		var p prJSON
		if err := rows.Scan(&p.ID, &p.Number, &p.Head.Ref, &p.Base.Ref, &p.Base.SHA); err != nil {
			return nil, store.Normalize(err)
		}
		p.URL = v.api() + "/pulls/" + strconv.FormatInt(p.Number, 10)
		p.Head.SHA, p.Head.Repo, p.Base.Repo = sha, repo, repo
		list = append(list, p)
	}
	if err := rows.Err(); err != nil {
		return nil, store.Normalize(err)
	}
	v.prs[sha] = list
	return list, nil
}

// run renders the run; suite, when not nil, is its simple-check-suite
// (webhook payloads), else check_suite is {id}.
func (v *view) run(r *Run, suite *Suite) (runJSON, error) {
	app, err := v.app(r.AppID)
	if err != nil {
		return runJSON{}, err
	}
	prs, err := v.pullRequests(r.HeadSHA)
	if err != nil {
		return runJSON{}, err
	}
	url := v.api() + "/check-runs/" + strconv.FormatInt(r.ID, 10)
	j := runJSON{ID: r.ID, HeadSHA: r.HeadSHA, NodeID: wire.NodeID("CR", r.ID), ExternalID: r.ExternalID, URL: url,
		HTMLURL:    accounts.WebBase(v.base) + "/" + v.repo.FullName() + "/runs/" + strconv.FormatInt(r.ID, 10),
		DetailsURL: r.DetailsURL, Status: r.Status, Conclusion: r.Conclusion, StartedAt: optTime(r.StartedAt),
		CompletedAt: optTime(r.CompletedAt), Name: r.Name, App: app, PullRequests: prs,
		Output: outputJSON{Title: r.Title, Summary: r.Summary, Text: r.Text, AnnotationsCount: r.AnnotationsCount,
			AnnotationsURL: url + "/annotations"},
		CheckSuite: map[string]int64{"id": r.SuiteID}}
	if j.DetailsURL == "" {
		j.DetailsURL = j.HTMLURL
	}
	if suite != nil {
		s, err := v.simpleSuite(suite)
		if err != nil {
			return runJSON{}, err
		}
		j.CheckSuite = s
	}
	return j, nil
}

// suite renders the suite; withRepo adds its repository (REST answers).
func (v *view) suite(s *Suite, withRepo bool) (suiteJSON, error) {
	app, err := v.app(s.AppID)
	if err != nil {
		return suiteJSON{}, err
	}
	prs, err := v.pullRequests(s.HeadSHA)
	if err != nil {
		return suiteJSON{}, err
	}
	latest, err := latestRunsCount(v.ctx, v.q, s.ID)
	if err != nil {
		return suiteJSON{}, err
	}
	url := v.api() + "/check-suites/" + strconv.FormatInt(s.ID, 10)
	j := suiteJSON{ID: s.ID, NodeID: wire.NodeID("CS", s.ID), HeadBranch: s.HeadBranch, HeadSHA: s.HeadSHA,
		Status: s.Status, Conclusion: s.Conclusion, URL: url, Before: s.Before, After: s.After, PullRequests: prs,
		App: app, CreatedAt: wire.T(s.CreatedAt), UpdatedAt: wire.T(s.UpdatedAt), HeadCommit: s.HeadCommit,
		LatestCheckRunsCount: latest, CheckRunsURL: url + "/check-runs", Rerequestable: true, RunsRerequestable: true}
	if withRepo {
		st, err := repos.StatsOf(v.ctx, v.q, v.repo.ID)
		if err != nil {
			return suiteJSON{}, err
		}
		rj := repos.ToJSON(repos.URLs{Base: v.base, SSHPort: httpapi.SSHPort(v.ctx)}, v.repo, st, 0)
		j.Repository = &rj
	}
	return j, nil
}

// simpleSuite renders the simple-check-suite of a check_run payload.
func (v *view) simpleSuite(s *Suite) (simpleSuiteJSON, error) {
	app, err := v.app(s.AppID)
	if err != nil {
		return simpleSuiteJSON{}, err
	}
	prs, err := v.pullRequests(s.HeadSHA)
	if err != nil {
		return simpleSuiteJSON{}, err
	}
	return simpleSuiteJSON{ID: s.ID, NodeID: wire.NodeID("CS", s.ID), HeadBranch: s.HeadBranch, HeadSHA: s.HeadSHA,
		Status: s.Status, Conclusion: s.Conclusion, URL: v.api() + "/check-suites/" + strconv.FormatInt(s.ID, 10),
		Before: s.Before, After: s.After, PullRequests: prs, App: app, CreatedAt: wire.T(s.CreatedAt),
		UpdatedAt: wire.T(s.UpdatedAt)}, nil
}

// annotation renders an annotation of a run on the commit sha.
func (v *view) annotation(sha string, a Annotation) annotationJSON {
	return annotationJSON{Path: a.Path, StartLine: a.StartLine, EndLine: a.EndLine, StartColumn: a.StartColumn,
		EndColumn: a.EndColumn, AnnotationLevel: a.AnnotationLevel, Title: a.Title, Message: a.Message,
		RawDetails: a.RawDetails,
		BlobHref:   accounts.WebBase(v.base) + "/" + v.repo.FullName() + "/blob/" + sha + "/" + a.Path}
}

func optTime(t *time.Time) *wire.Time {
	if t == nil {
		return nil
	}
	w := wire.T(*t)
	return &w
}
