package actions

import (
	"context"
	"strings"

	"gopkg.in/yaml.v3"

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
	var doc struct {
		Permissions yaml.Node `yaml:"permissions"`
		Jobs        map[string]struct {
			Permissions yaml.Node `yaml:"permissions"`
		} `yaml:"jobs"`
	}
	_ = yaml.Unmarshal([]byte(r.WorkflowFile), &doc) // a workflow that ran parsed; a failure leaves the default
	if node := doc.Jobs[jobKey].Permissions; node.Kind != 0 {
		return grantOf(&node), nil
	}
	if doc.Permissions.Kind != 0 {
		return grantOf(&doc.Permissions), nil
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
