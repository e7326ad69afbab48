package actions_test

import (
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// callerWorkflow calls a workflow of its own commit (with inputs from a
// job it needs and a mapped secret) and one of another repository at a
// tag (secrets: inherit), and reports both calls' outputs.
const callerWorkflow = `name: CI
on: push
jobs:
  setup:
    runs-on: ubuntu-latest
    outputs:
      who: ${{ steps.s.outputs.who }}
    steps:
      - id: s
        run: echo "who=world" >> "$GITHUB_OUTPUT"
  local:
    needs: setup
    uses: ./.github/workflows/greet.yml
    with:
      who: ${{ needs.setup.outputs.who }}
      loud: true
    secrets:
      token: ${{ secrets.DEPLOY_KEY }}
  remote:
    uses: octo/shared/.github/workflows/lib.yml@v1
    secrets: inherit
  report:
    needs: [local, remote]
    runs-on: ubuntu-latest
    steps:
      - run: echo "local said ${{ needs.local.outputs.greeting }} remote said ${{ needs.remote.outputs.answer }}"
`

const greetWorkflow = `name: Greet
on:
  workflow_call:
    inputs:
      who:
        type: string
        required: true
      loud:
        type: boolean
        default: false
    secrets:
      token:
        required: true
    outputs:
      greeting:
        value: ${{ jobs.second.outputs.text }}
jobs:
  first:
    name: Say hello
    runs-on: ubuntu-latest
    outputs:
      part: ${{ steps.p.outputs.part }}
    steps:
      - id: p
        run: |
          echo "input who=${{ inputs.who }} loud=${{ inputs.loud }} event=${{ github.event_name }} secret=${{ secrets.token }}"
          echo "part=hello ${{ inputs.who }}" >> "$GITHUB_OUTPUT"
  second:
    needs: first
    runs-on: ubuntu-latest
    outputs:
      text: ${{ steps.t.outputs.text }}
    steps:
      - id: t
        run: echo "text=${{ needs.first.outputs.part }}!" >> "$GITHUB_OUTPUT"
`

const libWorkflow = `on:
  workflow_call:
    outputs:
      answer:
        value: ${{ jobs.answer.outputs.a }}
jobs:
  answer:
    runs-on: ubuntu-latest
    outputs:
      a: ${{ steps.x.outputs.a }}
    steps:
      - id: x
        run: |
          echo "inherited ${{ secrets.DEPLOY_KEY }} repository ${{ github.repository }}"
          echo "a=42" >> "$GITHUB_OUTPUT"
`

// TestReusableWorkflows runs a workflow that calls a local reusable
// workflow and one of a private repository of the same owner: refused
// ("workflow was not found") until that repository's Actions access
// level shares it, then the called jobs run as "caller / callee" jobs
// with the inputs, secrets (mapped and inherited, masked) and outputs.
func TestReusableWorkflows(t *testing.T) {
	t.Parallel()
	apptest.SkipJobsUnderRace(t)
	f := start(t)
	ctx := apptest.Ctx()
	f.env.Repo(f.owner, "shared", apptest.RepoOpts{Private: true})
	shared := apptest.WorkTree(t, map[string]string{".github/workflows/lib.yml": libWorkflow})
	apptest.Git(t, shared, "remote", "add", "origin", f.env.GitURL("octo", "shared", "octo", f.token))
	apptest.Git(t, shared, "tag", "v1")
	apptest.Git(t, shared, "push", "-q", "origin", "HEAD:refs/heads/main", "v1")
	setSecretAndVariable(t, f.c, "octo", "hello")

	f.push(t, map[string]string{".github/workflows/ci.yml": callerWorkflow, ".github/workflows/greet.yml": greetWorkflow})
	refused := f.completedRun(t, "ci.yml", 1)
	if refused.GetConclusion() != "failure" || len(jobsByName(t, f, refused.GetID(), "")) != 0 {
		t.Fatalf("a call of a private repository's workflow not shared: %s", refused.GetConclusion())
	}

	_, err := f.c.Repositories.EditActionsAccessLevel(ctx, "octo", "shared", github.RepositoryActionsAccessLevel{AccessLevel: github.Ptr("user")})
	apptest.Must(t, "share octo/shared's workflows", err)
	f.push(t, map[string]string{"README.md": "again\n"})
	run := f.completedRun(t, "ci.yml", 2)
	jobs := jobsByName(t, f, run.GetID(), "")
	var names []string
	for n := range jobs {
		names = append(names, n)
	}
	for _, want := range []string{"setup", "local / Say hello", "local / second", "remote / answer", "report"} {
		if jobs[want] == nil {
			t.Fatalf("no job %q among %q", want, names)
		}
	}
	if len(jobs) != 5 {
		t.Fatalf("jobs %q", names)
	}
	logs := map[string]string{}
	for n, j := range jobs {
		logs[n] = f.jobLog(t, j.GetID())
		if j.GetConclusion() != "success" {
			t.Fatalf("job %s %s:\n%s", n, j.GetConclusion(), logs[n])
		}
	}
	if run.GetConclusion() != "success" {
		t.Fatalf("run %s", run.GetConclusion())
	}
	if l := logs["local / Say hello"]; !strings.Contains(l, "input who=world loud=true event=push secret=***") {
		t.Fatalf("the called job's inputs:\n%s", l)
	}
	if l := logs["remote / answer"]; !strings.Contains(l, "inherited *** repository octo/hello") {
		t.Fatalf("the inherited secret:\n%s", l)
	}
	if l := logs["report"]; !strings.Contains(l, "local said hello world! remote said 42") {
		t.Fatalf("the calls' outputs:\n%s\n%v", l, logs)
	}
}

// ifCallerWorkflow calls one workflow twice: under an if: that holds
// (the caller's github context) and under if: false.
const ifCallerWorkflow = `name: Conditional
on: push
jobs:
  on:
    if: github.event_name == 'push'
    uses: ./.github/workflows/hello.yml
  off:
    if: ${{ false }}
    uses: ./.github/workflows/hello.yml
  after-off:
    needs: off
    runs-on: ubuntu-latest
    steps:
      - run: echo "ran after a skipped call"
`

const helloWorkflow = `on: workflow_call
jobs:
  hello:
    runs-on: ubuntu-latest
    steps:
      - run: echo "hello from the called workflow"
`

// TestReusableWorkflowCallerIf: a caller job whose if: is false makes
// its called jobs skipped (no step runs), and the jobs that need it are
// skipped; a caller whose if: holds runs its call; the run succeeds.
func TestReusableWorkflowCallerIf(t *testing.T) {
	t.Parallel()
	apptest.SkipJobsUnderRace(t)
	f := start(t)
	f.push(t, map[string]string{".github/workflows/cond.yml": ifCallerWorkflow, ".github/workflows/hello.yml": helloWorkflow})
	run := f.completedRun(t, "cond.yml", 1)
	jobs := jobsByName(t, f, run.GetID(), "")
	want := map[string]string{"on / hello": "success", "off / hello": "skipped", "after-off": "skipped"}
	for name, conclusion := range want {
		j := jobs[name]
		if j == nil || j.GetConclusion() != conclusion {
			t.Fatalf("job %q: %v, want %s (jobs %v)", name, j, conclusion, jobs)
		}
	}
	if l := f.jobLog(t, jobs["on / hello"].GetID()); !strings.Contains(l, "hello from the called workflow") {
		t.Fatalf("the called job's log:\n%s", l)
	}
	for _, st := range jobs["off / hello"].Steps {
		if st.GetConclusion() != "skipped" {
			t.Fatalf("a step of the skipped call: %+v", st)
		}
	}
	if run.GetConclusion() != "success" {
		t.Fatalf("run %s", run.GetConclusion())
	}
}

// A chain of three workflows: chain.yml calls mid.yml, whose job calls
// leaf.yml; inputs go down (a need's output, then an input of mid), the
// outputs come up through both calls.
const chainWorkflow = `name: Chain
on: push
jobs:
  prep:
    runs-on: ubuntu-latest
    outputs:
      seed: ${{ steps.s.outputs.seed }}
    steps:
      - id: s
        run: echo "seed=7" >> "$GITHUB_OUTPUT"
  outer:
    needs: prep
    uses: ./.github/workflows/mid.yml
    with:
      seed: ${{ needs.prep.outputs.seed }}
  show:
    needs: outer
    runs-on: ubuntu-latest
    steps:
      - run: echo "chain said ${{ needs.outer.outputs.result }}"
`

const midWorkflow = `on:
  workflow_call:
    inputs:
      seed:
        type: string
        required: true
    outputs:
      result:
        value: ${{ jobs.inner.outputs.value }}-${{ jobs.note.outputs.n }}
jobs:
  note:
    runs-on: ubuntu-latest
    outputs:
      n: ${{ steps.n.outputs.n }}
    steps:
      - id: n
        run: echo "n=mid" >> "$GITHUB_OUTPUT"
  inner:
    needs: note
    uses: ./.github/workflows/leaf.yml
    with:
      value: ${{ inputs.seed }}x${{ needs.note.outputs.n }}
`

const leafWorkflow = `on:
  workflow_call:
    inputs:
      value:
        type: string
        required: true
    outputs:
      value:
        value: ${{ jobs.work.outputs.v }}
jobs:
  work:
    runs-on: ubuntu-latest
    outputs:
      v: ${{ steps.w.outputs.v }}
    steps:
      - id: w
        run: |
          echo "leaf got ${{ inputs.value }}"
          echo "v=leaf-${{ inputs.value }}" >> "$GITHUB_OUTPUT"
`

// TestReusableWorkflowChain: a called workflow that calls another runs
// its jobs as "outer / inner / work", with the inputs each level gives
// and the outputs surfacing through both calls.
func TestReusableWorkflowChain(t *testing.T) {
	t.Parallel()
	apptest.SkipJobsUnderRace(t)
	f := start(t)
	f.push(t, map[string]string{".github/workflows/chain.yml": chainWorkflow, ".github/workflows/mid.yml": midWorkflow,
		".github/workflows/leaf.yml": leafWorkflow})
	run := f.completedRun(t, "chain.yml", 1)
	jobs := jobsByName(t, f, run.GetID(), "")
	logs := map[string]string{}
	for n, j := range jobs {
		logs[n] = f.jobLog(t, j.GetID())
	}
	for _, name := range []string{"prep", "outer / note", "outer / inner / work", "show"} {
		if j := jobs[name]; j == nil || j.GetConclusion() != "success" {
			t.Fatalf("job %q: %v; logs %v", name, j, logs)
		}
	}
	if len(jobs) != 4 || run.GetConclusion() != "success" {
		t.Fatalf("run %s, jobs %v", run.GetConclusion(), logs)
	}
	if l := logs["outer / inner / work"]; !strings.Contains(l, "leaf got 7xmid") {
		t.Fatalf("the innermost job's input:\n%s", l)
	}
	if l := logs["show"]; !strings.Contains(l, "chain said leaf-7xmid-mid") {
		t.Fatalf("the chain's outputs:\n%s", l)
	}
}

// TestReusableWorkflowDepthLimit: a chain of five workflows (four calls)
// fails the run as the platform does, past its limit of four levels; a
// dispatch of it is refused with the platform's message; a workflow that
// calls itself fails likewise.
func TestReusableWorkflowDepthLimit(t *testing.T) {
	t.Parallel()
	apptest.SkipJobsUnderRace(t)
	f := start(t)
	call := func(next string) string {
		return "on: workflow_call\njobs:\n  step:\n    uses: ./.github/workflows/" + next + "\n"
	}
	f.push(t, map[string]string{
		".github/workflows/deep.yml": "on: [push, workflow_dispatch]\njobs:\n  top:\n    uses: ./.github/workflows/d1.yml\n",
		".github/workflows/d1.yml":   call("d2.yml"),
		".github/workflows/d2.yml":   call("d3.yml"),
		".github/workflows/d3.yml":   call("d4.yml"),
		".github/workflows/d4.yml":   "on: workflow_call\njobs:\n  leaf:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo leaf\n",
		".github/workflows/loop.yml": "on: [push, workflow_call, workflow_dispatch]\njobs:\n  again:\n    uses: ./.github/workflows/loop.yml\n",
	})
	for _, file := range []string{"deep.yml", "loop.yml"} {
		run := f.completedRun(t, file, 1)
		if run.GetConclusion() != "failure" || len(jobsByName(t, f, run.GetID(), "")) != 0 {
			t.Fatalf("%s: run %s", file, run.GetConclusion())
		}
		_, _, err := f.c.Actions.CreateWorkflowDispatchEventByFileName(apptest.Ctx(), "octo", "hello", file,
			github.CreateWorkflowDispatchEventRequest{Ref: "main"})
		if err == nil || !strings.Contains(err.Error(), "but doing so would exceed the limit on called workflow depth of 3") {
			t.Fatalf("dispatch of %s: %v", file, err)
		}
	}
}

// matrixCallerWorkflow calls a workflow once per combination of its
// matrix, with the combination as input.
const matrixCallerWorkflow = `name: Matrix call
on: push
jobs:
  build:
    strategy:
      matrix:
        os: [linux, mac]
    uses: ./.github/workflows/per-os.yml
    with:
      os: ${{ matrix.os }}
  after:
    needs: build
    runs-on: ubuntu-latest
    steps:
      - run: echo "after both calls"
`

const perOSWorkflow = `on:
  workflow_call:
    inputs:
      os:
        type: string
        required: true
jobs:
  first:
    runs-on: ubuntu-latest
    outputs:
      os: ${{ steps.o.outputs.os }}
    steps:
      - id: o
        run: echo "os=${{ inputs.os }}" >> "$GITHUB_OUTPUT"
  second:
    needs: first
    runs-on: ubuntu-latest
    steps:
      - run: echo "input ${{ inputs.os }} first said ${{ needs.first.outputs.os }}"
`

// TestReusableWorkflowMatrixCaller: a caller job with a matrix of two
// makes two calls, "build (linux) / ..." and "build (mac) / ...", each
// with its combination as input; a called job's needs are its own
// call's jobs; the job that needs the caller waits for both calls.
func TestReusableWorkflowMatrixCaller(t *testing.T) {
	t.Parallel()
	apptest.SkipJobsUnderRace(t)
	f := start(t)
	f.push(t, map[string]string{".github/workflows/matrix.yml": matrixCallerWorkflow, ".github/workflows/per-os.yml": perOSWorkflow})
	run := f.completedRun(t, "matrix.yml", 1)
	jobs := jobsByName(t, f, run.GetID(), "")
	logs := map[string]string{}
	for n, j := range jobs {
		logs[n] = f.jobLog(t, j.GetID())
	}
	if len(jobs) != 5 || run.GetConclusion() != "success" {
		t.Fatalf("run %s, jobs %v", run.GetConclusion(), logs)
	}
	for _, os := range []string{"linux", "mac"} {
		name := "build (" + os + ") / second"
		if l := logs[name]; jobs[name].GetConclusion() != "success" || !strings.Contains(l, "input "+os+" first said "+os) {
			t.Fatalf("%s:\n%s", name, l)
		}
	}
	after, second := jobs["after"], jobs["build (mac) / second"]
	if after.GetConclusion() != "success" || after.GetStartedAt().Before(second.GetCompletedAt().Time) {
		t.Fatalf("after: %s started %v, before the calls completed (%v)", after.GetConclusion(), after.GetStartedAt(), second.GetCompletedAt())
	}
}
