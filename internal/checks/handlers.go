package checks

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/git/gitread"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

var fullSHA = regexp.MustCompile(`^[0-9a-f]{40}$`)

// caller is the app whose installation token the request carries; any
// other credential is the platform's 403.
func (h *Handler) caller(r *http.Request) (Caller, error) {
	ctx := r.Context()
	p := auth.PrincipalFrom(ctx)
	if p.Token == nil || p.Token.Kind != auth.KindInstallation || p.Token.InstallationID == 0 {
		return Caller{}, apierr.Forbidden("You must authenticate via a GitHub App.")
	}
	return h.Service.CallerOf(ctx, p.Token.InstallationID, p.UserID())
}

// actor is the account the request acts as.
func (h *Handler) actor(r *http.Request) (*accounts.Account, error) {
	return accounts.ByID(r.Context(), h.Service.DB, auth.PrincipalFrom(r.Context()).UserID())
}

// head reads the commit sha of the route's repository: its branch and
// simple-commit object; a SHA that names no commit is the platform's 422.
func (h *Handler) head(r *http.Request, resource, sha string) (Head, error) {
	repo := repos.From(r.Context())
	g, err := gitread.Open(h.Repos.GitDir(repo.ID))
	if err != nil {
		return Head{}, apierr.Custom(resource, "head_sha", "No commit found for SHA: %s", sha)
	}
	defer g.Close()
	c, err := g.CommitMeta(sha)
	if err != nil || !fullSHA.MatchString(sha) || c.SHA != sha {
		return Head{}, apierr.Custom(resource, "head_sha", "No commit found for SHA: %s", sha)
	}
	branches, err := g.BranchesAt(sha)
	if err != nil {
		return Head{}, err
	}
	head := Head{SHA: sha, Commit: commitJSON(c)}
	if len(branches) > 0 {
		b := strings.TrimPrefix(branches[0], "refs/heads/")
		for _, name := range branches {
			if strings.TrimPrefix(name, "refs/heads/") == repo.DefaultBranch {
				b = repo.DefaultBranch
			}
		}
		head.Branch = &b
	}
	return head, nil
}

// commitJSON is the simple-commit object of a commit.
func commitJSON(c gitread.Commit) json.RawMessage {
	b, _ := json.Marshal(map[string]any{
		"id": c.SHA, "tree_id": c.TreeSHA, "message": strings.TrimRight(c.Message, "\n"),
		"timestamp": c.CommitterDate.UTC().Format(time.RFC3339),
		"author":    map[string]string{"name": c.AuthorName, "email": c.AuthorEmail},
		"committer": map[string]string{"name": c.CommitterName, "email": c.CommitterEmail},
	}) // strings and maps of strings always encode
	return b
}

// createRun answers POST .../check-runs: 201 with the run.
func (h *Handler) createRun(w http.ResponseWriter, r *http.Request) error {
	c, err := h.caller(r)
	if err != nil {
		return err
	}
	var in RunInput
	if err := httpapi.DecodeJSON(r, &in); err != nil {
		return err
	}
	if in.HeadSHA == nil {
		return apierr.Invalid(runResource, "head_sha", apierr.CodeMissingField)
	}
	repo := repos.From(r.Context())
	head := Head{SHA: *in.HeadSHA}
	if _, err := suiteOf(r.Context(), h.Service.DB, repo.ID, c.App.ID, head.SHA); errors.Is(err, store.ErrNotFound) {
		// The app has no suite of the commit yet: read it from git.
		if head, err = h.head(r, runResource, *in.HeadSHA); err != nil {
			return err
		}
	} else if err != nil {
		return err
	}
	run, v, err := h.Service.createRun(r.Context(), repo, c, head, in)
	if err != nil {
		return err
	}
	v.q = h.Service.DB // the transaction is over; its pull requests and apps are still right
	j, err := v.run(run, nil)
	if err != nil {
		return err
	}
	httpapi.WriteCreated(w, j.URL, j)
	return nil
}

// updateRun answers PATCH .../check-runs/{check_run_id}.
func (h *Handler) updateRun(w http.ResponseWriter, r *http.Request) error {
	c, err := h.caller(r)
	if err != nil {
		return err
	}
	id, err := httpapi.PathInt64(r, "check_run_id")
	if err != nil {
		return err
	}
	var in RunInput
	if err := httpapi.DecodeJSON(r, &in); err != nil {
		return err
	}
	if in.HeadSHA != nil {
		return apierr.Custom(runResource, "head_sha", "head_sha cannot be changed")
	}
	repo := repos.From(r.Context())
	run, v, err := h.Service.updateRun(r.Context(), repo, c, id, in)
	if err != nil {
		return err
	}
	v.q = h.Service.DB // the transaction is over; its pull requests and apps are still right
	j, err := v.run(run, nil)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, j)
	return nil
}

// writeRun answers 200 with the run.
func (h *Handler) writeRun(w http.ResponseWriter, r *http.Request, run *Run) error {
	j, err := h.Service.newView(r.Context(), h.Service.DB, repos.From(r.Context())).run(run, nil)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, j)
	return nil
}

// pathRun reads the run {check_run_id} of the route's repository.
func (h *Handler) pathRun(r *http.Request) (*Run, error) {
	id, err := httpapi.PathInt64(r, "check_run_id")
	if err != nil {
		return nil, err
	}
	return RunByID(r.Context(), h.Service.DB, repos.From(r.Context()).ID, id)
}

// getRun answers GET .../check-runs/{check_run_id}.
func (h *Handler) getRun(w http.ResponseWriter, r *http.Request) error {
	run, err := h.pathRun(r)
	if err != nil {
		return err
	}
	return h.writeRun(w, r, run)
}

// listAnnotations answers GET .../check-runs/{check_run_id}/annotations:
// the run's annotations, oldest first, paged.
func (h *Handler) listAnnotations(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	run, err := h.pathRun(r)
	if err != nil {
		return err
	}
	list, err := listAnnotations(r.Context(), h.Service.DB, run.ID, page.Limit(), page.Offset())
	if err != nil {
		return err
	}
	v := h.Service.newView(r.Context(), h.Service.DB, repos.From(r.Context()))
	out := make([]annotationJSON, 0, len(list))
	for _, a := range list {
		out = append(out, v.annotation(run.HeadSHA, a))
	}
	httpapi.SetLinks(w, r, page, run.AnnotationsCount)
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// rerequestRun answers POST .../check-runs/{check_run_id}/rerequest: 201
// with an empty object.
func (h *Handler) rerequestRun(w http.ResponseWriter, r *http.Request) error {
	return h.rerequest(w, r, "check_run_id", h.Service.RerequestRun)
}

// rerequestSuite answers POST .../check-suites/{check_suite_id}/rerequest,
// as rerequestRun does a run.
func (h *Handler) rerequestSuite(w http.ResponseWriter, r *http.Request) error {
	return h.rerequest(w, r, "check_suite_id", h.Service.RerequestSuite)
}

// rerequest asks again for the run or suite whose id the path parameter
// names, as the caller.
func (h *Handler) rerequest(w http.ResponseWriter, r *http.Request, param string,
	again func(context.Context, *repos.Repository, *accounts.Account, int64) error) error {
	id, err := httpapi.PathInt64(r, param)
	if err != nil {
		return err
	}
	actor, err := h.actor(r)
	if err != nil {
		return err
	}
	if err := again(r.Context(), repos.From(r.Context()), actor, id); err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusCreated, struct{}{})
	return nil
}

// createSuite answers POST .../check-suites: 201 with a new suite, 200
// with the app's suite of the commit when it has one.
func (h *Handler) createSuite(w http.ResponseWriter, r *http.Request) error {
	c, err := h.caller(r)
	if err != nil {
		return err
	}
	var in struct {
		HeadSHA *string `json:"head_sha"`
	}
	if err := httpapi.DecodeJSON(r, &in); err != nil {
		return err
	}
	if in.HeadSHA == nil {
		return apierr.Invalid("CheckSuite", "head_sha", apierr.CodeMissingField)
	}
	head, err := h.head(r, "CheckSuite", *in.HeadSHA)
	if err != nil {
		return err
	}
	repo := repos.From(r.Context())
	suite, created, err := h.Service.CreateSuite(r.Context(), repo, c, head)
	if err != nil {
		return err
	}
	j, err := h.Service.newView(r.Context(), h.Service.DB, repo).suite(suite, true)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	httpapi.WriteJSON(w, status, j)
	return nil
}

// setPreferences answers PATCH .../check-suites/preferences.
func (h *Handler) setPreferences(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		AutoTriggerChecks *[]struct {
			AppID   *int64 `json:"app_id"`
			Setting *bool  `json:"setting"`
		} `json:"auto_trigger_checks"`
	}
	if err := httpapi.DecodeJSON(r, &in); err != nil {
		return err
	}
	var list []Preference
	if in.AutoTriggerChecks != nil {
		var f apierr.Fields
		for i, p := range *in.AutoTriggerChecks {
			field := "auto_trigger_checks[" + strconv.Itoa(i) + "]"
			if p.AppID == nil {
				f.Add("CheckSuitePreference", field+".app_id", apierr.CodeMissingField)
			}
			if p.Setting == nil {
				f.Add("CheckSuitePreference", field+".setting", apierr.CodeMissingField)
			}
			if p.AppID != nil && p.Setting != nil {
				list = append(list, Preference{AppID: *p.AppID, Setting: *p.Setting})
			}
		}
		if err := f.Err(); err != nil {
			return err
		}
	}
	repo := repos.From(r.Context())
	prefs, err := h.Service.SetPreferences(r.Context(), repo, list)
	if err != nil {
		return err
	}
	st, err := repos.StatsOf(r.Context(), h.Service.DB, repo.ID)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{
		"preferences": map[string]any{"auto_trigger_checks": prefs},
		"repository":  repos.ToJSON(repos.URLsOf(r.Context()), repo, st, auth.RoleFrom(r.Context())),
	})
	return nil
}

// pathSuite reads the suite {check_suite_id} of the route's repository.
func (h *Handler) pathSuite(r *http.Request) (*Suite, error) {
	id, err := httpapi.PathInt64(r, "check_suite_id")
	if err != nil {
		return nil, err
	}
	return SuiteByID(r.Context(), h.Service.DB, repos.From(r.Context()).ID, id)
}

// getSuite answers GET .../check-suites/{check_suite_id}.
func (h *Handler) getSuite(w http.ResponseWriter, r *http.Request) error {
	suite, err := h.pathSuite(r)
	if err != nil {
		return err
	}
	j, err := h.Service.newView(r.Context(), h.Service.DB, repos.From(r.Context())).suite(suite, true)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, j)
	return nil
}

// runFilter reads check_name, status, filter (latest or all) and app_id.
func runFilter(r *http.Request) (RunFilter, error) {
	q := r.URL.Query()
	f := RunFilter{Name: q.Get("check_name"), Status: q.Get("status")}
	switch q.Get("filter") {
	case "", "latest":
	case "all":
		f.All = true
	default:
		return f, apierr.Invalid("", "filter", apierr.CodeInvalid)
	}
	if f.Status != "" && f.Status != StatusQueued && f.Status != StatusInProgress && f.Status != StatusCompleted {
		return f, apierr.Invalid("", "status", apierr.CodeInvalid)
	}
	if s := q.Get("app_id"); s != "" {
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil || id <= 0 {
			return f, apierr.Invalid("", "app_id", apierr.CodeInvalid)
		}
		f.AppID = id
	}
	return f, nil
}

// writeRuns answers a page of runs: {total_count, check_runs}.
func (h *Handler) writeRuns(w http.ResponseWriter, r *http.Request, where string, args []any) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	f, err := runFilter(r)
	if err != nil {
		return err
	}
	list, total, err := listRuns(r.Context(), h.Service.DB, where, args, f, page.Limit(), page.Offset())
	if err != nil {
		return err
	}
	v := h.Service.newView(r.Context(), h.Service.DB, repos.From(r.Context()))
	out := make([]runJSON, 0, len(list))
	for _, run := range list {
		j, err := v.run(run, nil)
		if err != nil {
			return err
		}
		out = append(out, j)
	}
	httpapi.SetLinks(w, r, page, total)
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"total_count": total, "check_runs": out})
	return nil
}

// listRunsForSuite answers GET .../check-suites/{check_suite_id}/check-runs.
func (h *Handler) listRunsForSuite(w http.ResponseWriter, r *http.Request) error {
	suite, err := h.pathSuite(r)
	if err != nil {
		return err
	}
	return h.writeRuns(w, r, `r.check_suite_id = $1`, []any{suite.ID})
}

// resolve returns the commit SHA {ref} names in the route's repository.
func (h *Handler) resolve(r *http.Request) (string, error) {
	repo := repos.From(r.Context())
	g, err := gitread.Open(h.Repos.GitDir(repo.ID))
	if err != nil {
		return "", apierr.New(http.StatusNotFound, "No commit found for SHA: %s", r.PathValue("ref"))
	}
	defer g.Close()
	sha, err := g.Resolve(r.PathValue("ref"))
	if errors.Is(err, gitread.ErrRevisionNotFound) {
		return "", apierr.New(http.StatusUnprocessableEntity, "No commit found for SHA: %s", r.PathValue("ref"))
	}
	return sha, err
}

// listRunsForRef answers GET .../commits/{ref}/check-runs.
func (h *Handler) listRunsForRef(w http.ResponseWriter, r *http.Request) error {
	sha, err := h.resolve(r)
	if err != nil {
		return err
	}
	return h.writeRuns(w, r, `r.repository_id = $1 AND r.head_sha = $2`, []any{repos.From(r.Context()).ID, sha})
}

// listSuitesForRef answers GET .../commits/{ref}/check-suites: the
// commit's suites, oldest first, narrowed by app_id and check_name (the
// suites with a run of that name).
func (h *Handler) listSuitesForRef(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	f, err := runFilter(r)
	if err != nil {
		return err
	}
	sha, err := h.resolve(r)
	if err != nil {
		return err
	}
	repo := repos.From(r.Context())
	list, total, err := listSuites(r.Context(), h.Service.DB, repo.ID, sha, f.AppID, f.Name, page.Limit(), page.Offset())
	if err != nil {
		return err
	}
	v := h.Service.newView(r.Context(), h.Service.DB, repo)
	out := make([]suiteJSON, 0, len(list))
	for _, s := range list {
		j, err := v.suite(s, true)
		if err != nil {
			return err
		}
		out = append(out, j)
	}
	httpapi.SetLinks(w, r, page, total)
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"total_count": total, "check_suites": out})
	return nil
}
