package actions

import (
	"context"
	"strings"

	"gopkg.in/yaml.v3"

	"forgeapi/internal/actions/engine"
	"forgeapi/internal/auth"
)

// The GITHUB_TOKEN's permissions, as the platform sets them: the job's
// `permissions:` when it has the key, else the workflow's, else the
// repository's default (default_workflow_permissions: "read", the
// restricted contents and packages read; "write", the permissive set).
// A `permissions:` key is a map of scope to read, write or none, or
// read-all, write-all, or {} (none); unnamed scopes are none. metadata
// read is always granted.

// workflowScopes are the scopes of `permissions:` with the token
// permission each grants ("" for the scopes forgeapi has no permission
// of: id-token, models, attestations).
var workflowScopes = map[string]string{
	"actions": "actions", "attestations": "", "checks": "checks", "contents": "contents", "deployments": "deployments",
	"discussions": "discussions", "id-token": "", "issues": "issues", "models": "", "packages": "packages", "pages": "pages",
	"pull-requests": "pull_requests", "repository-projects": "repository_projects", "security-events": "security_events",
	"statuses": "statuses",
}

// permissiveScopes are the scopes the "write" default grants write.
var permissiveScopes = []string{"actions", "checks", "contents", "deployments", "discussions", "issues", "packages", "pages",
	"pull-requests", "repository-projects", "security-events", "statuses"}

// jobGrant is the GITHUB_TOKEN grant of the run's job key.
func (s *Service) jobGrant(ctx context.Context, r *Run, jobKey string) (auth.Grant, error) {
	if g, ok := declaredGrant(r.WorkflowFile, jobKey); ok {
		return g, nil
	}
	def := "read"
	if s.Policies != nil {
		d, _, err := s.Policies.RunPolicy(ctx, r.RepoID)
		if err != nil {
			return nil, err
		}
		def = d
	}
	levels := map[string]string{"contents": "read", "packages": "read"}
	if def == "write" {
		levels = map[string]string{}
		for _, sc := range permissiveScopes {
			levels[sc] = "write"
		}
	}
	return grantOfLevels(levels), nil
}

// declaredGrant is the grant the workflow's `permissions:` give its job
// key: the job's when it has the key, else the workflow's; false when
// neither has it.
func declaredGrant(workflow, jobKey string) (auth.Grant, bool) {
	var doc struct {
		Permissions yaml.Node `yaml:"permissions"`
		Jobs        map[string]struct {
			Permissions yaml.Node `yaml:"permissions"`
		} `yaml:"jobs"`
	}
	_ = yaml.Unmarshal([]byte(workflow), &doc) // a workflow that ran parsed; a failure leaves the default
	if node := doc.Jobs[jobKey].Permissions; node.Kind != 0 {
		return grantOf(&node), true
	}
	if doc.Permissions.Kind != 0 {
		return grantOf(&doc.Permissions), true
	}
	return nil, false
}

// calledJobGrant is a called job's GITHUB_TOKEN grant: its outermost
// caller job's, narrowed by the permissions each called workflow on the
// way declares (for the job of it the chain goes through), as on the
// platform: a called workflow's permissions can only take away.
func (s *Service) calledJobGrant(ctx context.Context, r *Run, j *Job) (auth.Grant, error) {
	parts := strings.Split(j.Key, engine.KeySep)
	g, err := s.jobGrant(ctx, r, parts[0])
	if err != nil {
		return nil, err
	}
	for depth := 1; depth < len(parts); depth++ {
		if declared, ok := declaredGrant(workflowAt(j, depth), parts[depth]); ok {
			g = narrow(g, declared)
		}
	}
	return g, nil
}

// narrow is the grant of each permission of g at the lower of its levels
// in g and in by (none when by has none).
func narrow(g, by auth.Grant) auth.Grant {
	out := auth.Grant{}
	for name, level := range g {
		switch other, ok := by[name]; {
		case !ok:
		case level == auth.Write && other == auth.Write:
			out[name] = auth.Write
		default:
			out[name] = auth.Read
		}
	}
	return out
}

// grantOf reads a `permissions:` node.
func grantOf(node *yaml.Node) auth.Grant {
	levels := map[string]string{}
	switch node.Kind {
	case yaml.ScalarNode:
		if all := strings.TrimSuffix(node.Value, "-all"); all == "read" || all == "write" {
			for sc := range workflowScopes {
				levels[sc] = all
			}
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(node.Content); i += 2 {
			levels[node.Content[i].Value] = node.Content[i+1].Value
		}
	}
	return grantOfLevels(levels)
}

// grantOfLevels is the token grant of scope -> read|write|none.
func grantOfLevels(levels map[string]string) auth.Grant {
	g := auth.Grant{"metadata": auth.Read}
	for sc, level := range levels {
		name := workflowScopes[sc]
		if name == "" {
			continue
		}
		if _, known := auth.LookupPermission(name); !known {
			continue
		}
		switch level {
		case "read":
			g[name] = auth.Read
		case "write":
			g[name] = auth.Write
		}
	}
	return g
}
