package rulesets

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/git/githttp"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// The results of a rule suite.
const (
	ResultPass   = "pass"
	ResultFail   = "fail"
	ResultBypass = "bypass"
)

// Suite is the evaluation of the rulesets that apply to one reference
// update: a rule suite.
type Suite struct {
	ID     int64
	Repo   *repos.Repository
	Actor  *accounts.Account
	Update githttp.RefUpdate
	// Result is over the active rulesets, EvaluationResult over the active
	// and evaluated ones; both pass until a ruleset fails or is bypassed.
	Result, EvaluationResult string
	Evaluated                bool // a ruleset in evaluate mode applied
	Evaluations              []Evaluation
	PushedAt                 time.Time
}

// Evaluation is one rule's evaluation in a suite (the platform's
// rule_evaluations item).
type Evaluation struct {
	RuleSource  RuleSource `json:"rule_source"`
	Enforcement string     `json:"enforcement"`
	Result      string     `json:"result"`
	RuleType    string     `json:"rule_type"`
	Details     *string    `json:"details"`
}

// RuleSource names the ruleset a rule comes from.
type RuleSource struct {
	Type string `json:"type"`
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

// add records the rule's evaluation: msg is its violation, "" a pass.
func (s *Suite) add(rs *Ruleset, r Rule, msg string) {
	e := Evaluation{RuleSource: RuleSource{Type: "ruleset", ID: rs.ID, Name: rs.Name}, Enforcement: rs.Enforcement,
		Result: ResultPass, RuleType: r.Type}
	if msg != "" {
		e.Result, e.Details = ResultFail, &msg
	}
	s.Evaluations = append(s.Evaluations, e)
}

// conclude folds a ruleset's outcome into the suite's results: fail wins
// over bypass, bypass over pass.
func (s *Suite) conclude(enforcement, outcome string) {
	worse := func(cur string) string {
		if cur == ResultFail || outcome == ResultPass || cur == ResultBypass && outcome == ResultBypass {
			return cur
		}
		return outcome
	}
	if s.Result == "" {
		s.Result, s.EvaluationResult = ResultPass, ResultPass
	}
	if enforcement == EnforcementActive {
		s.Result = worse(s.Result)
	} else {
		s.Evaluated = true
	}
	s.EvaluationResult = worse(s.EvaluationResult)
}

// record stores the suite when a ruleset applied (Result is set).
func (s *Service) record(ctx context.Context, suite *Suite) error {
	if suite.Result == "" {
		return nil
	}
	evals, err := json.Marshal(suite.Evaluations)
	if err != nil {
		return err
	}
	var actorID *int64
	actorName := ""
	if suite.Actor != nil {
		actorID, actorName = &suite.Actor.ID, suite.Actor.Login
	}
	_, err = s.DB.ExecContext(ctx, `INSERT INTO rule_suites (org_id, repository_id, repository_name, actor_id, actor_name,
		before_sha, after_sha, ref, result, evaluation_result, evaluated, rule_evaluations, pushed_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
		suite.Repo.Owner.ID, suite.Repo.ID, suite.Repo.Name, actorID, actorName, suite.Update.OldSHA, suite.Update.NewSHA,
		suite.Update.Ref, suite.Result, suite.EvaluationResult, suite.Evaluated, string(evals), store.Now())
	return store.Normalize(err)
}

// suiteFilter is the query of a rule suites list.
type suiteFilter struct {
	orgID, repoID            int64
	ref, repoName, actorName string
	result                   string // "" for all
	evaluate                 string // "", "active" or "evaluate"
	since                    time.Time
}

// timePeriods are the time_period values and how far back they reach.
var timePeriods = map[string]time.Duration{"hour": time.Hour, "day": 24 * time.Hour, "week": 7 * 24 * time.Hour, "month": 30 * 24 * time.Hour}

// parseSuiteFilter reads ref, repository_name, time_period, actor_name,
// rule_suite_result and evaluate_status (422 for values outside their
// enums).
func parseSuiteFilter(r *http.Request) (suiteFilter, error) {
	q := r.URL.Query()
	f := suiteFilter{ref: q.Get("ref"), repoName: q.Get("repository_name"), actorName: q.Get("actor_name"),
		result: q.Get("rule_suite_result"), evaluate: q.Get("evaluate_status")}
	var errs apierr.Fields
	period := q.Get("time_period")
	if period == "" {
		period = "day"
	}
	d, ok := timePeriods[period]
	if !ok {
		errs.Add("", "time_period", apierr.CodeInvalid)
	}
	f.since = store.Now().Add(-d)
	switch f.result {
	case "all":
		f.result = ""
	case "", ResultPass, ResultFail, ResultBypass:
	default:
		errs.Add("", "rule_suite_result", apierr.CodeInvalid)
	}
	switch f.evaluate {
	case "all":
		f.evaluate = ""
	case "", "active", "evaluate":
	default:
		errs.Add("", "evaluate_status", apierr.CodeInvalid)
	}
	return f, errs.Err()
}

const suiteColumns = `id, repository_id, repository_name, actor_id, actor_name, before_sha, after_sha, ref, result,
	evaluation_result, evaluated, rule_evaluations, pushed_at`

type suiteRow struct {
	ID                                    int64
	RepoID                                int64
	RepoName                              string
	ActorID                               *int64
	ActorName, Before, After, Ref, Result string
	EvaluationResult                      string
	Evaluated                             bool
	Evaluations                           string
	PushedAt                              time.Time
}

func scanSuite(row interface{ Scan(...any) error }) (*suiteRow, error) {
	var s suiteRow
	err := row.Scan(&s.ID, &s.RepoID, &s.RepoName, &s.ActorID, &s.ActorName, &s.Before, &s.After, &s.Ref, &s.Result,
		&s.EvaluationResult, &s.Evaluated, &s.Evaluations, &s.PushedAt)
	if err != nil {
		return nil, store.Normalize(err)
	}
	return &s, nil
}

// listSuites returns a page of the suites that match, newest first.
func (s *Service) listSuites(ctx context.Context, f suiteFilter, limit, offset int) ([]*suiteRow, error) {
	refs := []string{f.ref, "refs/heads/" + f.ref, "refs/tags/" + f.ref}
	if strings.HasPrefix(f.ref, "refs/") {
		refs = []string{f.ref, f.ref, f.ref}
	}
	rows, err := s.DB.QueryContext(ctx, `SELECT `+suiteColumns+` FROM rule_suites
		WHERE org_id = $1 AND ($2 = 0 OR repository_id = $2) AND ($3 = '' OR ref IN ($4, $5, $6))
		AND ($7 = '' OR lower(repository_name) = lower($7)) AND ($8 = '' OR lower(actor_name) = lower($8))
		AND ($9 = '' OR result = $9) AND ($10 = '' OR ($10 = 'evaluate') = evaluated) AND pushed_at >= $11
		ORDER BY id DESC LIMIT $12 OFFSET $13`,
		f.orgID, f.repoID, f.ref, refs[0], refs[1], refs[2], f.repoName, f.actorName, f.result, f.evaluate, f.since, limit, offset)
	if err != nil {
		return nil, store.Normalize(err)
	}
	defer rows.Close()
	var out []*suiteRow
	for rows.Next() {
		r, err := scanSuite(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, store.Normalize(rows.Err())
}

// suiteJSON is the platform's rule-suite object; the list leaves
// rule_evaluations out (rule-suites).
type suiteJSON struct {
	ID               int64        `json:"id"`
	ActorID          *int64       `json:"actor_id"`
	ActorName        *string      `json:"actor_name"`
	BeforeSHA        string       `json:"before_sha"`
	AfterSHA         string       `json:"after_sha"`
	Ref              string       `json:"ref"`
	RepositoryID     int64        `json:"repository_id"`
	RepositoryName   string       `json:"repository_name"`
	PushedAt         wire.Time    `json:"pushed_at"`
	Result           string       `json:"result"`
	EvaluationResult string       `json:"evaluation_result"`
	RuleEvaluations  []Evaluation `json:"rule_evaluations,omitempty"`
}

func toSuiteJSON(s *suiteRow, full bool) (suiteJSON, error) {
	j := suiteJSON{ID: s.ID, ActorID: s.ActorID, BeforeSHA: s.Before, AfterSHA: s.After, Ref: s.Ref, RepositoryID: s.RepoID,
		RepositoryName: s.RepoName, PushedAt: wire.T(s.PushedAt), Result: s.Result, EvaluationResult: s.EvaluationResult}
	if s.ActorName != "" {
		j.ActorName = &s.ActorName
	}
	if full {
		j.RuleEvaluations = []Evaluation{}
		if err := json.Unmarshal([]byte(s.Evaluations), &j.RuleEvaluations); err != nil {
			return j, err
		}
	}
	return j, nil
}

// listOrgSuites answers GET /orgs/{org}/rulesets/rule-suites.
func (h *Handler) listOrgSuites(w http.ResponseWriter, r *http.Request) error {
	f, err := parseSuiteFilter(r)
	if err != nil {
		return err
	}
	f.orgID = accounts.OrgFrom(r.Context()).ID
	return h.writeSuites(w, r, f)
}

// listRepoSuites answers GET /repos/{owner}/{repo}/rulesets/rule-suites.
func (h *Handler) listRepoSuites(w http.ResponseWriter, r *http.Request) error {
	f, err := parseSuiteFilter(r)
	if err != nil {
		return err
	}
	repo := repos.From(r.Context())
	f.orgID, f.repoID = repo.Owner.ID, repo.ID
	return h.writeSuites(w, r, f)
}

func (h *Handler) writeSuites(w http.ResponseWriter, r *http.Request, f suiteFilter) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	list, err := h.Service.listSuites(r.Context(), f, page.Limit()+1, page.Offset())
	if err != nil {
		return err
	}
	more := len(list) > page.Limit()
	list = list[:min(len(list), page.Limit())]
	out := make([]suiteJSON, 0, len(list))
	for _, s := range list {
		j, err := toSuiteJSON(s, false)
		if err != nil {
			return err
		}
		out = append(out, j)
	}
	httpapi.SetLinksMore(w, r, page, more)
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// getOrgSuite answers GET /orgs/{org}/rulesets/rule-suites/{rule_suite_id}.
func (h *Handler) getOrgSuite(w http.ResponseWriter, r *http.Request) error {
	return h.writeSuite(w, r, accounts.OrgFrom(r.Context()).ID, 0)
}

// getRepoSuite answers GET /repos/{owner}/{repo}/rulesets/rule-suites/{rule_suite_id}.
func (h *Handler) getRepoSuite(w http.ResponseWriter, r *http.Request) error {
	repo := repos.From(r.Context())
	return h.writeSuite(w, r, repo.Owner.ID, repo.ID)
}

func (h *Handler) writeSuite(w http.ResponseWriter, r *http.Request, orgID, repoID int64) error {
	id, err := httpapi.PathInt64(r, "rule_suite_id")
	if err != nil {
		return err
	}
	s, err := scanSuite(h.Service.DB.QueryRowContext(r.Context(), `SELECT `+suiteColumns+` FROM rule_suites
		WHERE id = $1 AND org_id = $2 AND ($3 = 0 OR repository_id = $3)`, id, orgID, repoID))
	if err != nil {
		return err
	}
	j, err := toSuiteJSON(s, true)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, j)
	return nil
}
