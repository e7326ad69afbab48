package issues

import (
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
)

// Handler serves the issues, comments, labels, assignees and milestones
// endpoints.
type Handler struct {
	Service *Service
}

// triageNote is the permission tables' note of the routes whose handler
// checks triage access itself.
const triageNote = "Needs triage or push access (a collaborator's triage permission is enough)."

// Routes is the issues route table. Reading needs read access (classic
// and OAuth tokens: repo for private repositories; fine-grained: Issues
// read; public repositories anonymously). Anyone who can read a
// repository opens issues and comments on them (public_repo or repo;
// Issues write); authors edit their own issues and comments; labels,
// assignees, milestones, locks and others' issues need triage or push
// access, which the handlers check. Labels may be read and changed with
// Pull requests permissions too, as on the platform.
//
// GET and DELETE of one comment are declared .../issues/{comments}/{comment_id}
// (the handlers answer 404 unless {comments} is "comments"; GET serves
// .../issues/events/{event_id} when it is "events"): the literal
// pattern would conflict in net/http.ServeMux with
// .../issues/{issue_number}/comments (GET) and .../issues/{issue_number}/labels,
// /lock and /assignees (DELETE), which stay more specific than it.
func (h *Handler) Routes() []httpapi.Route {
	rule := func(role auth.Role, public bool, extra string, perms ...string) auth.Rule {
		return auth.Rule{Target: auth.TargetRepo, Role: role, Public: public, Permissions: auth.Perm(perms...),
			TokenTypes: auth.AllTokenTypes, Extra: extra}
	}
	read := rule(auth.RoleRead, true, "", "issues:read")
	write := rule(auth.RoleRead, false, "", "issues:write")
	author := rule(auth.RoleRead, false, "Authors may change their own; anyone else needs triage or push access.", "issues:write")
	triage := rule(auth.RoleRead, false, triageNote, "issues:write")
	labelRead := rule(auth.RoleRead, true, "", "issues:read", "pull_requests:read")
	labelTriage := rule(auth.RoleRead, false, triageNote, "issues:write", "pull_requests:write")
	push := rule(auth.RoleWrite, false, "", "issues:write", "pull_requests:write")
	triage401 := triage // the description of removing a dependency documents the 401
	triage401.Unauthorized401 = true
	const repo = "/repos/{owner}/{repo}"
	const issue = repo + "/issues/{issue_number}"
	return []httpapi.Route{
		{Method: "GET", Pattern: "/issues", Handle: h.listMine, Auth: auth.Rule{Target: auth.TargetSelf,
			Permissions: auth.Perm("issues:read"), TokenTypes: auth.UAT | auth.FPAT}},
		{Method: "GET", Pattern: "/user/issues", Handle: h.listMine, Auth: auth.Rule{Target: auth.TargetSelf,
			Permissions: auth.Perm("issues:read"), TokenTypes: auth.UAT | auth.FPAT}},
		{Method: "GET", Pattern: "/orgs/{org}/issues", Handle: h.listOrg, Auth: auth.Rule{Target: auth.TargetOrg,
			Permissions: auth.Perm("issues:read"), TokenTypes: auth.UAT | auth.FPAT}},
		{Method: "GET", Pattern: "/search/issues", Handle: h.searchIssues, Rate: httpapi.Search,
			Auth: auth.Rule{Public: true, TokenTypes: auth.AllTokenTypes}},
		{Method: "GET", Pattern: "/search/labels", Handle: h.searchLabels, Rate: httpapi.Search,
			Auth: auth.Rule{Public: true, TokenTypes: auth.AllTokenTypes,
				Extra: "The repository of repository_id must be readable by the caller."}},
		{Method: "GET", Pattern: repo + "/issues", Handle: h.list, Auth: read},
		{Method: "POST", Pattern: repo + "/issues", Handle: h.create, Auth: write},
		{Method: "GET", Pattern: issue, Handle: h.get, Auth: read},
		{Method: "PATCH", Pattern: issue, Handle: h.update, Auth: author},
		{Method: "PUT", Pattern: issue + "/lock", Handle: h.lock, Auth: triage},
		{Method: "GET", Pattern: issue + "/dependencies/blocked_by", Handle: h.listBlockedBy, Auth: read},
		{Method: "POST", Pattern: issue + "/dependencies/blocked_by", Handle: h.addBlockedBy, Auth: triage},
		{Method: "DELETE", Pattern: issue + "/dependencies/blocked_by/{issue_id}", Handle: h.removeBlockedBy, Auth: triage401},
		{Method: "GET", Pattern: issue + "/dependencies/blocking", Handle: h.listBlocking, Auth: read},
		{Method: "DELETE", Pattern: issue + "/lock", Handle: h.unlock, Auth: triage},

		{Method: "GET", Pattern: repo + "/issues/comments", Handle: h.listRepoComments, Auth: read},
		{Method: "GET", Pattern: repo + "/issues/{comments}/{comment_id}", Handle: h.getComment, Auth: read},
		{Method: "PATCH", Pattern: repo + "/issues/comments/{comment_id}", Handle: h.updateComment, Auth: author},
		{Method: "DELETE", Pattern: repo + "/issues/{comments}/{comment_id}", Handle: h.deleteComment, Auth: author},
		{Method: "GET", Pattern: repo + "/issues/events", Handle: h.listRepoEvents, Auth: read},
		{Method: "GET", Pattern: issue + "/events", Handle: h.listIssueEvents, Auth: read},
		{Method: "GET", Pattern: issue + "/timeline", Handle: h.timeline, Auth: read},
		{Method: "GET", Pattern: issue + "/comments", Handle: h.listComments, Auth: read},
		{Method: "POST", Pattern: issue + "/comments", Handle: h.createComment,
			Auth: rule(auth.RoleRead, false, "A locked issue takes comments from triagers only.", "issues:write")},

		{Method: "GET", Pattern: repo + "/labels", Handle: h.listLabels, Auth: labelRead},
		{Method: "POST", Pattern: repo + "/labels", Handle: h.createLabel, Auth: push},
		{Method: "GET", Pattern: repo + "/labels/{name}", Handle: h.getLabel, Auth: labelRead},
		{Method: "PATCH", Pattern: repo + "/labels/{name}", Handle: h.updateLabel, Auth: push},
		{Method: "DELETE", Pattern: repo + "/labels/{name}", Handle: h.deleteLabel, Auth: push},
		{Method: "GET", Pattern: issue + "/labels", Handle: h.listIssueLabels, Auth: labelRead},
		{Method: "POST", Pattern: issue + "/labels", Handle: h.addIssueLabels, Auth: labelTriage},
		{Method: "PUT", Pattern: issue + "/labels", Handle: h.setIssueLabels, Auth: labelTriage},
		{Method: "DELETE", Pattern: issue + "/labels", Handle: h.removeIssueLabels, Auth: labelTriage},
		{Method: "DELETE", Pattern: issue + "/labels/{name}", Handle: h.removeIssueLabel, Auth: labelTriage},

		{Method: "GET", Pattern: repo + "/assignees", Handle: h.listAssignees, Auth: read},
		{Method: "GET", Pattern: repo + "/assignees/{assignee}", Handle: h.checkAssignee, Auth: read},
		{Method: "GET", Pattern: issue + "/assignees/{assignee}", Handle: h.checkAssignee, Auth: read},
		{Method: "POST", Pattern: issue + "/assignees", Handle: h.addAssignees, Auth: triage},
		{Method: "DELETE", Pattern: issue + "/assignees", Handle: h.removeAssignees, Auth: triage},

		{Method: "GET", Pattern: repo + "/milestones", Handle: h.listMilestones, Auth: read},
		{Method: "POST", Pattern: repo + "/milestones", Handle: h.createMilestone, Auth: push},
		{Method: "GET", Pattern: repo + "/milestones/{milestone_number}", Handle: h.getMilestone, Auth: read},
		{Method: "GET", Pattern: repo + "/milestones/{milestone_number}/labels", Handle: h.listMilestoneLabels, Auth: labelRead},
		{Method: "PATCH", Pattern: repo + "/milestones/{milestone_number}", Handle: h.updateMilestone, Auth: push},
		{Method: "DELETE", Pattern: repo + "/milestones/{milestone_number}", Handle: h.deleteMilestone, Auth: push},
	}
}
