package actions

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
)

// logURLTTL is how long a log's download address works, as the
// platform's (a minute).
const logURLTTL = time.Minute

// actor is the caller's account.
func (h *Handler) actor(ctx context.Context) (*accounts.Account, error) {
	return accounts.ByID(ctx, h.Service.DB, auth.PrincipalFrom(ctx).UserID())
}

// workflow reads {workflow_id}: an id or a file name.
func (h *Handler) workflow(r *http.Request) (*Workflow, error) {
	return workflowByRef(r.Context(), h.Service.DB, repos.From(r.Context()).ID, r.PathValue("workflow_id"))
}

// run reads {run_id}.
func (h *Handler) run(r *http.Request) (*Run, error) {
	id, err := httpapi.PathInt64(r, "run_id")
	if err != nil {
		return nil, err
	}
	return runByID(r.Context(), h.Service.DB, repos.From(r.Context()).ID, id)
}

// attempt reads {run_id} and {attempt_number}.
func (h *Handler) attempt(r *http.Request) (*Run, error) {
	run, err := h.run(r)
	if err != nil {
		return nil, err
	}
	n, err := strconv.Atoi(r.PathValue("attempt_number"))
	if err != nil || n < 1 {
		return nil, apierr.NotFound()
	}
	return attemptOf(r.Context(), h.Service.DB, run, n)
}

func (h *Handler) listWorkflows(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	repo := repos.From(r.Context())
	list, total, err := listWorkflows(r.Context(), h.Service.DB, repo.ID, page.Limit(), page.Offset())
	if err != nil {
		return err
	}
	v := newView(r.Context(), h.Service.DB, repo)
	out := make([]workflowJSON, 0, len(list))
	for _, wf := range list {
		out = append(out, v.workflow(wf))
	}
	httpapi.SetLinks(w, r, page, total)
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"total_count": total, "workflows": out})
	return nil
}

func (h *Handler) getWorkflow(w http.ResponseWriter, r *http.Request) error {
	wf, err := h.workflow(r)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, newView(r.Context(), h.Service.DB, repos.From(r.Context())).workflow(wf))
	return nil
}

func (h *Handler) disableWorkflow(w http.ResponseWriter, r *http.Request) error {
	return h.setState(w, r, StateDisabledManually)
}

func (h *Handler) enableWorkflow(w http.ResponseWriter, r *http.Request) error {
	return h.setState(w, r, StateActive)
}

func (h *Handler) setState(w http.ResponseWriter, r *http.Request, state string) error {
	wf, err := h.workflow(r)
	if err != nil {
		return err
	}
	if err := h.Service.SetWorkflowState(r.Context(), wf, state); err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

// dispatchRequest is the body of POST .../dispatches.
type dispatchRequest struct {
	Ref    *string                    `json:"ref"`
	Inputs map[string]json.RawMessage `json:"inputs"`
}

// dispatch answers POST .../workflows/{workflow_id}/dispatches: 204 once
// the run is queued; 422 for a missing ref, a ref that does not exist, a
// workflow without workflow_dispatch, unknown or missing inputs.
func (h *Handler) dispatch(w http.ResponseWriter, r *http.Request) error {
	wf, err := h.workflow(r)
	if err != nil {
		return err
	}
	var body dispatchRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	if body.Ref == nil || *body.Ref == "" {
		return apierr.Invalid("CreateWorkflowDispatch", "ref", apierr.CodeMissingField)
	}
	if len(body.Inputs) > 25 {
		return apierr.Unprocessable("you may only define up to 25 `inputs` for a `workflow_dispatch` event")
	}
	inputs := map[string]string{}
	for k, raw := range body.Inputs {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			s = strings.TrimSpace(string(raw)) // numbers and booleans, as their text
		}
		inputs[k] = s
	}
	actor, err := h.actor(r.Context())
	if err != nil {
		return err
	}
	err = h.Service.Dispatch(r.Context(), repos.From(r.Context()), wf, *body.Ref, inputs, actor)
	var input *InputError
	var invalid *InvalidWorkflowError
	switch {
	case errors.Is(err, ErrNoRef):
		return apierr.Unprocessable("No ref found for: %s", *body.Ref)
	case errors.Is(err, ErrNoDispatch), errors.Is(err, ErrNoWorkflowAtRef):
		return apierr.Unprocessable("%s", err.Error())
	case errors.As(err, &input):
		return apierr.Unprocessable("%s", input.Message)
	case errors.As(err, &invalid):
		return apierr.Unprocessable("%s", invalid.Error())
	case err != nil:
		return err
	}
	httpapi.NoContent(w)
	return nil
}

func (h *Handler) listRuns(w http.ResponseWriter, r *http.Request) error {
	return h.writeRuns(w, r, 0)
}

func (h *Handler) listWorkflowRuns(w http.ResponseWriter, r *http.Request) error {
	wf, err := h.workflow(r)
	if err != nil {
		return err
	}
	return h.writeRuns(w, r, wf.ID)
}

// runFilter reads the list's query parameters.
func runFilter(r *http.Request, workflowID int64) (RunFilter, error) {
	q := r.URL.Query()
	f := RunFilter{WorkflowID: workflowID, Actor: q.Get("actor"), Branch: q.Get("branch"), Event: q.Get("event"),
		Status: q.Get("status"), HeadSHA: q.Get("head_sha")}
	if c := q.Get("created"); c != "" {
		if err := f.created(c); err != nil {
			return f, apierr.Invalid("", "created", apierr.CodeInvalid)
		}
	}
	return f, nil
}

// created reads the created filter, as the platform's search syntax
// writes dates: >=D, >D, <=D, <D, A..B (either side * for open), or D
// (that day).
func (f *RunFilter) created(c string) error {
	for _, op := range []string{">=", "<=", ">", "<"} {
		if rest, ok := strings.CutPrefix(c, op); ok {
			t, err := parseDate(rest)
			if err != nil {
				return err
			}
			if op[0] == '>' {
				f.CreatedFrom = &t
			} else {
				f.CreatedUntil = &t
			}
			return nil
		}
	}
	from, until, isRange := strings.Cut(c, "..")
	if !isRange {
		t, err := parseDate(c)
		end := t.Add(24*time.Hour - time.Nanosecond)
		f.CreatedFrom, f.CreatedUntil = &t, &end
		return err
	}
	for _, side := range []struct {
		s   string
		set **time.Time
	}{{from, &f.CreatedFrom}, {until, &f.CreatedUntil}} {
		if side.s == "*" {
			continue
		}
		t, err := parseDate(side.s)
		if err != nil {
			return err
		}
		*side.set = &t
	}
	return nil
}

func parseDate(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.UTC(), nil
	}
	return time.Parse("2006-01-02", s)
}

func (h *Handler) writeRuns(w http.ResponseWriter, r *http.Request, workflowID int64) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	f, err := runFilter(r, workflowID)
	if err != nil {
		return err
	}
	repo := repos.From(r.Context())
	list, total, err := listRuns(r.Context(), h.Service.DB, repo.ID, f, page.Limit(), page.Offset())
	if err != nil {
		return err
	}
	v := newView(r.Context(), h.Service.DB, repo)
	out := make([]runJSON, 0, len(list))
	for _, run := range list {
		j, err := v.run(run)
		if err != nil {
			return err
		}
		out = append(out, j)
	}
	httpapi.SetLinks(w, r, page, total)
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"total_count": total, "workflow_runs": out})
	return nil
}

func (h *Handler) getRun(w http.ResponseWriter, r *http.Request) error {
	run, err := h.run(r)
	if err != nil {
		return err
	}
	return h.writeRun(w, r, run)
}

func (h *Handler) getAttempt(w http.ResponseWriter, r *http.Request) error {
	run, err := h.attempt(r)
	if err != nil {
		return err
	}
	return h.writeRun(w, r, run)
}

func (h *Handler) writeRun(w http.ResponseWriter, r *http.Request, run *Run) error {
	j, err := newView(r.Context(), h.Service.DB, repos.From(r.Context())).run(run)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, j)
	return nil
}

func (h *Handler) deleteRun(w http.ResponseWriter, r *http.Request) error {
	run, err := h.run(r)
	if err != nil {
		return err
	}
	err = h.Service.DeleteRun(r.Context(), run.ID, run.RepoID)
	if errors.Is(err, errNotCompleted) {
		return apierr.Forbidden("Cannot delete a workflow run that is not completed.")
	}
	if err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

func (h *Handler) cancel(w http.ResponseWriter, r *http.Request) error {
	run, err := h.run(r)
	if err != nil {
		return err
	}
	actor, err := h.actor(r.Context())
	if err != nil {
		return err
	}
	err = h.Service.Cancel(r.Context(), run.ID, run.RepoID, actor)
	if errors.Is(err, ErrCompleted) {
		return apierr.New(http.StatusConflict, "%s", ErrCompleted.Error())
	}
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusAccepted, map[string]any{})
	return nil
}

// approve answers POST .../runs/{run_id}/approve: 201 with {} once the
// fork pull request's run that waited for approval is queued; 403 for a
// run that waits for none.
func (h *Handler) approve(w http.ResponseWriter, r *http.Request) error {
	run, err := h.run(r)
	if err != nil {
		return err
	}
	actor, err := h.actor(r.Context())
	if err != nil {
		return err
	}
	err = h.Service.Approve(r.Context(), run.ID, run.RepoID, actor)
	if errors.Is(err, errNotAwaitingApproval) {
		return apierr.New(http.StatusForbidden, "%s", "This run is not waiting for approval")
	}
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusCreated, map[string]any{})
	return nil
}

func (h *Handler) rerun(w http.ResponseWriter, r *http.Request) error {
	return h.doRerun(w, r, false, "")
}

func (h *Handler) rerunFailed(w http.ResponseWriter, r *http.Request) error {
	return h.doRerun(w, r, true, "")
}

func (h *Handler) rerunJob(w http.ResponseWriter, r *http.Request) error {
	j, err := h.job(r)
	if err != nil {
		return err
	}
	run, err := runByID(r.Context(), h.Service.DB, j.RepoID, j.RunID)
	if err != nil {
		return err
	}
	if j.RunAttempt != run.RunAttempt {
		return apierr.Forbidden("This job is not in the latest attempt of its workflow run.")
	}
	r.SetPathValue("run_id", itoa(run.ID))
	return h.doRerun(w, r, false, j.Name)
}

func (h *Handler) doRerun(w http.ResponseWriter, r *http.Request, failedOnly bool, jobName string) error {
	run, err := h.run(r)
	if err != nil {
		return err
	}
	actor, err := h.actor(r.Context())
	if err != nil {
		return err
	}
	_, err = h.Service.Rerun(r.Context(), run.ID, run.RepoID, failedOnly, jobName, actor)
	var invalid *InvalidWorkflowError
	switch {
	case errors.Is(err, errNotCompleted):
		return apierr.Forbidden("This workflow run is not completed, so it cannot be re-run.")
	case errors.As(err, &invalid):
		return apierr.Forbidden("%s", invalid.Error())
	case err != nil:
		return err
	}
	httpapi.WriteJSON(w, http.StatusCreated, map[string]any{})
	return nil
}

// job reads {job_id}.
func (h *Handler) job(r *http.Request) (*Job, error) {
	id, err := httpapi.PathInt64(r, "job_id")
	if err != nil {
		return nil, err
	}
	return jobByID(r.Context(), h.Service.DB, repos.From(r.Context()).ID, id)
}

func (h *Handler) getJob(w http.ResponseWriter, r *http.Request) error {
	j, err := h.job(r)
	if err != nil {
		return err
	}
	run, err := runByID(r.Context(), h.Service.DB, j.RepoID, j.RunID)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, newView(r.Context(), h.Service.DB, repos.From(r.Context())).job(run, j))
	return nil
}

func (h *Handler) listRunJobs(w http.ResponseWriter, r *http.Request) error {
	run, err := h.run(r)
	if err != nil {
		return err
	}
	filter := r.URL.Query().Get("filter")
	if filter != "" && filter != "latest" && filter != "all" {
		return apierr.Invalid("", "filter", apierr.CodeInvalid)
	}
	jobs, err := jobsOf(r.Context(), h.Service.DB, run.ID, run.RunAttempt)
	if filter == "all" {
		jobs, err = allJobsOf(r.Context(), h.Service.DB, run.ID)
	}
	if err != nil {
		return err
	}
	return h.writeJobs(w, r, run, jobs)
}

func (h *Handler) listAttemptJobs(w http.ResponseWriter, r *http.Request) error {
	run, err := h.attempt(r)
	if err != nil {
		return err
	}
	jobs, err := jobsOf(r.Context(), h.Service.DB, run.ID, run.RunAttempt)
	if err != nil {
		return err
	}
	return h.writeJobs(w, r, run, jobs)
}

func (h *Handler) writeJobs(w http.ResponseWriter, r *http.Request, run *Run, jobs []*Job) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	v := newView(r.Context(), h.Service.DB, repos.From(r.Context()))
	out := []jobJSON{}
	for _, j := range httpapi.Slice(page, jobs) {
		out = append(out, v.job(run, j))
	}
	httpapi.SetLinks(w, r, page, len(jobs))
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"total_count": len(jobs), "jobs": out})
	return nil
}

// jobLogs answers GET .../jobs/{job_id}/logs: 302 to the log's download
// address, 404 while the job has no log (or its logs were deleted).
func (h *Handler) jobLogs(w http.ResponseWriter, r *http.Request) error {
	j, err := h.job(r)
	if err != nil {
		return err
	}
	if !j.HasLog || h.Service.Blobs == nil {
		return apierr.NotFound()
	}
	return h.redirect(w, r, jobLogKey(j.ID))
}

func (h *Handler) runLogs(w http.ResponseWriter, r *http.Request) error {
	run, err := h.run(r)
	if err != nil {
		return err
	}
	return h.writeLogsZip(w, r, run)
}

func (h *Handler) attemptLogs(w http.ResponseWriter, r *http.Request) error {
	run, err := h.attempt(r)
	if err != nil {
		return err
	}
	return h.writeLogsZip(w, r, run)
}

// writeLogsZip stores the zip of the attempt's job logs (one
// NUMBER_JOB NAME.txt each) and redirects to it.
func (h *Handler) writeLogsZip(w http.ResponseWriter, r *http.Request, run *Run) error {
	if h.Service.Blobs == nil {
		return apierr.NotFound()
	}
	ctx := r.Context()
	jobs, err := jobsOf(ctx, h.Service.DB, run.ID, run.RunAttempt)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	found := false
	for i, j := range jobs {
		if !j.HasLog {
			continue
		}
		if err := addLog(ctx, h.Service, zw, i, j); err != nil {
			return err
		}
		found = true
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if !found {
		return apierr.NotFound()
	}
	key := fmt.Sprintf("actions-run-%d-%d.zip", run.ID, run.RunAttempt)
	if _, err := h.Service.Blobs.Put(ctx, key, &buf); err != nil {
		return err
	}
	return h.redirect(w, r, key)
}

// addLog adds a job's log to the zip as the platform lays it out:
// N_JOB.txt, and each step's part as JOB/NUMBER_STEP.txt (gh run view
// --log reads these).
func addLog(ctx context.Context, s *Service, zw *zip.Writer, i int, j *Job) error {
	rc, err := s.Blobs.Open(ctx, jobLogKey(j.ID))
	if err != nil {
		return err
	}
	log, err := io.ReadAll(rc)
	_ = rc.Close()
	if err != nil {
		return err
	}
	name := safeName(j.Name)
	if err := addFile(zw, fmt.Sprintf("%d_%s.txt", i, name), log); err != nil {
		return err
	}
	for _, st := range j.Steps {
		if st.LogTo <= st.LogFrom || st.LogTo > int64(len(log)) {
			continue
		}
		if err := addFile(zw, fmt.Sprintf("%s/%d_%s.txt", name, st.Number, safeName(st.Name)), log[st.LogFrom:st.LogTo]); err != nil {
			return err
		}
	}
	return nil
}

func addFile(zw *zip.Writer, name string, content []byte) error {
	f, err := zw.Create(name)
	if err == nil {
		_, err = f.Write(content)
	}
	return err
}

// safeName keeps a job's name fit for a file name in the zip.
func safeName(s string) string {
	return strings.NewReplacer("/", "_", "\\", "_", ":", "_").Replace(s)
}

func (h *Handler) redirect(w http.ResponseWriter, r *http.Request, key string) error {
	u, err := h.Service.Blobs.URL(r.Context(), key, logURLTTL)
	if err != nil {
		return err
	}
	w.Header().Set("Location", u)
	w.WriteHeader(http.StatusFound)
	return nil
}

func (h *Handler) deleteLogs(w http.ResponseWriter, r *http.Request) error {
	run, err := h.run(r)
	if err != nil {
		return err
	}
	err = h.Service.DeleteLogs(r.Context(), run.ID, run.RepoID)
	if errors.Is(err, errNotCompleted) {
		return apierr.Forbidden("Cannot delete the logs of a workflow run that is not completed.")
	}
	if err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}
