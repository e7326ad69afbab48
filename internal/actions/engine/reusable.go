package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"unsafe"

	"github.com/nektos/act/pkg/exprparser"
	"github.com/nektos/act/pkg/model"
	"github.com/nektos/act/pkg/runner"
	"gopkg.in/yaml.v3"
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
// jobs' outputs (CallOutputs). A called workflow's own calls are expanded
// the same way, up to MaxCallDepth levels (keys A/B/C, each caller under
// its own in Spec.Call), and a caller job's matrix makes one call per
// combination (names "CALLER (x) / CALLEE").

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
	// CallerKey is the caller job's key (in the workflow that calls this
	// one).
	CallerKey string
	// Callers are the caller jobs of a chain of calls, outermost first:
	// each the key of a job and the content of the workflow it is in (nil
	// for the first: the run's own workflow). One caller for a call from
	// the run's workflow; up to MaxCallDepth-1.
	Callers []Caller
}

// Caller is one caller job of a chain of calls.
type Caller struct {
	Key      string `json:"key"`
	Workflow []byte `json:"workflow,omitempty"`
	// Matrix is the caller job's matrix combination (nil without one):
	// one call per combination.
	Matrix map[string]any `json:"matrix,omitempty"`
}

// MaxCallDepth is how many levels of workflows a run may chain, the
// calling workflow included, as on the platform (a "called workflow
// depth" of MaxCallDepth-1).
const MaxCallDepth = 4

// CallSpec is the caller of a called job being executed.
type CallSpec struct {
	// Workflow is the calling workflow's content and Key the caller job's
	// key in it.
	Workflow []byte
	Key      string
	// Needs are the results of the jobs the caller job needs (what its
	// with: and secrets: read).
	Needs map[string]Need
	// Matrix is the caller job's matrix combination (nil without one).
	Matrix map[string]any `json:",omitempty"`
	// Parent is the caller job's own caller when the caller job is in a
	// called workflow itself (nil for a caller in the run's workflow).
	Parent *CallSpec `json:",omitempty"`
}

// KeySep separates a caller's key from its called job's in a job's key.
const KeySep = "/"

// expandCall makes the jobs of a caller job: the called workflow's jobs,
// each matrix expanded.
func expandCall(key string, j *model.Job, resolve Resolver, depth int) ([]Job, error) {
	if resolve == nil {
		return nil, fmt.Errorf("the job %q calls a reusable workflow, which this server does not run here", key)
	}
	if _, err := j.Type(); err != nil {
		return nil, fmt.Errorf("the job %q: %w", key, err)
	}
	if depth >= MaxCallDepth {
		return nil, fmt.Errorf("job %q calls workflow %q, but doing so would exceed the limit on called workflow depth of %d",
			key, j.Uses, MaxCallDepth-1)
	}
	content, err := resolve(j.Uses)
	if err != nil {
		return nil, fmt.Errorf("error parsing called workflow %q: %w", j.Uses, err)
	}
	inner, err := parseAt(content, resolve, depth+1) // its own calls, one level deeper
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
	name := j.Name
	if name == "" {
		name = key
	}
	combos, err := callMatrix(key, j)
	if err != nil {
		return nil, err
	}
	out := make([]Job, 0, len(inner.Jobs)*len(combos))
	for _, m := range combos {
		caller := name
		if m != nil && !strings.Contains(name, "${{") {
			caller = name + " (" + matrixValues(m) + ")"
		}
		out = append(out, callJobs(key, j, caller, m, content, inner.Jobs)...)
	}
	return out, nil
}

// callMatrix is the caller job's matrix combinations: one nil without a
// matrix.
func callMatrix(key string, j *model.Job) ([]map[string]any, error) {
	if j.Strategy == nil {
		return []map[string]any{nil}, nil
	}
	matrices, err := j.GetMatrixes()
	if err != nil {
		return nil, fmt.Errorf("the job %q: %w", key, err)
	}
	if len(matrices) == 0 || (len(matrices) == 1 && len(matrices[0]) == 0) {
		return []map[string]any{nil}, nil
	}
	return matrices, nil
}

// callJobs are the jobs of one call (of one matrix combination m of the
// caller job key, displayed as caller): the called workflow's jobs under
// the caller's name and key, needing what the caller needs.
func callJobs(key string, j *model.Job, caller string, m map[string]any, content []byte, called []Job) []Job {
	out := make([]Job, 0, len(called))
	for _, cj := range called {
		cj.Name = caller + " / " + cj.Name
		needs := make([]string, 0, len(cj.Needs)+len(j.Needs()))
		for _, n := range cj.Needs {
			needs = append(needs, key+KeySep+n)
		}
		cj.Needs = append(needs, j.Needs()...) // what the caller's with: and secrets: read
		if cj.Call == nil {
			cj.Call = &Call{Uses: j.Uses, Workflow: content, CallerKey: key, Callers: []Caller{{Key: key, Matrix: m}}}
		} else { // a job of a call the called workflow makes
			inner := *cj.Call
			inner.Callers = append([]Caller{{Key: key, Matrix: m}}, inner.Callers...)
			inner.Callers[1].Workflow = content
			cj.Call = &inner
		}
		cj.Key = key + KeySep + cj.Key
		out = append(out, cj)
	}
	return out
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
// (whose expression evaluator reads with: and secrets:); a caller in a
// called workflow itself runs under its own caller, and so on up the
// chain, so that each level's inputs and secrets are act's.
//
// skip is true when a caller job's if: is false (evaluated in that
// caller's context, success() its needs' results, as the platform
// decides whether to make the call): the called job is then skipped.
func (s Spec) newRunner(ctx context.Context, cfg *runner.Config) (r runner.Runner, skip bool, err error) {
	if s.Call == nil {
		r, err = runner.New(cfg)
		return r, false, err
	}
	caller, skip, err := s.callerContext(ctx, cfg, s.Call)
	if err != nil || skip {
		return nil, skip, err
	}
	r, err = runner.NewReusableWorkflowRunner(caller)
	return r, false, err
}

// callerContext is the run context of the caller job c, under its own
// caller's when it has one; skip when its if: (or an outer caller's) is
// false.
func (s Spec) callerContext(ctx context.Context, cfg *runner.Config, c *CallSpec) (*runner.RunContext, bool, error) {
	wf, err := model.ReadWorkflow(bytes.NewReader(c.Workflow), false)
	if err != nil {
		return nil, false, err
	}
	job := wf.GetJob(c.Key)
	if job == nil {
		return nil, false, fmt.Errorf("%w: %q", ErrNoJob, c.Key)
	}
	injectNeeds(wf, c.Key, c.Needs)
	passToken(job)
	event := s.EventPayload
	if len(event) == 0 {
		event = []byte("{}")
	}
	rc := &runner.RunContext{Name: c.Key, Config: cfg, Run: &model.Run{Workflow: wf, JobID: c.Key},
		EventJSON: string(event), StepResults: map[string]*model.StepResult{}, Matrix: c.Matrix}
	if c.Parent != nil {
		parent, skip, err := s.callerContext(ctx, cfg, c.Parent)
		if err != nil || skip {
			return nil, skip, err
		}
		if err := setCaller(rc, parent); err != nil {
			return nil, false, err
		}
	}
	rc.ExprEval = rc.NewExpressionEvaluator(ctx)
	if job.If.Value != "" {
		run, err := runner.EvalBool(ctx, rc.ExprEval, job.If.Value, exprparser.DefaultStatusCheckSuccess)
		if err != nil {
			return nil, false, fmt.Errorf("the job %q: invalid if: %w", c.Key, err)
		}
		if !run {
			return nil, true, nil
		}
	}
	return rc, false, nil
}

// passToken makes the caller job pass secrets.GITHUB_TOKEN to the
// workflow it calls whatever its secrets: say (none, a mapping), as the
// platform gives every called workflow the token; act passes only the
// secrets named, or all with inherit.
func passToken(job *model.Job) {
	if job.InheritSecrets() {
		return
	}
	n := &job.RawSecrets
	if n.Kind != yaml.MappingNode {
		*n = yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "GITHUB_TOKEN" {
			return
		}
	}
	n.Content = append(n.Content,
		&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "GITHUB_TOKEN"},
		&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "${{ secrets.GITHUB_TOKEN }}"})
}

// setCaller makes parent the caller of rc, as act's reusable workflow
// runner makes it for the run contexts of the workflow it calls (act
// keeps that link unexported: it is taken from the runner act makes for
// parent). Pinned to act's v0.2.89 layout; a change of it is an error,
// never a silent caller-less run.
func setCaller(rc, parent *runner.RunContext) error {
	r, err := runner.NewReusableWorkflowRunner(parent)
	if err != nil {
		return err
	}
	impl := reflect.ValueOf(r)
	if impl.Kind() != reflect.Pointer || impl.Elem().Kind() != reflect.Struct {
		return errors.New("engine: act's reusable workflow runner changed")
	}
	src := impl.Elem().FieldByName("caller")
	dst := reflect.ValueOf(rc).Elem().FieldByName("caller")
	if !src.IsValid() || !dst.IsValid() || src.Type() != dst.Type() {
		return errors.New("engine: act's reusable workflow caller changed")
	}
	reflect.NewAt(dst.Type(), unsafe.Pointer(dst.UnsafeAddr())).Elem().
		Set(reflect.NewAt(src.Type(), unsafe.Pointer(src.UnsafeAddr())).Elem())
	return nil
}
