package actions

import (
	"context"
	"errors"
	"fmt"
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
// ("none", "user", "organization", "enterprise"). The settings area
// implements it beside Policies; without it private repositories share
// their workflows with none.
type AccessPolicies interface {
	AccessLevel(ctx context.Context, repoID int64) (string, error)
}

// remoteUses is OWNER/REPO/PATH@REF of a remote uses:.
var remoteUses = regexp.MustCompile(`^([^/]+)/([^/]+)/(\.github/workflows/[^@/]+\.ya?ml)@(.+)$`)

// errWorkflowNotFound is the platform's answer for a called workflow that does
// not exist or that the caller may not read.
var errWorkflowNotFound = errors.New("workflow was not found")

// resolver reads the workflows the jobs of a workflow file of repo's
// commit sha call.
func (s *Service) resolver(ctx context.Context, repo *repos.Repository, sha, path string) engine.Resolver {
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
		called, err := repos.ByOwnerAndName(ctx, s.DB, m[1], m[2])
		if errors.Is(err, store.ErrNotFound) {
			return nil, errWorkflowNotFound
		}
		if err != nil {
			return nil, err
		}
		if ok, err := s.mayCall(ctx, repo, called); err != nil || !ok {
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
// repository's workflows.
func (s *Service) mayCall(ctx context.Context, caller, called *repos.Repository) (bool, error) {
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
	level, err := ap.AccessLevel(ctx, called.ID)
	return level != "" && level != "none", err
}

// calledBy reports whether a job of key key is one a need of need waits
// for: the job need, or a job of the workflow the job need calls.
func calledBy(need, key string) bool {
	return key == need || strings.HasPrefix(key, need+engine.KeySep)
}

// neededBy reports whether the job of key key is one of the needs'.
func neededBy(needs []string, key string) bool {
	for _, n := range needs {
		if calledBy(n, key) {
			return true
		}
	}
	return false
}

// callOf splits a called job's key: its caller's key and its key in the
// called workflow (ok false for a job of the run's own workflow).
func callOf(key string) (caller, callee string, ok bool) {
	return strings.Cut(key, engine.KeySep)
}

// callOutputs are the outputs of the call the jobs of need make (the
// called workflow's on.workflow_call.outputs over its jobs' outputs).
func callOutputs(need string, jobs []*Job) (map[string]string, error) {
	outs := map[string]map[string]string{}
	var content string
	for _, j := range jobs {
		caller, callee, ok := callOf(j.Key)
		if !ok || caller != need {
			continue
		}
		content = j.WorkflowFile
		if outs[callee] == nil {
			outs[callee] = map[string]string{}
		}
		for k, v := range j.Outputs {
			if v != "" {
				outs[callee][k] = v
			}
		}
	}
	if content == "" {
		return map[string]string{}, nil
	}
	return engine.CallOutputs([]byte(content), outs)
}

// callSpec makes the spec of a called job run under its caller: the
// called workflow, the job's key in it, the needs among its jobs by
// those keys, and its caller with the results of the jobs it needs.
func callSpec(spec *engine.Spec, r *Run, j *Job, needs map[string]engine.Need) {
	caller, callee, ok := callOf(j.Key)
	if !ok {
		spec.Needs = needs
		return
	}
	spec.Workflow, spec.JobKey = []byte(j.WorkflowFile), callee
	spec.Needs, spec.Call = map[string]engine.Need{}, &engine.CallSpec{Workflow: []byte(r.WorkflowFile), Key: caller,
		Needs: map[string]engine.Need{}}
	for k, n := range needs {
		if c, inner, ok := callOf(k); ok && c == caller {
			spec.Needs[inner] = n
		} else {
			spec.Call.Needs[k] = n
		}
	}
}
