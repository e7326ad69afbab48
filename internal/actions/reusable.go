package actions

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"forgeapi/internal/actions/engine"
	"forgeapi/internal/git/gitcmd"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// Reusable workflows: the server reads the workflow a job's uses: names
// (engine.ParseWith expands its jobs into the run) from the caller's
// commit (./.github/workflows/x.yml) or from a repository of this server
// at a branch, tag or commit (OWNER/REPO/.github/workflows/x.yml@REF),
// with the platform's access rules: the same repository, a public one,
// or a private one whose Actions access level (PUT
// .../actions/permissions/access) shares it with repositories of its
// owner ("user", "organization"; "enterprise" is read as the owner too).

// AccessPolicies gives a private repository's Actions access level
// ("none", "user", "organization", "enterprise"), reading through q, the
// caller's transaction when it has one. The settings area implements it
// beside Policies; without it private repositories share their workflows
// with none.
type AccessPolicies interface {
	AccessLevel(ctx context.Context, q store.Q, repoID int64) (string, error)
}

// remoteUses is OWNER/REPO/PATH@REF of a remote uses:.
var remoteUses = regexp.MustCompile(`^([^/]+)/([^/]+)/(\.github/workflows/[^@/]+\.ya?ml)@(.+)$`)

// errWorkflowNotFound is the platform's answer for a called workflow that does
// not exist or that the caller may not read.
var errWorkflowNotFound = errors.New("workflow was not found")

// resolver reads the workflows the jobs of a workflow file of repo's
// commit sha call. It reads the database through q, the caller's
// transaction when it has one, so it must not be used once that
// transaction ended.
func (s *Service) resolver(ctx context.Context, q store.Q, repo *repos.Repository, sha, path string) engine.Resolver {
	return func(uses string) ([]byte, error) {
		if local, ok := strings.CutPrefix(uses, "./"); ok {
			if strings.Contains(local, "@") || !strings.HasPrefix(local, WorkflowsDir+"/") {
				return nil, fmt.Errorf("invalid reusable workflow reference %q", uses)
			}
			return s.readWorkflow(ctx, repo.ID, sha, local)
		}
		m := remoteUses.FindStringSubmatch(uses)
		if m == nil {
			return nil, fmt.Errorf("invalid reusable workflow reference %q: expected OWNER/REPO/.github/workflows/FILE@REF", uses)
		}
		called, err := repos.ByOwnerAndName(ctx, q, m[1], m[2])
		if errors.Is(err, store.ErrNotFound) {
			return nil, errWorkflowNotFound
		}
		if err != nil {
			return nil, err
		}
		if ok, err := s.mayCall(ctx, q, repo, called); err != nil || !ok {
			if err == nil {
				err = errWorkflowNotFound
			}
			return nil, err
		}
		at, _, err := s.resolveRef(ctx, called.ID, m[4])
		if err != nil {
			return nil, errWorkflowNotFound
		}
		return s.readWorkflow(ctx, called.ID, at, m[3])
	}
}

// readWorkflow reads a workflow file of a commit.
func (s *Service) readWorkflow(ctx context.Context, repoID int64, sha, path string) ([]byte, error) {
	content, err := gitcmd.In(s.Repos.GitDir(repoID)).Output(ctx, nil, "cat-file", "blob", sha+":"+path)
	if err != nil {
		return nil, errWorkflowNotFound
	}
	return content, nil
}

// mayCall reports whether the caller repository may use the called
// repository's workflows; it reads through q, the caller's transaction
// when it has one.
func (s *Service) mayCall(ctx context.Context, q store.Q, caller, called *repos.Repository) (bool, error) {
	if caller.ID == called.ID || !called.Private {
		return true, nil
	}
	if called.Owner.ID != caller.Owner.ID {
		return false, nil
	}
	ap, ok := s.Policies.(AccessPolicies)
	if !ok {
		return false, nil
	}
	level, err := ap.AccessLevel(ctx, q, called.ID)
	return level != "" && level != "none", err
}

// calledBy reports whether a job of key key is one a need of need waits
// for: the job need, or a job of the workflow the job need calls.
func calledBy(need, key string) bool {
	return key == need || strings.HasPrefix(key, need+engine.KeySep)
}

// neededBy reports whether the job o is one of j's needs': a job a need
// names, of the same call as j's (the same matrix combination of each
// caller they share).
func neededBy(j, o *Job) bool {
	for _, n := range j.Needs {
		if calledBy(n, o.Key) && sameCall(j, o, n) {
			return true
		}
	}
	return false
}

// sameCall reports whether the jobs j and o, o under j's need need, are
// of the same combination of each caller the need shares with j's key.
func sameCall(j, o *Job, need string) bool {
	jc, oc := callersOf(j), callersOf(o)
	for i := range sharedCallers(j.Key, need, len(jc)) {
		if i >= len(oc) || !reflect.DeepEqual(jc[i].Matrix, oc[i].Matrix) {
			return false
		}
	}
	return true
}

// sharedCallers is how many of the callers of the job of key key (of
// callers callers) a need of it is under: the level it is a need of.
func sharedCallers(key, need string, callers int) int {
	parts, ks := strings.Split(key, engine.KeySep), strings.Split(need, engine.KeySep)
	d := 0
	for d < callers && d < len(ks)-1 && ks[d] == parts[d] {
		d++
	}
	return d
}

// callOf splits a called job's key: its caller's key and its key in the
// called workflow (ok false for a job of the run's own workflow).
func callOf(key string) (caller, callee string, ok bool) {
	return strings.Cut(key, engine.KeySep)
}

// callersOf are a called job's caller jobs, outermost first (nil for a
// job of the run's own workflow).
func callersOf(j *Job) []engine.Caller {
	if len(j.Callers) > 0 {
		return j.Callers
	}
	if caller, _, ok := callOf(j.Key); ok { // stored before chains were kept: one level
		return []engine.Caller{{Key: caller}}
	}
	return nil
}

// workflowAt is the content of the called workflow the part depth (from
// 1) of the job's key is a job of.
func workflowAt(j *Job, depth int) string {
	if chain := callersOf(j); depth < len(chain) {
		return string(chain[depth].Workflow)
	}
	return j.WorkflowFile
}

// callOutputs are the outputs of the call the jobs under need make (the
// called workflow's on.workflow_call.outputs over its jobs' outputs; a
// job of it that is a call itself has that call's outputs, a matrix of
// calls the outputs of its call that completed last, as at the top).
func callOutputs(need string, jobs []*Job) (map[string]string, error) {
	depth := len(strings.Split(need, engine.KeySep))
	outs := map[string]map[string]string{}
	calls := map[string]bool{} // the callees that are calls, their outputs computed
	var content string
	var errs []error
	for _, j := range jobs {
		rest, ok := strings.CutPrefix(j.Key, need+engine.KeySep)
		if !ok {
			continue
		}
		content = workflowAt(j, depth)
		callee, _, nested := strings.Cut(rest, engine.KeySep)
		if outs[callee] == nil {
			outs[callee] = map[string]string{}
		}
		if nested {
			if !calls[callee] {
				calls[callee] = true
				inner := need + engine.KeySep + callee
				sub, err := callOutputs(inner, lastCall(inner, jobsUnder(inner, jobs)))
				errs = append(errs, err)
				for k, v := range sub {
					outs[callee][k] = v
				}
			}
			continue
		}
		for k, v := range j.Outputs {
			if v != "" {
				outs[callee][k] = v
			}
		}
	}
	if content == "" {
		return map[string]string{}, errors.Join(errs...)
	}
	out, err := engine.CallOutputs([]byte(content), outs)
	return out, errors.Join(append(errs, err)...)
}

// jobsUnder are the jobs of need: need itself, or the jobs of the
// workflow it calls.
func jobsUnder(need string, jobs []*Job) []*Job {
	var out []*Job
	for _, j := range jobs {
		if calledBy(need, j.Key) {
			out = append(out, j)
		}
	}
	return out
}

// callSpec makes the spec of a called job run under its callers: the
// called workflow, the job's key in it, the needs among its jobs by
// those keys, and its chain of callers, each with the results of the
// jobs it needs (by their keys in its workflow).
func callSpec(spec *engine.Spec, r *Run, j *Job, needs map[string]engine.Need) {
	chain := callersOf(j)
	if chain == nil {
		spec.Needs = needs
		return
	}
	parts := strings.Split(j.Key, engine.KeySep)
	spec.Workflow, spec.JobKey, spec.Needs = []byte(j.WorkflowFile), parts[len(parts)-1], map[string]engine.Need{}
	levels := make([]*engine.CallSpec, len(chain))
	var parent *engine.CallSpec
	for i, c := range chain {
		wf := c.Workflow
		if i == 0 {
			wf = []byte(r.WorkflowFile)
		}
		parent = &engine.CallSpec{Workflow: wf, Key: c.Key, Matrix: c.Matrix, Needs: map[string]engine.Need{}, Parent: parent}
		levels[i] = parent
	}
	spec.Call = parent
	for k, n := range needs {
		d := sharedCallers(j.Key, k, len(chain))
		inner := strings.Join(strings.Split(k, engine.KeySep)[d:], engine.KeySep)
		if d == len(chain) {
			spec.Needs[inner] = n
		} else {
			levels[d].Needs[inner] = n
		}
	}
}
