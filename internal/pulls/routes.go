package pulls

import (
	"forgeapi/internal/auth"
	"forgeapi/internal/git/gitdiff"
	"forgeapi/internal/httpapi"
)

// Routes is the pull requests route table. Reading needs read access
// (classic and OAuth tokens: repo for private repositories; fine-grained:
// Pull requests read; public repositories anonymously). Anyone who can
// read a repository opens pull requests (public_repo or repo; Pull
// requests write); their authors edit them, anyone else needs push
// access, which the handler checks. Merging needs push access and, for
// fine-grained tokens, Contents write, as on the platform. Readers
// review and comment; a review is changed and submitted by its author
// only, and dismissed with push access; review comments are changed by
// their authors or with push access; reviews are requested by the pull
// request's author or with push access.
//
// GET and DELETE of one review comment are declared
// .../pulls/{comments}/{comment_id} (the handlers answer 404 unless
// {comments} is "comments"), as issues declares its comments: the literal
// pattern would conflict in net/http.ServeMux with the GET and DELETE
// routes of .../pulls/{pull_number}/..., which stay more specific.
func (h *Handler) Routes() []httpapi.Route {
	rule := func(role auth.Role, public bool, extra string, perms ...string) auth.Rule {
		return auth.Rule{Target: auth.TargetRepo, Role: role, Public: public, Permissions: auth.Perm(perms...),
			TokenTypes: auth.AllTokenTypes, Extra: extra}
	}
	read := rule(auth.RoleRead, true, "", "pull_requests:read")
	write := rule(auth.RoleRead, false, "", "pull_requests:write")
	author := rule(auth.RoleRead, false, "Authors may change their own; anyone else needs push access.", "pull_requests:write")
	merge := rule(auth.RoleWrite, false, "", "contents:write")
	push := rule(auth.RoleWrite, false, "", "pull_requests:write")
	reviewer := rule(auth.RoleRead, false, "Only the review's author.", "pull_requests:write")
	const repo = "/repos/{owner}/{repo}"
	const pull = repo + "/pulls/{pull_number}"
	return []httpapi.Route{
		{Method: "GET", Pattern: repo + "/pulls", Handle: h.list, Auth: read},
		{Method: "GET", Pattern: repo + "/commits/{commit_sha}/pulls", Handle: h.listWithCommit, Auth: read},
		{Method: "POST", Pattern: repo + "/pulls", Handle: h.create, Auth: write},
		{Method: "GET", Pattern: pull, Handle: h.get, Auth: read, StreamMedia: gitdiff.Media()},
		{Method: "PATCH", Pattern: pull, Handle: h.update, Auth: author},
		{Method: "GET", Pattern: pull + "/commits", Handle: h.listCommits, Auth: read},
		{Method: "GET", Pattern: pull + "/files", Handle: h.listFiles, Auth: read},
		{Method: "GET", Pattern: pull + "/merge", Handle: h.checkMerged, Auth: read},
		{Method: "PUT", Pattern: pull + "/merge", Handle: h.merge, Auth: merge},
		{Method: "PUT", Pattern: pull + "/update-branch", Handle: h.updateBranch,
			Auth: rule(auth.RoleRead, false, "Push access to the head repository.", "pull_requests:write")},

		{Method: "GET", Pattern: pull + "/reviews", Handle: h.listReviews, Auth: read},
		{Method: "POST", Pattern: pull + "/reviews", Handle: simpleErrors(h.createReview), Auth: write},
		{Method: "GET", Pattern: pull + "/reviews/{review_id}", Handle: h.getReview, Auth: read},
		{Method: "PUT", Pattern: pull + "/reviews/{review_id}", Handle: simpleErrors(h.updateReview), Auth: reviewer},
		{Method: "DELETE", Pattern: pull + "/reviews/{review_id}", Handle: h.deletePendingReview, Auth: reviewer},
		{Method: "POST", Pattern: pull + "/reviews/{review_id}/events", Handle: simpleErrors(h.submitReview), Auth: reviewer},
		{Method: "PUT", Pattern: pull + "/reviews/{review_id}/dismissals", Handle: simpleErrors(h.dismissReview), Auth: push},
		{Method: "GET", Pattern: pull + "/reviews/{review_id}/comments", Handle: h.listReviewComments, Auth: read},

		{Method: "GET", Pattern: repo + "/pulls/comments", Handle: h.listRepoComments, Auth: read},
		{Method: "GET", Pattern: repo + "/pulls/{comments}/{comment_id}", Handle: h.getComment, Auth: read},
		{Method: "PATCH", Pattern: repo + "/pulls/comments/{comment_id}", Handle: h.updateComment, Auth: author},
		{Method: "DELETE", Pattern: repo + "/pulls/{comments}/{comment_id}", Handle: h.deleteComment, Auth: author},
		{Method: "GET", Pattern: pull + "/comments", Handle: h.listComments, Auth: read},
		{Method: "POST", Pattern: pull + "/comments", Handle: h.createComment, Auth: write},
		{Method: "POST", Pattern: pull + "/comments/{comment_id}/replies", Handle: h.replyComment, Auth: write},

		{Method: "GET", Pattern: pull + "/requested_reviewers", Handle: h.listRequestedReviewers, Auth: read},
		{Method: "POST", Pattern: pull + "/requested_reviewers", Handle: h.requestReviewers, Auth: author},
		{Method: "DELETE", Pattern: pull + "/requested_reviewers", Handle: h.requestReviewers, Auth: author},
	}
}
