package engine

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/docker/go-connections/nat"
	"github.com/moby/moby/client"
	"github.com/nektos/act/pkg/common"
	"github.com/nektos/act/pkg/container"
	"github.com/nektos/act/pkg/exprparser"
	"github.com/nektos/act/pkg/model"
	"github.com/sirupsen/logrus"
)

// hostService is a service container started beside a job that runs on
// the host: its container's id and its ports published on the host
// (container port, "8080", to host port).
type hostService struct {
	ID    string
	Ports map[string]string
}

// startHostServices starts the services of a job that runs on the host,
// as the platform does: each on Docker's default bridge network, its
// ports: published on the host (a port alone on a free host port), so
// that the steps reach them at localhost:PORT; labelled with the job's
// marker, so that removeContainers removes them when the job ends or is
// cancelled. It returns them by their ids in the workflow once Docker
// reports them healthy (or running, without a health check).
func startHostServices(ctx context.Context, s Spec, job *model.Job, marker string) (map[string]hostService, error) {
	eval := serviceEvaluator(s)
	lg := logrus.New() // act's container logs; a service that does not start is the error returned
	lg.SetOutput(io.Discard)
	ctx = common.WithLogger(ctx, lg)
	ids := make([]string, 0, len(job.Services))
	for id := range job.Services {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := map[string]hostService{}
	for _, id := range ids {
		spec := job.Services[id]
		if spec == nil {
			continue
		}
		image := eval(spec.Image)
		if image == "" {
			continue // as the platform: a service with an empty image is not started
		}
		env := []string{markerEnv + "=" + marker}
		for k, v := range spec.Env {
			env = append(env, k+"="+eval(v))
		}
		var ports, binds []string
		for _, p := range spec.Ports {
			ports = append(ports, eval(p))
		}
		for _, v := range spec.Volumes {
			binds = append(binds, eval(v))
		}
		exposed, bindings, err := nat.ParsePortSpecs(ports)
		if err != nil {
			return out, fmt.Errorf("service %s: ports: %w", id, err)
		}
		var user, pass string
		if spec.Credentials != nil {
			user, pass = eval(spec.Credentials["username"]), eval(spec.Credentials["password"])
		}
		c := container.NewContainer(&container.NewContainerInput{
			Name: serviceName(marker, id), Image: image, Env: env, Binds: binds, Username: user, Password: pass,
			NetworkMode: "bridge", ExposedPorts: exposed, PortBindings: bindings, Stdout: io.Discard, Stderr: io.Discard,
			Options: strings.TrimSpace(eval(spec.Options) + " " + s.serviceOptions(marker)),
		})
		if err := common.NewPipelineExecutor(c.Pull(false), c.Create(nil, nil), c.Start(false))(ctx); err != nil {
			return out, fmt.Errorf("service %s: %w", id, err)
		}
		if err := waitHealthy(ctx, c); err != nil {
			return out, fmt.Errorf("service %s: %w", id, err)
		}
		svc, err := inspectService(ctx, serviceName(marker, id))
		if err != nil {
			return out, fmt.Errorf("service %s: %w", id, err)
		}
		out[id] = svc
	}
	return out, nil
}

// serviceName is the name of the job's service container id.
func serviceName(marker, id string) string {
	return "forgeapi-" + marker + "-" + regexp.MustCompile(`[^a-zA-Z0-9_.-]`).ReplaceAllString(id, "-")
}

// waitHealthy waits for the container's health check to pass, as act
// waits for a container job's services (up to five minutes).
func waitHealthy(ctx context.Context, c container.ExecutionsEnvironment) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	delay := 200 * time.Millisecond
	for {
		switch c.GetHealth(ctx) {
		case container.HealthHealthy:
			return nil
		case container.HealthUnHealthy:
			return fmt.Errorf("the service container is unhealthy")
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the service container did not become healthy: %w", ctx.Err())
		case <-time.After(delay):
		}
		delay = min(2*delay, 5*time.Second)
	}
}

// inspectService reads the container's id and the host ports its ports
// are published on.
func inspectService(ctx context.Context, name string) (hostService, error) {
	cli, err := container.GetDockerClient(ctx)
	if err != nil {
		return hostService{}, err
	}
	defer cli.Close()
	res, err := cli.ContainerInspect(ctx, name, client.ContainerInspectOptions{})
	if err != nil {
		return hostService{}, err
	}
	svc := hostService{ID: res.Container.ID, Ports: map[string]string{}}
	if ns := res.Container.NetworkSettings; ns != nil {
		for port, bindings := range ns.Ports {
			for _, b := range bindings {
				if b.HostPort != "" {
					svc.Ports[port.Port()] = b.HostPort
					break
				}
			}
		}
	}
	return svc, nil
}

// serviceEvaluator interpolates the ${{ }} expressions of a service's
// fields with the contexts known before the job starts: secrets, vars,
// inputs, matrix and env (the job's and the workflow's are not; act
// reads these itself for container jobs).
func serviceEvaluator(s Spec) func(string) string {
	matrix := map[string]any{}
	for k, v := range s.Matrix {
		matrix[k] = v
	}
	inputs := map[string]any{}
	for k, v := range s.Inputs {
		inputs[k] = v
	}
	secrets := map[string]string{}
	for k, v := range s.Secrets {
		secrets[k] = v
	}
	if s.Token != "" {
		secrets["GITHUB_TOKEN"] = s.Token
	}
	in := exprparser.NewInterpeter(&exprparser.EvaluationEnvironment{Github: &model.GithubContext{}, Env: s.Env,
		Job: &model.JobContext{}, Secrets: secrets, Vars: s.Vars, Matrix: matrix, Inputs: inputs,
		Runner: map[string]any{}, Strategy: map[string]any{}, Steps: map[string]*model.StepResult{}}, exprparser.Config{})
	return func(v string) string {
		return exprRE.ReplaceAllStringFunc(v, func(m string) string {
			out, err := in.Evaluate(strings.TrimSpace(m[3:len(m)-2]), exprparser.DefaultStatusCheckNone)
			if err != nil || out == nil {
				return ""
			}
			return fmt.Sprint(out)
		})
	}
}

var exprRE = regexp.MustCompile(`\$\{\{.*?\}\}`)

// servicesRE matches what the workflow reads of a host job's services in
// its expressions: job.services.ID.ports[PORT] (or ['PORT']) and
// job.services.ID.id.
var servicesRE = regexp.MustCompile(`job\.services\.([A-Za-z_][A-Za-z0-9_-]*)\.(?:ports\[\s*['"]?([0-9]+)['"]?\s*\]|(id)\b)`)

// withServicesContext writes the host job's services into the
// workflow's expressions (act's job context has no services):
// job.services.ID.ports[PORT] becomes env.FORGEAPI_SERVICE_ID_PORT_PORT,
// the host port (a string, as on the platform), and job.services.ID.id
// env.FORGEAPI_SERVICE_ID_ID, the container's id; it returns the
// workflow and these variables (a service or port the job does not have
// has none, so reads as empty).
func withServicesContext(workflow []byte, services map[string]hostService) ([]byte, map[string]string) {
	env := map[string]string{}
	for id, svc := range services {
		env[serviceVar(id, "ID")] = svc.ID
		for port, host := range svc.Ports {
			env[serviceVar(id, "PORT_"+port)] = host
		}
	}
	return servicesRE.ReplaceAllFunc(workflow, func(m []byte) []byte {
		sub := servicesRE.FindSubmatch(m)
		if len(sub[3]) > 0 {
			return []byte("env." + serviceVar(string(sub[1]), "ID"))
		}
		return []byte("env." + serviceVar(string(sub[1]), "PORT_"+string(sub[2])))
	}), env
}

// serviceVar names the variable of a service's field.
func serviceVar(id, field string) string {
	return "FORGEAPI_SERVICE_" + strings.ToUpper(strings.ReplaceAll(id, "-", "_")) + "_" + field
}
