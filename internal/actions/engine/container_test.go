package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"forgeapi/internal/actions/engine/dockertest"
)

// runInContainer executes the workflow's job "j" with ubuntu-latest
// mapped to the test image, and fails the test when a container of the
// job is left.
func runInContainer(t *testing.T, ctx context.Context, wf string, onStep func(Step)) (Result, string) {
	t.Helper()
	img := dockertest.JobImage(t)
	var log bytes.Buffer
	work := t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "marker.txt"), []byte("from-the-workdir"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Execute(ctx, Spec{Workflow: []byte(strings.ReplaceAll(wf, "IMAGE", img)), JobKey: "j", Workdir: work,
		Scratch: t.TempDir(), Event: "push", Log: &log, Images: map[string]string{"ubuntu-latest": img}, OnStep: onStep})
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if left := dockertest.Leftovers(t, JobLabel, "EngineContainerTest"); len(left) > 0 {
		t.Errorf("containers left: %v", left)
	}
	return res, log.String()
}

func TestContainerRunsOnMappedImage(t *testing.T) {
	wf := "name: EngineContainerTest\non: push\njobs:\n  j:\n    runs-on: ubuntu-latest\n    steps:\n" +
		"      - run: cat /etc/os-release " + dockertest.Marker + "\n" +
		"      - run: echo \"workspace [$GITHUB_WORKSPACE] $(cat marker.txt)\"\n" +
		"      - run: echo \"runner [$RUNNER_OS] [$RUNNER_TEMP] [$LANG]\"\n"
	res, log := runInContainer(t, context.Background(), wf, nil)
	if res.Conclusion != Success || !strings.Contains(log, "ID=forgeapi-test") || !strings.Contains(log, dockertest.MarkerText) ||
		!strings.Contains(log, "] from-the-workdir") || !strings.Contains(log, "runner [Linux] [/tmp] [C.UTF-8]") {
		t.Fatalf("%+v\n%s", res, log)
	}
	t.Log(log)
}

func TestContainerKeyWithEnv(t *testing.T) {
	img := dockertest.JobImage(t)
	wf := "name: EngineContainerTest\non: push\njobs:\n  j:\n    runs-on: self-hosted\n    container:\n      image: " + img + "\n      env:\n        GREETING: from-container-env\n" +
		"    steps:\n      - run: echo \"env [$GREETING] $(cat " + dockertest.Marker + ")\"\n"
	var log bytes.Buffer
	res, err := Execute(context.Background(), Spec{Workflow: []byte(wf), JobKey: "j", Workdir: t.TempDir(), Scratch: t.TempDir(),
		Event: "push", Log: &log})
	if err != nil || res.Conclusion != Success || !strings.Contains(log.String(), "env [from-container-env] "+dockertest.MarkerText) {
		t.Fatalf("%+v %v\n%s", res, err, log.String())
	}
	if left := dockertest.Leftovers(t, JobLabel, "EngineContainerTest"); len(left) > 0 {
		t.Errorf("containers left: %v", left)
	}
}

func TestContainerServiceByName(t *testing.T) {
	wf := "name: EngineContainerTest\non: push\njobs:\n  j:\n    runs-on: ubuntu-latest\n    container: IMAGE\n    services:\n      web:\n        image: IMAGE\n" +
		"    steps:\n      - run: for i in 1 2 3 4 5 6 7 8 9 10; do wget -qO- http://web:8080/ && break; sleep 0.5; done\n"
	res, log := runInContainer(t, context.Background(), wf, nil)
	if res.Conclusion != Success || !strings.Contains(log, dockertest.ServiceText) {
		t.Fatalf("%+v\n%s", res, log)
	}
}

func TestContainerCancel(t *testing.T) {
	wf := "name: EngineContainerTest\non: push\njobs:\n  j:\n    runs-on: ubuntu-latest\n    steps:\n      - run: sleep 60\n"
	ctx, cancel := context.WithCancel(context.Background())
	var cancelled time.Time
	var died func() time.Time
	res, log := runInContainer(t, ctx, wf, func(s Step) {
		if s.Name == "Run sleep 60" && s.Status == "in_progress" {
			go func() {
				time.Sleep(1500 * time.Millisecond) // the sleep is running
				died = dockertest.Dies(t, JobLabel, "EngineContainerTest")
				cancelled = time.Now()
				cancel()
			}()
		}
	})
	took := time.Since(cancelled)
	stop := died().Sub(cancelled)
	// The step sleeps 60 s: stopped within 10 s is the cancel's doing.
	// The time it takes is logged and measured, not asserted (178 ms
	// quiet, over 1 s on a loaded machine: docs/actions.md).
	if res.Conclusion != Cancelled || stop > 10*time.Second || took > 10*time.Second {
		t.Fatalf("%+v: container stopped %v and Execute returned %v after the cancel\n%s", res, stop, took, log)
	}
	t.Logf("cancel to container stopped: %v, to Execute returned: %v", stop, took)
}

// TestContainerWithoutRuntime: a job needing containers fails to start,
// at once and saying why, when no Docker daemon answers; a host job with
// services too.
func TestContainerWithoutRuntime(t *testing.T) {
	t.Setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
	for name, wf := range map[string]string{
		"container": "name: EngineContainerTest\non: push\njobs:\n  j:\n    runs-on: self-hosted\n    container: alpine\n    steps: [{run: echo hi}]\n",
		"mapped":    "name: EngineContainerTest\non: push\njobs:\n  j:\n    runs-on: ubuntu-latest\n    steps: [{run: echo hi}]\n",
	} {
		begin := time.Now()
		_, err := Execute(context.Background(), Spec{Workflow: []byte(wf), JobKey: "j", Workdir: t.TempDir(), Scratch: t.TempDir(),
			Event: "push", Images: map[string]string{"ubuntu-latest": "some-image"}})
		if !errors.Is(err, ErrNoContainerRuntime) || time.Since(begin) > 15*time.Second {
			t.Errorf("%s: %v after %v", name, err, time.Since(begin))
		}
	}
	wf := "name: EngineContainerTest\non: push\njobs:\n  j:\n    runs-on: self-hosted\n    services:\n      db: {image: postgres}\n    steps: [{run: echo hi}]\n"
	if _, err := Execute(context.Background(), Spec{Workflow: []byte(wf), JobKey: "j", Workdir: t.TempDir(), Scratch: t.TempDir(),
		Event: "push"}); !errors.Is(err, ErrNoContainerRuntime) {
		t.Errorf("services on the host: %v", err)
	}
}

// TestContainerServicesBesideHostJob: a job on the host with services
// gets them, their ports published on the host (a port alone on a free
// one, read from job.services.ID.ports as on the platform), reached at
// localhost; its env interpolated; no container is left when the job ends.
func TestContainerServicesBesideHostJob(t *testing.T) {
	skipUnderRace(t)
	img := dockertest.JobImage(t)
	wf := "name: EngineContainerTest\non: push\njobs:\n  j:\n    runs-on: self-hosted\n    services:\n" +
		"      web:\n        image: " + img + "\n        ports: ['8080']\n        env: {SERVICE_SECRET: '${{ secrets.S }}'}\n" +
		"    steps:\n" +
		"      - run: echo \"port [${{ job.services.web.ports[8080] }}] [${{ job.services.web.ports['8080'] }}] id [${{ job.services.web.id }}]\"\n" +
		"      - run: wget -qO- http://localhost:${{ job.services.web.ports['8080'] }}/\n" +
		"      - run: wget -qO- http://127.0.0.1:$PORT/\n        env: {PORT: '${{ job.services.web.ports[8080] }}'}\n"
	var log bytes.Buffer
	var running []string
	res, err := Execute(context.Background(), Spec{Workflow: []byte(wf), JobKey: "j", Workdir: t.TempDir(), Scratch: t.TempDir(),
		Event: "push", Log: &log, Secrets: map[string]string{"S": "the-secret"}, OnStep: func(s Step) {
			if s.Number == 2 && s.Status == "in_progress" {
				out, _ := exec.Command("docker", "ps", "-q", "--no-trunc", "--filter", "label="+JobLabel).Output()
				for _, id := range strings.Fields(string(out)) {
					env, _ := exec.Command("docker", "inspect", "--format", "{{json .Config.Env}}", id).Output()
					if strings.Contains(string(env), "SERVICE_SECRET=the-secret") {
						running = append(running, id)
					}
				}
			}
		}})
	if err != nil || res.Conclusion != Success || strings.Count(log.String(), dockertest.ServiceText) != 2 {
		t.Fatalf("%+v %v\n%s", res, err, log.String())
	}
	if len(res.Steps) < 2 || !strings.Contains(res.Steps[1].Name, "${{ job.services.web.ports[8080] }}") {
		t.Errorf("the step's name is not the workflow's: %+v", res.Steps)
	}
	m := regexp.MustCompile(`port \[(\d+)\] \[(\d+)\] id \[([0-9a-f]{64})\]`).FindStringSubmatch(log.String())
	if m == nil || m[1] != m[2] || m[1] == "8080" {
		t.Fatalf("job.services context: %v\n%s", m, log.String())
	}
	if len(running) != 1 || running[0] != m[3] {
		t.Fatalf("the service container (its env interpolated) running during the job: %v, the context's id %s", running, m[3])
	}
	out, err := exec.Command("docker", "ps", "-aq", "--filter", "id="+m[3]).Output()
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Fatalf("the service container is left: %s %v", out, err)
	}
}

// TestContainerServicesBesideHostJobCancel: a cancelled host job's
// services are removed.
func TestContainerServicesBesideHostJobCancel(t *testing.T) {
	skipUnderRace(t)
	img := dockertest.JobImage(t)
	wf := "name: EngineContainerTest\non: push\njobs:\n  j:\n    runs-on: self-hosted\n    services:\n" +
		"      web:\n        image: " + img + "\n        ports: ['8080']\n    steps:\n      - run: sleep 60\n"
	ctx, cancel := context.WithCancel(context.Background())
	var seen []string
	runner := "cancel-test-" + fmt.Sprint(time.Now().UnixNano()) // this test's containers alone (tests of other packages run beside)
	res, err := Execute(ctx, Spec{Workflow: []byte(wf), JobKey: "j", Workdir: t.TempDir(), Scratch: t.TempDir(),
		Event: "push", Runner: runner, OnStep: func(s Step) {
			if s.Name == "Run sleep 60" && s.Status == "in_progress" {
				out, _ := exec.Command("docker", "ps", "-q", "--filter", "label="+RunnerLabel+"="+RunnerLabelValue(runner)).Output()
				seen = strings.Fields(string(out))
				cancel()
			}
		}})
	if err != nil || res.Conclusion != Cancelled || len(seen) == 0 {
		t.Fatalf("%+v %v, service containers during the step: %v", res, err, seen)
	}
	for _, id := range seen {
		if out, _ := exec.Command("docker", "ps", "-aq", "--filter", "id="+id).Output(); len(strings.TrimSpace(string(out))) > 0 {
			t.Errorf("service container %s left", id)
		}
	}
}

func TestParseImages(t *testing.T) {
	got, err := ParseImages(" ubuntu-latest=debian:12 , Linux=img:1,")
	if err != nil || len(got) != 2 || got["ubuntu-latest"] != "debian:12" || got["linux"] != "img:1" {
		t.Fatalf("%v %v", got, err)
	}
	if _, err := ParseImages("ubuntu-latest"); err == nil {
		t.Fatal("a mapping without an image parsed")
	}
}

// TestContainerRootFilesInWorkdir: files a container step writes as root
// into the bind-mounted work tree (a directory only root may enter among
// them) are the runner's user's again when the job ends: that user (the
// tree's owner; nobody when the test runs as root) removes the tree.
func TestContainerRootFilesInWorkdir(t *testing.T) {
	img := dockertest.JobImage(t)
	work, err := os.MkdirTemp("", "forgeapi-workdir-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(work) })
	owner := os.Getuid()
	if owner == 0 { // the runner's user is another: nobody
		owner = 65534
		if err := os.Chmod(work, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(work, owner, owner); err != nil {
			t.Fatal(err)
		}
	}
	wf := "name: EngineContainerTest\non: push\njobs:\n  j:\n    runs-on: ubuntu-latest\n    steps:\n" +
		"      - run: mkdir -p out/deep && echo x > out/deep/f && echo y > top.txt && chmod 700 out out/deep && id -u && ls -ln . out\n"
	var log bytes.Buffer
	res, err := Execute(context.Background(), Spec{Workflow: []byte(wf), JobKey: "j", Workdir: work, Scratch: t.TempDir(),
		Event: "push", Log: &log, Images: map[string]string{"ubuntu-latest": img}})
	if err != nil || res.Conclusion != Success {
		t.Fatalf("%+v %v\n%s", res, err, log.String())
	}
	if _, err := os.Stat(filepath.Join(work, "out", "deep", "f")); err != nil {
		t.Fatalf("the step's file: %v\n%s", err, log.String())
	}
	rm := exec.Command("rm", "-rf", work)
	if owner != os.Getuid() {
		rm.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(owner), Gid: uint32(owner)}}
	}
	if out, err := rm.CombinedOutput(); err != nil {
		t.Fatalf("the runner's user cannot remove the work tree: %v\n%s\n%s", err, out, log.String())
	}
	if _, err := os.Stat(work); !os.IsNotExist(err) {
		t.Fatalf("the work tree is left: %v", err)
	}
}

// TestContainerRemoveLeftovers: RemoveLeftovers removes the runner's
// containers whose process is gone, and keeps those of a live process
// and of other runners.
func TestContainerRemoveLeftovers(t *testing.T) {
	img := dockertest.JobImage(t)
	host, _ := os.Hostname()
	run := func(runner, process string) string {
		out, err := exec.Command("docker", "run", "-d", "--label", JobLabel+"=leftovers-test", "--label", RunnerLabel+"="+RunnerLabelValue(runner),
			"--label", ProcessLabel+"="+process, img).Output()
		if err != nil {
			t.Fatalf("docker run: %v", err)
		}
		id := strings.TrimSpace(string(out))
		t.Cleanup(func() { _ = exec.Command("docker", "rm", "-f", id).Run() })
		return id
	}
	gone := run("r1", host+"/"+fmt.Sprint(os.Getpid())+"/1") // this pid, another start: a reused pid
	live := run("r1", thisProcess())
	other := run("r2", host+"/999999/1")
	n, err := RemoveLeftovers(context.Background(), "r1")
	if err != nil || n != 1 {
		t.Fatalf("removed %d: %v", n, err)
	}
	for id, want := range map[string]bool{gone: false, live: true, other: true} {
		err := exec.Command("docker", "inspect", id).Run()
		if (err == nil) != want {
			t.Errorf("container %s there: %v, want %v", id[:12], err == nil, want)
		}
	}
}

// TestContainerFailedJobLeavesNothing: a container: job (act gives it
// its own options alone) with a service whose step fails leaves no
// container and no network (act leaves its job container running then).
func TestContainerFailedJobLeavesNothing(t *testing.T) {
	img := dockertest.JobImage(t)
	wf := "name: EngineContainerFails\non: push\njobs:\n  j:\n    runs-on: self-hosted\n    container:\n      image: " + img +
		"\n      options: --hostname boxed\n    services:\n      web:\n        image: " + img + "\n    steps:\n      - run: hostname; exit 3\n"
	var log bytes.Buffer
	res, err := Execute(context.Background(), Spec{Workflow: []byte(wf), JobKey: "j", Workdir: t.TempDir(), Scratch: t.TempDir(),
		Event: "push", Log: &log})
	if err != nil || res.Conclusion != Failure || !strings.Contains(log.String(), "Z boxed\n") {
		t.Fatalf("%+v %v\n%s", res, err, log.String())
	}
	out, err := exec.Command("docker", "ps", "-aq", "--filter", "name=act-EngineContainerFails").Output()
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("containers left: %q %v", out, err)
	}
	out, err = exec.Command("docker", "network", "ls", "-q", "--filter", "name=act-EngineContainerFails").Output()
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("networks left: %q %v", out, err)
	}
}
