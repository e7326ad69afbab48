package webhooks

import "slices"

// knownEvents are the platform's webhook event names a hook may subscribe
// to ("*" subscribes to all of them). ping and meta are sent to every hook
// and are not subscribable.
var knownEvents = map[string]bool{
	"branch_protection_configuration": true, "branch_protection_rule": true,
	"check_run": true, "check_suite": true, "code_scanning_alert": true, "commit_comment": true,
	"content_reference": true, "create": true, "custom_property": true, "custom_property_values": true,
	"delete": true, "dependabot_alert": true, "deploy_key": true, "deployment": true,
	"deployment_protection_rule": true, "deployment_review": true, "deployment_status": true,
	"discussion": true, "discussion_comment": true, "fork": true, "github_app_authorization": true,
	"gollum": true, "installation": true, "installation_repositories": true, "installation_target": true,
	"issue_comment": true, "issue_dependencies": true, "issues": true, "label": true,
	"marketplace_purchase": true, "member": true, "membership": true, "merge_group": true,
	"milestone": true, "org_block": true, "organization": true, "package": true, "page_build": true,
	"personal_access_token_request": true, "project": true, "project_card": true, "project_column": true,
	"projects_v2": true, "projects_v2_item": true, "projects_v2_status_update": true, "public": true,
	"pull_request": true, "pull_request_review": true, "pull_request_review_comment": true,
	"pull_request_review_thread": true, "push": true, "registry_package": true, "release": true,
	"repository": true, "repository_advisory": true, "repository_dispatch": true, "repository_import": true,
	"repository_ruleset": true, "repository_vulnerability_alert": true, "secret_scanning_alert": true,
	"secret_scanning_alert_location": true, "secret_scanning_scan": true, "security_advisory": true,
	"security_and_analysis": true, "sponsorship": true, "star": true, "status": true, "sub_issues": true,
	"team": true, "team_add": true, "watch": true, "workflow_dispatch": true, "workflow_job": true,
	"workflow_run": true,
}

// validEvent reports whether a hook may subscribe to the event name.
func validEvent(e string) bool { return e == "*" || knownEvents[e] }

// globalEvents are the events a global webhook subscribes to, and its
// default: the platform sends global webhooks user and organization
// events (user is no repository or organization hook's event).
var globalEvents = []string{"organization", "user"}

// validFor reports whether hook h may subscribe to the event name.
func validFor(h *Hook, e string) bool {
	if h.Global {
		return slices.Contains(globalEvents, e)
	}
	return validEvent(e)
}
