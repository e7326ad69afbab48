package orgroles

import "slices"

// permission is one fine-grained permission a custom role may add to its
// base role: its name and what it allows.
type permission struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// orgPermissions are the organization permissions a custom organization
// role may hold (GET /orgs/{org}/organization-fine-grained-permissions).
var orgPermissions = []permission{
	{"read_audit_logs", "View the organization's audit log"},
	{"read_organization_custom_org_role", "View organization roles"},
	{"write_organization_custom_org_role", "Manage custom organization roles"},
	{"read_organization_custom_repo_role", "View custom repository roles"},
	{"write_organization_custom_repo_role", "Manage custom repository roles"},
	{"manage_organization_webhooks", "Manage organization webhooks"},
	{"read_organization_custom_properties", "View the organization's custom properties"},
	{"manage_organization_custom_properties", "Manage the organization's custom properties"},
	{"manage_organization_ref_rules", "Manage organization rulesets"},
	{"read_organization_actions_usage_metrics", "View the organization's Actions usage metrics"},
	{"write_organization_actions_secrets", "Manage the organization's Actions secrets"},
	{"write_organization_actions_variables", "Manage the organization's Actions variables"},
	{"write_organization_runners_and_runner_groups", "Manage the organization's runners and runner groups"},
}

// repoPermissions are the repository permissions a custom repository
// role may add to its base role (GET
// /orgs/{org}/repository-fine-grained-permissions).
var repoPermissions = []permission{
	{"add_assignee", "Assign or remove a user"},
	{"remove_assignee", "Remove an assigned user"},
	{"add_label", "Add or remove a label"},
	{"remove_label", "Remove a label"},
	{"close_issue", "Close an issue"},
	{"reopen_issue", "Reopen a closed issue"},
	{"delete_issue", "Delete an issue"},
	{"mark_as_duplicate", "Mark an issue or pull request as a duplicate"},
	{"set_milestone", "Set the milestone"},
	{"close_pull_request", "Close a pull request"},
	{"reopen_pull_request", "Reopen a closed pull request"},
	{"request_pr_review", "Request a pull request review"},
	{"manage_topics", "Manage topics"},
	{"manage_settings_wiki", "Manage wiki settings"},
	{"manage_settings_projects", "Manage project settings"},
	{"manage_settings_merge_types", "Manage pull request merging settings"},
	{"manage_settings_pages", "Manage GitHub Pages settings"},
	{"manage_webhooks", "Manage webhooks"},
	{"manage_deploy_keys", "Manage deploy keys"},
	{"edit_repo_metadata", "Edit repository metadata"},
	{"edit_repo_protections", "Manage branch protections"},
	{"create_tag", "Create a tag"},
	{"delete_tag", "Delete a tag"},
	{"view_dependabot_alerts", "View Dependabot alerts"},
	{"resolve_dependabot_alerts", "Dismiss or reopen Dependabot alerts"},
	{"view_secret_scanning_alerts", "View secret scanning alerts"},
	{"resolve_secret_scanning_alerts", "Dismiss or reopen secret scanning alerts"},
}

// known reports whether every name is one of the permissions; the first
// unknown one is returned otherwise.
func known(list []permission, names []string) (string, bool) {
	for _, n := range names {
		if !slices.ContainsFunc(list, func(p permission) bool { return p.Name == n }) {
			return n, false
		}
	}
	return "", true
}
