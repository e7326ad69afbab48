package engine

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/moby/moby/client"
	"github.com/nektos/act/pkg/container"
	"github.com/nektos/act/pkg/model"
	"gopkg.in/yaml.v3"
)

// JobLabel is the label of every container (job and services) a job
// runs, its value the job's marker: the containers a job left are found
// by it (docker ps -a --filter label=forgeapi.actions.job).
const JobLabel = "forgeapi.actions.job"

// ErrNoContainerRuntime is returned for a job that needs containers on a
// runner where no container runtime (Docker daemon) answers.
var ErrNoContainerRuntime = errors.New("this job needs a container runtime (it has container: or services:, " +
	"or its runs-on label is mapped to an image) and none answers on this runner")

// ParseImages reads label-to-image mappings as act's -P takes them,
// LABEL=IMAGE separated by commas (spaces around them ignored), into the
// map Spec.Images takes.
func ParseImages(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		label, image, ok := strings.Cut(part, "=")
		label, image = strings.TrimSpace(label), strings.TrimSpace(image)
		if !ok || label == "" || image == "" {
			return nil, fmt.Errorf("%q is not LABEL=IMAGE", part)
		}
		out[strings.ToLower(label)] = image
	}
	return out, nil
}

// jobImage is the image the job's runs-on labels map to: its first
// label with an image ("" for none).
func (s Spec) jobImage(job *model.Job) string {
	for _, l := range job.RunsOn() {
		if img := s.Images[strings.ToLower(l)]; img != "" {
			return img
		}
	}
	return ""
}

// containerImage is the image the job's steps run in: its container:
// image (its expressions evaluated), else its runs-on label's.
func (s Spec) containerImage(job *model.Job) string {
	if c := job.Container(); c != nil && c.Image != "" {
		return serviceEvaluator(s)(c.Image)
	}
	return s.jobImage(job)
}

// inContainer reports whether the job's steps run in a container: the
// job has container: or a runs-on label mapped to an image.
func (s Spec) inContainer(job *model.Job) bool {
	c := job.Container()
	return s.jobImage(job) != "" || (c != nil && c.Image != "")
}

// needsRuntime reports whether the job needs a Docker daemon: it runs
// in a container, or it has services.
func (s Spec) needsRuntime(job *model.Job) bool {
	return s.inContainer(job) || len(job.Services) > 0
}

// checkRuntime fails a job that needs containers when no Docker daemon
// answers.
func (s Spec) checkRuntime(ctx context.Context, job *model.Job) error {
	if !s.needsRuntime(job) {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := container.GetHostInfo(ctx); err != nil {
		return fmt.Errorf("%w (%v)", ErrNoContainerRuntime, err)
	}
	return nil
}

// containerOptions are the options of the job's container: its labels
// (jobLabels). The marker is not among them (an --env option would
// replace act's own environment of the container: RUNNER_OS,
// RUNNER_TEMP, LANG, ...): the steps' processes have it from the job's
// env, so that a cancel kills them from the host at once (killMarked)
// when the server may (as root), before Docker is asked
// (killContainers).
func (s Spec) containerOptions(marker string) string {
	return s.serviceOptions(marker)
}

// serviceOptions are the options of the job's services: its labels. The
// marker goes in their env (an --env option would replace the service's
// env: act merges options over its own settings).
func (s Spec) serviceOptions(marker string) string {
	labels := s.jobLabels(marker)
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString("--label " + k + "=" + labels[k])
	}
	return b.String()
}

// jobLabels are the labels of every container the job runs: JobLabel
// with its marker and, when the job has a Runner, RunnerLabel and
// ProcessLabel (RemoveLeftovers reads them).
func (s Spec) jobLabels(marker string) map[string]string {
	labels := map[string]string{JobLabel: marker}
	if s.Runner != "" {
		labels[RunnerLabel] = RunnerLabelValue(s.Runner)
		labels[ProcessLabel] = thisProcess()
	}
	return labels
}

// labelContainer adds the job's container options to its container:'s
// (act gives a job with container: that key's options alone, not the
// runner's): without them its container would be neither killed by a
// cancel nor removed after a failure.
func (s Spec) labelContainer(job *model.Job, marker string) {
	n := &job.RawContainer
	switch n.Kind {
	case yaml.ScalarNode: // container: IMAGE
		image := *n
		*n = yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{
			{Kind: yaml.ScalarNode, Tag: "!!str", Value: "image"}, &image}}
	case yaml.MappingNode:
	default:
		return
	}
	opts := s.containerOptions(marker)
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "options" {
			v := n.Content[i+1]
			v.Kind, v.Tag, v.Value = yaml.ScalarNode, "!!str", strings.TrimSpace(v.Value+" "+opts)
			return
		}
	}
	n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "options"},
		&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: opts})
}

// labelServices adds the job's labels to its services' options and its
// marker to their env.
func (s Spec) labelServices(job *model.Job, marker string) {
	for _, svc := range job.Services {
		if svc != nil {
			svc.Options = strings.TrimSpace(svc.Options + " " + s.serviceOptions(marker))
			if svc.Env == nil {
				svc.Env = map[string]string{}
			}
			svc.Env[markerEnv] = marker
		}
	}
}

// killContainers kills (SIGKILL) the running containers carrying the
// job's marker, all at once: a cancelled job's steps stop at once, the
// containers are removed after (removeContainers).
func killContainers(marker string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cli, err := container.GetDockerClient(ctx)
	if err != nil {
		return
	}
	defer cli.Close()
	list, err := cli.ContainerList(ctx, client.ContainerListOptions{Filters: make(client.Filters).Add("label", JobLabel+"="+marker)})
	if err != nil {
		return
	}
	var wg sync.WaitGroup
	for _, c := range list.Items {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = cli.ContainerKill(ctx, c.ID, client.ContainerKillOptions{})
		}()
	}
	wg.Wait()
}

// removeContainers force-removes the containers carrying the job's
// marker, then the named volumes they mounted and the networks they were
// on that are not Docker's own: what act leaves when a job is cancelled
// (and nothing once it cleaned up itself).
func removeContainers(marker string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, _ = removeWhere(ctx, JobLabel+"="+marker, nil)
}

// removeWhere force-removes the containers (running or not) carrying the
// label (KEY=VALUE) for which keep, when given, is false, then the named
// volumes they mounted and the networks they were on that are not
// Docker's own and no other container uses; it returns how many
// containers it removed.
func removeWhere(ctx context.Context, label string, keep func(labels map[string]string) bool) (int, error) {
	cli, err := container.GetDockerClient(ctx)
	if err != nil {
		return 0, err
	}
	defer cli.Close()
	list, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: make(client.Filters).Add("label", label)})
	if err != nil {
		return 0, err
	}
	volumes, networks := map[string]bool{}, map[string]bool{}
	removed := 0
	for _, c := range list.Items {
		if keep != nil && keep(c.Labels) {
			continue
		}
		for _, m := range c.Mounts {
			if m.Type == "volume" && m.Name != "" {
				volumes[m.Name] = true
			}
		}
		if c.NetworkSettings != nil {
			for n := range c.NetworkSettings.Networks {
				if n != "host" && n != "bridge" && n != "none" {
					networks[n] = true
				}
			}
		}
		if _, err := cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true}); err == nil {
			removed++
		}
	}
	for v := range volumes {
		_, _ = cli.VolumeRemove(ctx, v, client.VolumeRemoveOptions{Force: true})
	}
	for n := range networks {
		_, _ = cli.NetworkRemove(ctx, n, client.NetworkRemoveOptions{}) // refused while another container is on it
	}
	return removed, nil
}
