// Package engine is forgeapi's one door to nektos/act, the engine the
// Gitea and Forgejo runners are built on: Parse reads a workflow file
// (act's parser and its schema validation) into what the server stores
// and schedules, and Execute runs one job of a workflow on the host (act's
// self-hosted platform: no container runtime) in a work directory the
// caller prepared, with its log, step timings and outputs.
//
// No other package imports act, so that what act pulls in is linked only
// where jobs are parsed and run.
package engine

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/nektos/act/pkg/model"
	"github.com/sirupsen/logrus"
	"gopkg.in/yaml.v3"
)

func init() {
	// act's default handler of a node that does not decode is log.Fatalf:
	// a workflow file from a push must never stop the server. Set once,
	// before any parse; the decode then just fails.
	model.OnDecodeNodeError = func(yaml.Node, any, error) {}
	// act logs to logrus's standard logger where a job's logger is not
	// set yet (planning, git lookups): not the server's log.
	logrus.SetOutput(io.Discard)
}

// Workflow is a parsed workflow file.
type Workflow struct {
	// Name is the workflow's name: (name:), or "" when the file has none.
	Name string
	// Events are the events the workflow runs on, with their filters.
	Events map[string]Filter
	// Inputs are workflow_dispatch's inputs by name.
	Inputs map[string]Input
	// Jobs are the workflow's jobs, each job key's matrix expanded, in an
	// order where every job comes after the jobs it needs.
	Jobs []Job
}

// Filter is the filters of one trigger (on.push.branches, ...).
type Filter struct {
	Branches, BranchesIgnore, Tags, TagsIgnore, Paths, PathsIgnore, Types []string
	// Workflows are workflow_run's workflows (by name).
	Workflows []string
	// Crons are schedule's cron expressions.
	Crons []string
}

// Input is one workflow_dispatch input.
type Input struct {
	Description string
	Required    bool
	Default     string
	Type        string
	Options     []string
}

// Job is one job to run: a job key with one of its matrix's
// combinations.
type Job struct {
	Key    string         // the key under jobs:
	Name   string         // its display name, with the matrix values: "build (1, linux)"
	Needs  []string       // the keys of the jobs it needs
	Matrix map[string]any // its matrix combination (nil without a matrix)
	Labels []string       // runs-on
	Steps  []string       // the display names of its steps
	// Environment is the environment the job deploys to (environment:),
	// "" for none.
	Environment string
	// Concurrency is the job's concurrency: (zero for none).
	Concurrency Concurrency
	// Call is, for a job of a called reusable workflow, its call (nil
	// for the others).
	Call *Call
}

// Parse parses and validates a workflow file; its error is the parser's
// message, shown as the failed run's on the platform. A job that calls a
// reusable workflow is an error: ParseWith resolves them.
func Parse(content []byte) (*Workflow, error) { return parse(content, nil) }

// ParseWith is Parse with the reusable workflows the jobs call read
// through resolve: each caller job becomes the called workflow's jobs
// (see expandCall).
func ParseWith(content []byte, resolve Resolver) (*Workflow, error) { return parse(content, resolve) }

func parse(content []byte, resolve Resolver) (*Workflow, error) { return parseAt(content, resolve, 1) }

// parseAt parses a workflow at depth of a chain of calls (1 for the
// run's own).
func parseAt(content []byte, resolve Resolver, depth int) (w *Workflow, err error) {
	defer func() {
		if r := recover(); r != nil { // act asserts types of matrix entries
			w, err = nil, fmt.Errorf("invalid workflow: %v", r)
		}
	}()
	wf, err := model.ReadWorkflow(bytes.NewReader(content), false)
	if err != nil {
		return nil, err
	}
	if len(wf.Jobs) == 0 {
		return nil, errors.New("no jobs are defined in the workflow")
	}
	events, err := triggers(wf.RawOn)
	if err != nil {
		return nil, err
	}
	w = &Workflow{Name: wf.Name, Events: events, Inputs: map[string]Input{}}
	if d := wf.WorkflowDispatchConfig(); d != nil {
		for k, in := range d.Inputs {
			w.Inputs[k] = Input{Description: in.Description, Required: in.Required, Default: in.Default, Type: in.Type, Options: in.Options}
		}
	}
	order, err := jobOrder(wf)
	if err != nil {
		return nil, err
	}
	envs, err := environments(content)
	if err != nil {
		return nil, err
	}
	groups, err := jobConcurrency(content)
	if err != nil {
		return nil, err
	}
	for _, key := range order {
		if j := wf.Jobs[key]; j != nil && j.Uses != "" {
			jobs, err := expandCall(key, j, resolve, depth)
			if err != nil {
				return nil, err
			}
			w.Jobs = append(w.Jobs, jobs...)
			continue
		}
		jobs, err := expand(key, wf.Jobs[key])
		if err != nil {
			return nil, err
		}
		for i := range jobs {
			jobs[i].Environment, jobs[i].Concurrency = envs[key], groups[key]
		}
		w.Jobs = append(w.Jobs, jobs...)
	}
	return w, nil
}

// triggers reads on: as a name, a list of names or a map of names to
// their filters.
func triggers(on yaml.Node) (map[string]Filter, error) {
	out := map[string]Filter{}
	switch on.Kind {
	case yaml.ScalarNode:
		out[on.Value] = Filter{}
	case yaml.SequenceNode:
		var names []string
		if err := on.Decode(&names); err != nil {
			return nil, fmt.Errorf("invalid on: %w", err)
		}
		for _, n := range names {
			out[n] = Filter{}
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(on.Content); i += 2 {
			var f struct {
				Branches       stringList `yaml:"branches"`
				BranchesIgnore stringList `yaml:"branches-ignore"`
				Tags           stringList `yaml:"tags"`
				TagsIgnore     stringList `yaml:"tags-ignore"`
				Paths          stringList `yaml:"paths"`
				PathsIgnore    stringList `yaml:"paths-ignore"`
				Types          stringList `yaml:"types"`
				Workflows      stringList `yaml:"workflows"`
			}
			var crons []string
			switch v := on.Content[i+1]; v.Kind {
			case yaml.MappingNode:
				if err := v.Decode(&f); err != nil {
					return nil, fmt.Errorf("invalid on.%s: %w", on.Content[i].Value, err)
				}
			case yaml.SequenceNode: // schedule: a list of {cron: ...}
				var list []struct {
					Cron string `yaml:"cron"`
				}
				if err := v.Decode(&list); err != nil {
					return nil, fmt.Errorf("invalid on.%s: %w", on.Content[i].Value, err)
				}
				for _, c := range list {
					crons = append(crons, c.Cron)
				}
			}
			out[on.Content[i].Value] = Filter{Branches: f.Branches, BranchesIgnore: f.BranchesIgnore, Tags: f.Tags,
				TagsIgnore: f.TagsIgnore, Paths: f.Paths, PathsIgnore: f.PathsIgnore, Types: f.Types, Workflows: f.Workflows,
				Crons: crons}
		}
	default:
		return nil, errors.New("the workflow must have an on: section")
	}
	return out, nil
}

// stringList is a YAML string or list of strings.
type stringList []string

// UnmarshalYAML takes a scalar as a list of one.
func (l *stringList) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		*l = []string{n.Value}
		return nil
	}
	var list []string
	err := n.Decode(&list)
	*l = list
	return err
}

// jobOrder sorts the job keys so that each comes after its needs; a need
// that does not exist or a cycle is an error.
func jobOrder(wf *model.Workflow) ([]string, error) {
	keys := make([]string, 0, len(wf.Jobs))
	for k := range wf.Jobs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	state := map[string]int{}
	var order []string
	var visit func(k string) error
	visit = func(k string) error {
		switch state[k] {
		case 1:
			return fmt.Errorf("the job %q needs itself through its needs", k)
		case 2:
			return nil
		}
		state[k] = 1
		for _, n := range wf.Jobs[k].Needs() {
			if _, ok := wf.Jobs[n]; !ok {
				return fmt.Errorf("the job %q needs %q, which is not defined", k, n)
			}
			if err := visit(n); err != nil {
				return err
			}
		}
		state[k] = 2
		order = append(order, k)
		return nil
	}
	for _, k := range keys {
		if err := visit(k); err != nil {
			return nil, err
		}
	}
	return order, nil
}

// expand makes the jobs of one job key: one per matrix combination.
func expand(key string, j *model.Job) ([]Job, error) {
	if j == nil {
		return nil, fmt.Errorf("the job %q is empty", key)
	}
	if j.Uses != "" {
		return nil, fmt.Errorf("the job %q calls a reusable workflow, which this server does not run", key)
	}
	name := j.Name
	if name == "" {
		name = key
	}
	steps := make([]string, 0, len(j.Steps))
	for _, s := range j.Steps {
		if s != nil {
			steps = append(steps, StepName(s.Name, s.Uses, s.Run, s.ID))
		}
	}
	base := Job{Key: key, Name: name, Needs: j.Needs(), Labels: j.RunsOn(), Steps: steps}
	if j.Strategy == nil {
		return []Job{base}, nil
	}
	matrices, err := j.GetMatrixes()
	if err != nil {
		return nil, fmt.Errorf("the job %q: %w", key, err)
	}
	if len(matrices) == 0 || (len(matrices) == 1 && len(matrices[0]) == 0) {
		return []Job{base}, nil
	}
	out := make([]Job, 0, len(matrices))
	for _, m := range matrices {
		job := base
		job.Matrix = m
		if !strings.Contains(name, "${{") {
			job.Name = name + " (" + matrixValues(m) + ")"
		}
		out = append(out, job)
	}
	return out, nil
}

// matrixValues is a combination's values, by sorted key, joined as the
// platform shows them in a job's name.
func matrixValues(m map[string]any) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	vals := make([]string, 0, len(keys))
	for _, k := range keys {
		vals = append(vals, fmt.Sprint(m[k]))
	}
	return strings.Join(vals, ", ")
}

// StepName is a step's display name: its name, else "Run " and its
// action or the first line of its script.
func StepName(name, uses, run, id string) string {
	switch {
	case name != "":
		return name
	case uses != "":
		return "Run " + uses
	case run != "":
		first, _, _ := strings.Cut(strings.TrimSpace(run), "\n")
		return "Run " + first
	}
	return id
}
