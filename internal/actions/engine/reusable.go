package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/nektos/act/pkg/exprparser"
	"github.com/nektos/act/pkg/model"
	"github.com/nektos/act/pkg/runner"
)

// Reusable workflows (jobs.<id>.uses), as the platform runs them: the
// called workflow's jobs become jobs of the caller's run, named
// "CALLER / CALLEE" and keyed "CALLER/CALLEE" (a job key has no slash);
// a called job without needs needs what the caller job needs, and the
// caller's dependents need every called job (a need of KEY is met by the
// jobs KEY and KEY/*). Each called job runs with act's reusable workflow
// runner under a caller made of the calling workflow (Spec.Call), so that
// with:, secrets: (and inherit) and inputs are act's; the call's outputs
// are the called workflow's on.workflow_call.outputs, evaluated over its
// jobs' outputs (CallOutputs).

// Resolver returns the content of the workflow a job's uses: names
// (./.github/workflows/x.yml, or OWNER/REPO/.github/workflows/x.yml@REF);
// its error is shown as the run's.
type Resolver func(uses string) ([]byte, error)

// Call is what a called job carries of its call.
type Call struct {
	// Uses is the caller job's uses:, Workflow the called workflow's
	// content (the job's Spec.Workflow when it runs).
	Uses     string
	Workflow []byte
	// CallerKey is the caller job's key.
	CallerKey string
}

// CallSpec is the caller of a called job being executed.
type CallSpec struct {
	// Workflow is the calling workflow's content and Key the caller job's
	// key in it.
	Workflow []byte
	Key      string
	// Needs are the results of the jobs the caller job needs (what its
	// with: and secrets: read).
	Needs map[string]Need
}

// KeySep separates a caller's key from its called job's in a job's key.
const KeySep = "/"

// expandCall makes the jobs of a caller job: the called workflow's jobs,
// each matrix expanded.
func expandCall(key string, j *model.Job, resolve Resolver) ([]Job, error) {
	if resolve == nil {
		return nil, fmt.Errorf("the job %q calls a reusable workflow, which this server does not run here", key)
	}
	if _, err := j.Type(); err != nil {
		return nil, fmt.Errorf("the job %q: %w", key, err)
	}
	if j.Strategy != nil {
		return nil, fmt.Errorf("the job %q: a matrix of a reusable workflow's caller is not supported by this server", key)
	}
	content, err := resolve(j.Uses)
	if err != nil {
		return nil, fmt.Errorf("error parsing called workflow %q: %w", j.Uses, err)
	}
	inner, err := parse(content, nil) // a call in a called workflow is refused
	if err != nil {
		return nil, fmt.Errorf("error parsing called workflow %q: %w", j.Uses, err)
	}
	if _, ok := inner.Events["workflow_call"]; !ok {
		return nil, fmt.Errorf("error parsing called workflow %q: workflow is not reusable as it is missing a `on.workflow_call` trigger", j.Uses)
	}
	called, err := model.ReadWorkflow(bytes.NewReader(content), false)
	if err != nil {
		return nil, fmt.Errorf("error parsing called workflow %q: %w", j.Uses, err)
	}
	if err := checkWith(key, j, called); err != nil {
		return nil, err
	}
	caller := j.Name
	if caller == "" {
		caller = key
	}
	out := make([]Job, 0, len(inner.Jobs))
	for _, cj := range inner.Jobs {
		cj.Name = caller + " / " + cj.Name
		needs := make([]string, 0, len(cj.Needs)+len(j.Needs()))
		for _, n := range cj.Needs {
			needs = append(needs, key+KeySep+n)
		}
		cj.Needs = append(needs, j.Needs()...) // what the caller's with: and secrets: read
		cj.Call = &Call{Uses: j.Uses, Workflow: content, CallerKey: key}
		cj.Key = key + KeySep + cj.Key
		out = append(out, cj)
	}
	return out, nil
}

// checkWith refuses what the platform refuses in a call: an input the
// called workflow does not declare, and a required input not given.
func checkWith(key string, j *model.Job, called *model.Workflow) error {
	declared := called.WorkflowCallConfig().Inputs
	for name := range j.With {
		if _, ok := declared[name]; !ok {
			return fmt.Errorf("the job %q: invalid input, %s is not defined in the referenced workflow", key, name)
		}
	}
	for name, in := range declared {
		if _, ok := j.With[name]; in.Required && !ok && in.Default.Kind == 0 {
			return fmt.Errorf("the job %q: input %s is required, but not provided while calling", key, name)
		}
	}
	return nil
}

// CallOutputs evaluates the called workflow's on.workflow_call.outputs
// over its jobs' outputs (by called job key): the outputs of the call.
func CallOutputs(calledWorkflow []byte, jobs map[string]map[string]string) (map[string]string, error) {
	wf, err := model.ReadWorkflow(bytes.NewReader(calledWorkflow), false)
	if err != nil {
		return nil, err
	}
	results := map[string]*model.WorkflowCallResult{}
	for k, outs := range jobs {
		results[k] = &model.WorkflowCallResult{Outputs: outs}
	}
	in := exprparser.NewInterpeter(&exprparser.EvaluationEnvironment{Jobs: &results, Github: &model.GithubContext{}},
		exprparser.Config{})
	out := map[string]string{}
	var errs []error
	for name, o := range wf.WorkflowCallConfig().Outputs {
		v, err := interpolate(in, o.Value)
		errs = append(errs, err)
		out[name] = v
	}
	return out, errors.Join(errs...)
}

var expr = regexp.MustCompile(`\$\{\{(.*?)\}\}`)

// interpolate replaces each ${{ }} of s with its value.
func interpolate(in exprparser.Interpreter, s string) (string, error) {
	var errs []error
	out := expr.ReplaceAllStringFunc(s, func(m string) string {
		v, err := in.Evaluate(strings.TrimSpace(expr.FindStringSubmatch(m)[1]), exprparser.DefaultStatusCheckNone)
		if err != nil {
			errs = append(errs, err)
			return ""
		}
		if v == nil {
			return ""
		}
		return fmt.Sprint(v)
	})
	return out, errors.Join(errs...)
}

// newRunner is act's runner of the job: a plain one, or for a called job
// act's reusable workflow runner under its caller, a run context of the
// calling workflow's job with the results of the jobs that job needs
// (whose expression evaluator reads with: and secrets:).
//
// skip is true when the caller job's if: is false (evaluated in the
// caller's context, success() its needs' results, as the platform
// decides whether to make the call): the called job is then skipped.
func (s Spec) newRunner(ctx context.Context, cfg *runner.Config) (r runner.Runner, skip bool, err error) {
	if s.Call == nil {
		r, err = runner.New(cfg)
		return r, false, err
	}
	wf, err := model.ReadWorkflow(bytes.NewReader(s.Call.Workflow), false)
	if err != nil {
		return nil, false, err
	}
	job := wf.GetJob(s.Call.Key)
	if job == nil {
		return nil, false, fmt.Errorf("%w: %q", ErrNoJob, s.Call.Key)
	}
	injectNeeds(wf, s.Call.Key, s.Call.Needs)
	event := s.EventPayload
	if len(event) == 0 {
		event = []byte("{}")
	}
	caller := &runner.RunContext{Name: s.Call.Key, Config: cfg, Run: &model.Run{Workflow: wf, JobID: s.Call.Key},
		EventJSON: string(event), StepResults: map[string]*model.StepResult{}}
	caller.ExprEval = caller.NewExpressionEvaluator(ctx)
	if job.If.Value != "" {
		run, err := runner.EvalBool(ctx, caller.ExprEval, job.If.Value, exprparser.DefaultStatusCheckSuccess)
		if err != nil {
			return nil, false, fmt.Errorf("the job %q: invalid if: %w", s.Call.Key, err)
		}
		if !run {
			return nil, true, nil
		}
	}
	r, err = runner.NewReusableWorkflowRunner(caller)
	return r, false, err
}
