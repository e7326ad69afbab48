package auth

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Group is the kind of resource a fine-grained permission applies to.
type Group string

// The permission groups.
const (
	GroupOrganization Group = "organization"
	GroupRepository   Group = "repository"
	GroupUser         Group = "user"
	GroupEnterprise   Group = "enterprise"
)

// Level is the access a fine-grained permission grants.
type Level string

// The permission levels; write includes read.
const (
	Read  Level = "read"
	Write Level = "write"
)

// Covers reports whether holding level l satisfies a need for want.
func (l Level) Covers(want Level) bool { return l == Write || l == want }

// PermissionInfo describes one fine-grained permission.
type PermissionInfo struct {
	Name  string // the identifier used in tokens and headers, e.g. "contents"
	Title string // the name in the permission tables, e.g. "Contents"
	Group Group
}

// Permissions is the catalog of fine-grained permissions, in the order
// of the permission tables. Identifiers follow the platform's API names.
var permissionCatalog = []PermissionInfo{
	{"organization_administration", "Administration", GroupOrganization},
	{"members", "Members", GroupOrganization},
	{"organization_self_hosted_runners", "Self-hosted runners", GroupOrganization},
	{"organization_user_blocking", "Blocking users", GroupOrganization},
	{"organization_campaigns", "Campaigns", GroupOrganization},
	{"organization_custom_org_roles", "Custom organization roles", GroupOrganization},
	{"organization_custom_properties", "Custom properties", GroupOrganization},
	{"organization_events", "Events", GroupOrganization},
	{"issue_fields", "Issue Fields", GroupOrganization},
	{"issue_types", "Issue Types", GroupOrganization},
	{"organization_projects", "Projects", GroupOrganization},
	{"organization_secrets", "Secrets", GroupOrganization},
	{"organization_variables", "Variables", GroupOrganization},
	{"organization_hooks", "Webhooks", GroupOrganization},

	{"actions", "Actions", GroupRepository},
	{"administration", "Administration", GroupRepository},
	{"artifact_metadata", "Artifact metadata", GroupRepository},
	{"attestations", "Attestations", GroupRepository},
	{"checks", "Checks", GroupRepository},
	{"security_events", "Code scanning alerts", GroupRepository},
	{"statuses", "Commit statuses", GroupRepository},
	{"contents", "Contents", GroupRepository},
	{"custom_properties", "Custom properties", GroupRepository},
	{"vulnerability_alerts", "Dependabot alerts", GroupRepository},
	{"dependabot_secrets", "Dependabot secrets", GroupRepository},
	{"deployments", "Deployments", GroupRepository},
	{"environments", "Environments", GroupRepository},
	{"issues", "Issues", GroupRepository},
	{"metadata", "Metadata", GroupRepository},
	{"pages", "Pages", GroupRepository},
	{"pull_requests", "Pull requests", GroupRepository},
	{"secrets", "Secrets", GroupRepository},
	{"secret_scanning_alerts", "Secret scanning alerts", GroupRepository},
	{"variables", "Variables", GroupRepository},
	{"repository_hooks", "Webhooks", GroupRepository},
	{"workflows", "Workflows", GroupRepository},

	{"blocking", "Block another user", GroupUser},
	{"email_addresses", "Email addresses", GroupUser},
	{"user_events", "Events", GroupUser},
	{"followers", "Followers", GroupUser},
	{"gpg_keys", "GPG keys", GroupUser},
	{"gists", "Gists", GroupUser},
	{"git_ssh_keys", "Git SSH keys", GroupUser},
	{"interaction_limits", "Interaction limits", GroupUser},
	{"plan", "Plan", GroupUser},
	{"profile", "Profile", GroupUser},
	{"ssh_signing_keys", "SSH signing keys", GroupUser},
	{"starring", "Starring", GroupUser},
	{"watching", "Watching", GroupUser},

	{"enterprise_ai_controls", "Enterprise AI controls", GroupEnterprise},
}

// PermissionCatalog returns the catalog of fine-grained permissions.
func PermissionCatalog() []PermissionInfo { return permissionCatalog }

// LookupPermission returns the catalog entry of a permission identifier.
func LookupPermission(name string) (PermissionInfo, bool) {
	for _, p := range permissionCatalog {
		if p.Name == name {
			return p, true
		}
	}
	return PermissionInfo{}, false
}

// Need is one permission at one level, written "name=level" in headers.
type Need struct {
	Name  string
	Level Level
}

func (n Need) String() string { return n.Name + "=" + string(n.Level) }

// PermissionSet is a set of needs that must all be held.
type PermissionSet []Need

// Alternatives is a list of permission sets of which one must be held.
type Alternatives []PermissionSet

// Perm parses "name:level" needs into alternatives: each argument is one
// alternative set, its needs joined by "+". Perm("contents:write",
// "artifact_metadata:write") accepts either permission. It panics on a
// malformed or unknown name: it is used only in route tables, which
// tests load.
func Perm(alternatives ...string) Alternatives {
	var out Alternatives
	for _, alt := range alternatives {
		var set PermissionSet
		for _, part := range strings.Split(alt, "+") {
			name, level, _ := strings.Cut(part, ":")
			if _, ok := LookupPermission(name); !ok || (level != "read" && level != "write") {
				panic(fmt.Sprintf("auth.Perm: bad permission %q", part))
			}
			set = append(set, Need{name, Level(level)})
		}
		out = append(out, set)
	}
	return out
}

// String renders alternatives as X-Accepted-Service-Permissions does:
// needs of a set joined by ",", sets separated by "; ".
func (a Alternatives) String() string {
	sets := make([]string, len(a))
	for i, set := range a {
		needs := make([]string, len(set))
		for j, n := range set {
			needs[j] = n.String()
		}
		sets[i] = strings.Join(needs, ",")
	}
	return strings.Join(sets, "; ")
}

// UserOnly reports whether every alternative needs only permissions of
// the user group (Starring, Watching, Followers, ...): a route declaring
// them acts for the token's user (starring a repository, following a
// user) rather than on resources of the account the path names. Empty
// alternatives are not user-only.
func (a Alternatives) UserOnly() bool {
	if len(a) == 0 {
		return false
	}
	for _, set := range a {
		for _, n := range set {
			if info, _ := LookupPermission(n.Name); info.Group != GroupUser {
				return false
			}
		}
	}
	return true
}

// Grant is the permissions a fine-grained token holds: name -> level.
type Grant map[string]Level

// ParseGrant parses "name:read,name2:write" (the CLI's form) into a
// Grant, refusing unknown names and levels.
func ParseGrant(s string) (Grant, error) {
	g := Grant{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, level, ok := strings.Cut(part, ":")
		if !ok {
			return nil, fmt.Errorf("permission %q: want name:read or name:write", part)
		}
		if _, known := LookupPermission(name); !known {
			return nil, fmt.Errorf("unknown permission %q (see `forgeapi permissions`)", name)
		}
		if level != string(Read) && level != string(Write) {
			return nil, fmt.Errorf("permission %q: level must be read or write", part)
		}
		g[name] = Level(level)
	}
	if len(g) == 0 {
		return nil, fmt.Errorf("no permissions given")
	}
	return g, nil
}

// Has reports whether the grant covers the need.
func (g Grant) Has(n Need) bool {
	l, ok := g[n.Name]
	return ok && l.Covers(n.Level)
}

// Satisfies reports whether the grant holds every need of one of the
// alternatives. Empty alternatives are satisfied by any grant.
func (g Grant) Satisfies(a Alternatives) bool {
	if len(a) == 0 {
		return true
	}
	for _, set := range a {
		all := true
		for _, n := range set {
			all = all && g.Has(n)
		}
		if all {
			return true
		}
	}
	return false
}

// JSON returns the grant as a JSON object with sorted keys.
func (g Grant) JSON() string {
	b, _ := json.Marshal(map[string]Level(g))
	return string(b)
}

// ParseGrantJSON reads a grant stored by JSON.
func ParseGrantJSON(s string) (Grant, error) {
	g := Grant{}
	if s == "" || s == "{}" { // "{}" is the column's default (classic and OAuth tokens)
		return g, nil
	}
	err := json.Unmarshal([]byte(s), &g)
	return g, err
}

// String renders the grant as "name:level,..." sorted by name.
func (g Grant) String() string {
	parts := make([]string, 0, len(g))
	for n, l := range g {
		parts = append(parts, n+":"+string(l))
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}
