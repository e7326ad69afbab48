package actions_test

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/actions"
	"forgeapi/internal/actions/engine"
	"forgeapi/internal/actions/engine/dockertest"
	"forgeapi/internal/app"
	"forgeapi/internal/apptest"
	"forgeapi/internal/testwait"
)

// containerWorkflow has a job on ubuntu-latest (mapped to the test
// image) that reads the checked-out tree and the API with its
// GITHUB_TOKEN, and a container: job with env that uploads an artifact
// with the official client (node and its modules mounted at their
// paths).
const containerWorkflow = `name: ContainersE2E
on: push
jobs:
  image:
    runs-on: ubuntu-latest
    steps:
      - run: cat /etc/os-release MARKER README.md
      - run: |
          wget -qO- --header "Authorization: token ${{ secrets.GITHUB_TOKEN }}" "$GITHUB_SERVER_URL/repos/octo/hello" | grep -o '"full_name": *"[^"]*"'
  upload:
    runs-on: ubuntu-latest
    container:
      image: IMAGE
      env:
        GREETING: hi-from-container-env
      volumes: [NODE:NODE, MODULES:MODULES]
    steps:
      - run: |
          echo "env [$GREETING] $(cat MARKER)"
          mkdir -p out && echo hello > out/a.txt
          export GITHUB_SERVER_URL=http://forgeapi.localhost
          node NODE/actions-runtime.mjs upload from-container out
`

// TestContainerJobsThroughTheServer runs jobs in containers with the
// built-in runner mapping ubuntu-latest to the test image: the steps run
// in the image, see the checked-out tree, reach the API with
// GITHUB_TOKEN and upload an artifact; a cancel stops the container; no
// container is left.
func TestContainerJobsThroughTheServer(t *testing.T) {
	apptest.SkipJobsUnderRace(t)
	img := dockertest.JobImage(t)
	node := apptest.NodeModules(t, "@actions/artifact")
	modules, err := filepath.EvalSymlinks(filepath.Join(node, "node_modules"))
	apptest.Must(t, "node_modules", err)
	f := start(t, func(c *app.Config) { c.ActionsRunner.Images = map[string]string{"ubuntu-latest": img} })
	ctx := apptest.Ctx()
	wf := strings.NewReplacer("IMAGE", img, "MARKER", dockertest.Marker, "MODULES", modules, "NODE", node).Replace(containerWorkflow)
	f.push(t, map[string]string{"README.md": "checked-out-readme\n", ".github/workflows/c.yml": wf})
	run := slowRun(t, f, "c.yml")
	jobs := jobsByName(t, f, run.GetID(), "")
	if len(jobs) == 0 {
		cr, _, _ := f.c.Checks.ListCheckRunsForRef(ctx, "octo", "hello", run.GetHeadSHA(), nil)
		for _, c := range cr.CheckRuns {
			t.Logf("check %s: %s %s", c.GetName(), c.GetOutput().GetTitle(), c.GetOutput().GetSummary())
		}
		t.Fatalf("run %s %s: no jobs", run.GetName(), run.GetConclusion())
	}
	imageLog, uploadLog := f.jobLog(t, jobs["image"].GetID()), f.jobLog(t, jobs["upload"].GetID())
	if run.GetConclusion() != "success" {
		t.Fatalf("run %s; image log:\n%s\nupload log:\n%s", run.GetConclusion(), imageLog, uploadLog)
	}
	for _, want := range []string{"ID=forgeapi-test", dockertest.MarkerText, "checked-out-readme", `"full_name":"octo/hello"`} {
		if !strings.Contains(imageLog, want) {
			t.Errorf("image log lacks %q:\n%s", want, imageLog)
		}
	}
	if !strings.Contains(uploadLog, "env [hi-from-container-env] "+dockertest.MarkerText) {
		t.Errorf("upload log:\n%s", uploadLog)
	}
	list, _, err := f.c.Actions.ListWorkflowRunArtifacts(ctx, "octo", "hello", run.GetID(), nil)
	apptest.Must(t, "list artifacts", err)
	if list.GetTotalCount() != 1 || list.Artifacts[0].GetName() != "from-container" || list.Artifacts[0].GetSizeInBytes() == 0 {
		t.Fatalf("artifacts %+v", list)
	}
	if left := dockertest.Leftovers(t, engine.JobLabel, "ContainersE2E"); len(left) > 0 {
		t.Fatalf("containers left: %v", left)
	}

	apptest.Step(t, "a cancel stops the job's container at once", func(t *testing.T) {
		f.push(t, map[string]string{".github/workflows/slow.yml": "name: ContainersSlow\non: push\njobs:\n  slow:\n" +
			"    runs-on: ubuntu-latest\n    steps:\n      - run: sleep 600\n"})
		var runID int64
		testwait.For(t, "the sleep step running in its container", func() error {
			runs, _, err := f.c.Actions.ListRepositoryWorkflowRuns(ctx, "octo", "hello", &github.ListWorkflowRunsOptions{Event: "push"})
			if err != nil {
				return err
			}
			for _, r := range runs.WorkflowRuns {
				if r.GetName() == "ContainersSlow" {
					runID = r.GetID()
				}
			}
			if runID == 0 {
				return fmt.Errorf("no run yet")
			}
			if j := jobsByName(t, f, runID, "")["slow"]; j == nil || len(j.Steps) < 2 || j.Steps[1].GetStatus() != "in_progress" {
				return fmt.Errorf("job %+v", j)
			}
			if len(dockertest.Running(t, engine.JobLabel, "ContainersSlow")) == 0 {
				return fmt.Errorf("no container running")
			}
			return nil
		})
		time.Sleep(time.Second) // the sleep runs
		died := dockertest.Dies(t, engine.JobLabel, "ContainersSlow")
		begin := time.Now()
		resp, err := f.c.Actions.CancelWorkflowRunByID(ctx, "octo", "hello", runID)
		if resp == nil || resp.StatusCode != http.StatusAccepted {
			t.Fatalf("cancel: %v %v", resp, err)
		}
		stopped := died().Sub(begin)
		run := slowRun(t, f, "slow.yml")
		// The step sleeps 600 s: stopped within 10 s is the cancel's doing.
		// The time it takes is logged, not asserted (within a second on a
		// quiet machine; 1.03 s was seen under load).
		if run.GetConclusion() != "cancelled" || stopped > 10*time.Second {
			t.Fatalf("run %s, container stopped %v after the cancel", run.GetConclusion(), stopped)
		}
		t.Logf("cancel to container stopped: %v", stopped)
		testwait.For(t, "no container of the job left", func() error {
			if left := dockertest.Leftovers(t, engine.JobLabel, "ContainersSlow"); len(left) > 0 {
				return fmt.Errorf("containers left: %v", left)
			}
			return nil
		})
	})
}

// TestContainerJobWithoutRuntime: on a runner where no Docker daemon
// answers, a container: job fails at once, its log saying why, and a
// job on an unmapped label still runs on the host. The message is the
// failed job's check run annotation too.
func TestContainerJobWithoutRuntime(t *testing.T) {
	apptest.SkipJobsUnderRace(t)
	t.Setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
	f := start(t)
	f.push(t, map[string]string{".github/workflows/c.yml": "on: push\njobs:\n  boxed:\n    runs-on: ubuntu-latest\n" +
		"    container: debian:12\n    steps: [{run: echo in-a-box}]\n  plain:\n    runs-on: ubuntu-latest\n    steps: [{run: echo on-the-host}]\n"})
	run := f.completedRun(t, "c.yml", 1)
	jobs := jobsByName(t, f, run.GetID(), "")
	boxed, plain := jobs["boxed"], jobs["plain"]
	if run.GetConclusion() != "failure" || boxed.GetConclusion() != "failure" || plain.GetConclusion() != "success" {
		t.Fatalf("run %s, boxed %s, plain %s", run.GetConclusion(), boxed.GetConclusion(), plain.GetConclusion())
	}
	if log := f.jobLog(t, boxed.GetID()); !strings.Contains(log, "##[error]The job could not start: this job needs a container runtime") {
		t.Fatalf("log:\n%s", log)
	}
	if log := f.jobLog(t, plain.GetID()); !strings.Contains(log, "on-the-host") {
		t.Fatalf("log:\n%s", log)
	}
	list := annotationsOf(t, f, boxed)
	if len(list) != 1 || list[0].GetAnnotationLevel() != "failure" ||
		!strings.HasPrefix(list[0].GetMessage(), "The job could not start: this job needs a container runtime") {
		t.Fatalf("boxed job's annotations %v", list)
	}
}

// slowRun waits up to five minutes (jobs in containers start slowly on a
// loaded machine) for the workflow's run to complete and returns it.
func slowRun(t *testing.T, f *fixture, file string) *github.WorkflowRun {
	t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for {
		runs, _, err := f.c.Actions.ListWorkflowRunsByFileName(apptest.Ctx(), "octo", "hello", file, nil)
		apptest.Must(t, "list runs", err)
		if len(runs.WorkflowRuns) > 0 && runs.WorkflowRuns[0].GetStatus() == "completed" {
			return runs.WorkflowRuns[0]
		}
		if time.Now().After(deadline) {
			for k, j := range jobsByName(t, f, runs.WorkflowRuns[0].GetID(), "") {
				t.Logf("job %s: %s %s runner %q steps %d", k, j.GetStatus(), j.GetConclusion(), j.GetRunnerName(), len(j.Steps))
			}
			t.Fatalf("the run of %s did not complete in 5 minutes", file)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestContainerKilledRunnerLeavesNothing kills (-9) a `forgeapi runner
// run` process (the real binary) in the middle of a container job with a
// service: its containers and the job's network outlive it; the same
// runner started again removes them.
func TestContainerKilledRunnerLeavesNothing(t *testing.T) {
	apptest.SkipJobsUnderRace(t)
	img := dockertest.JobImage(t)
	t.Parallel()
	bin := apptest.ServerBinary(t, t.TempDir())
	rm := startRemote(t, "killed-boxes", "boxed")
	start := func() (kill func()) {
		cmd := exec.Command(bin, "runner", "run", "--config", rm.cfgPath, "--work", t.TempDir(), "--images", "boxed="+img)
		killGroup, out := startKillable(t, cmd) // the runner and the containers' clients it started
		return func() {
			killGroup()
			t.Logf("runner output:\n%s", out.String())
		}
	}
	kill := start()
	rm.push(t, map[string]string{".github/workflows/k.yml": "name: ContainersKilled\non: push\njobs:\n  slow:\n" +
		"    runs-on: [self-hosted, boxed]\n    services:\n      web:\n        image: " + img + "\n    steps:\n      - run: sleep 600\n"})
	networks := func() []string {
		out, err := exec.Command("docker", "network", "ls", "-q", "--filter", "name=act-ContainersKilled").Output()
		apptest.Must(t, "docker network ls", err)
		return strings.Fields(string(out))
	}
	testwait.For(t, "the job's container and its service running", func() error {
		if n := len(dockertest.Running(t, engine.JobLabel, "ContainersKilled")); n < 2 {
			return fmt.Errorf("%d containers running", n)
		}
		return nil
	})
	kill()
	if left := dockertest.Leftovers(t, engine.JobLabel, "ContainersKilled"); len(left) < 2 || len(networks()) != 1 {
		t.Fatalf("the kill left %d containers and networks %v: the test does not test", len(left), networks())
	}
	start()
	testwait.For(t, "the restarted runner removing the killed one's containers and network", func() error {
		if left := dockertest.Leftovers(t, engine.JobLabel, "ContainersKilled"); len(left) > 0 {
			return fmt.Errorf("containers left: %v", left)
		}
		if n := networks(); len(n) > 0 {
			return fmt.Errorf("networks left: %v", n)
		}
		return nil
	})
}

// servicesNetworkWorkflow has a job in a container with a service: act
// puts the job on the services' network, where the server's loopback
// address is the container's own; the job reaches the service by its id,
// the API ($GITHUB_API_URL, GITHUB_TOKEN) and the results service (an
// artifact uploaded with the official client) through the engine's relay.
const servicesNetworkWorkflow = `name: ContainersNet
on: push
jobs:
  net:
    runs-on: ubuntu-latest
    container:
      image: IMAGE
      volumes: [NODE:NODE, MODULES:MODULES]
    services:
      web:
        image: IMAGE
    steps:
      - run: for i in 1 2 3 4 5 6 7 8 9 10; do wget -qO- http://web:8080/ && break; sleep 0.5; done
      - run: |
          echo "api [$GITHUB_API_URL]"
          wget -qO- --header "Authorization: token ${{ secrets.GITHUB_TOKEN }}" "$GITHUB_API_URL/repos/octo/hello" | grep -o '"full_name": *"[^"]*"'
      - run: |
          mkdir -p out && echo hello > out/a.txt
          export GITHUB_SERVER_URL=http://forgeapi.localhost
          node NODE/actions-runtime.mjs upload from-services-net out
`

// TestContainerJobOnServicesNetworkReachesTheServer: a container job
// with services, on their network, reaches the service by name and the
// server (API call with GITHUB_TOKEN, artifact upload) listening on a
// loopback address.
func TestContainerJobOnServicesNetworkReachesTheServer(t *testing.T) {
	apptest.SkipJobsUnderRace(t)
	img := dockertest.JobImage(t)
	node := apptest.NodeModules(t, "@actions/artifact")
	modules, err := filepath.EvalSymlinks(filepath.Join(node, "node_modules"))
	apptest.Must(t, "node_modules", err)
	f := start(t, func(c *app.Config) { c.ActionsRunner.Images = map[string]string{"ubuntu-latest": img} })
	wf := strings.NewReplacer("IMAGE", img, "MODULES", modules, "NODE", node).Replace(servicesNetworkWorkflow)
	f.push(t, map[string]string{".github/workflows/n.yml": wf})
	run := slowRun(t, f, "n.yml")
	job := jobsByName(t, f, run.GetID(), "")["net"]
	if job == nil {
		t.Fatalf("run %s: no job", run.GetConclusion())
	}
	log := f.jobLog(t, job.GetID())
	if run.GetConclusion() != "success" {
		t.Fatalf("run %s; log:\n%s", run.GetConclusion(), log)
	}
	for _, want := range []string{dockertest.ServiceText, `"full_name":"octo/hello"`} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	if strings.Contains(log, "api [http://127.0.0.1") || !strings.Contains(log, "/api/v3]") {
		t.Errorf("GITHUB_API_URL is not the relay's:\n%s", log)
	}
	list, _, err := f.c.Actions.ListWorkflowRunArtifacts(apptest.Ctx(), "octo", "hello", run.GetID(), nil)
	apptest.Must(t, "list artifacts", err)
	if list.GetTotalCount() != 1 || list.Artifacts[0].GetName() != "from-services-net" || list.Artifacts[0].GetSizeInBytes() == 0 {
		t.Fatalf("artifacts %+v", list)
	}
	if left := dockertest.Leftovers(t, engine.JobLabel, "ContainersNet"); len(left) > 0 {
		t.Fatalf("containers left: %v", left)
	}
}

// TestContainerBuiltinRunnerRemovesLeftovers: the built-in runner, when
// the server starts, removes the containers of its jobs that a killed
// server process left (labelled with its name and a process that is
// gone), and keeps another runner's.
func TestContainerBuiltinRunnerRemovesLeftovers(t *testing.T) {
	img := dockertest.JobImage(t)
	name := fmt.Sprintf("sweeper-%d", time.Now().UnixNano())
	host, _ := os.Hostname()
	leave := func(runner string) string {
		out, err := exec.Command("docker", "run", "-d", "--label", engine.JobLabel+"=builtin-leftover",
			"--label", engine.RunnerLabel+"="+engine.RunnerLabelValue(runner),
			"--label", engine.ProcessLabel+"="+host+"/999999999/1", img).Output()
		apptest.Must(t, "docker run", err)
		id := strings.TrimSpace(string(out))
		t.Cleanup(func() { _ = exec.Command("docker", "rm", "-f", id).Run() })
		return id
	}
	ours, theirs := leave(actions.BuiltinIdentity(name)), leave("another runner")
	start(t, func(c *app.Config) { c.ActionsRunner.Name = name })
	there := func(id string) bool { return exec.Command("docker", "inspect", id).Run() == nil }
	testwait.For(t, "the built-in runner removing its killed process's container", func() error {
		if there(ours) {
			return fmt.Errorf("container %s there", ours[:12])
		}
		return nil
	})
	if !there(theirs) {
		t.Fatal("another runner's container was removed")
	}
}
