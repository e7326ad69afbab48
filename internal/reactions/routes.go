package reactions

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/wire"
)

// SubjectFunc resolves the subject a route names by its path value (an
// issue number, or a comment or release id) in repo to the subject's id;
// ErrNoSubject (or store.ErrNotFound) when repo has none.
type SubjectFunc func(ctx context.Context, repo *repos.Repository, key int64) (int64, error)

// Handler serves the reactions endpoints of the five kinds of subject.
// Subjects holds one SubjectFunc per kind; a kind without one is not
// routed.
type Handler struct {
	Service  *Service
	Subjects map[Kind]SubjectFunc
}

// route is where one kind's reactions live: the subject's path (its key
// in {key}) and the fine-grained permissions that change them. list is
// the pattern of the GET list when the literal one would conflict in
// net/http.ServeMux with another area's (.../issues/{issue_number}/assignees/{assignee},
// .../pulls/{pull_number}/reviews/{review_id}): its {comments} and
// {reactions} segments are checked by the handler (a 404 unless they are
// those words), and the other area's pattern stays more specific.
type route struct {
	kind  Kind
	path  string
	key   string
	write []string
	list  string
}

var routesByKind = []route{
	{Issue, "/issues/{issue_number}", "issue_number", []string{"issues:write", "pull_requests:write"}, ""},
	{IssueComment, "/issues/comments/{comment_id}", "comment_id", []string{"issues:write", "pull_requests:write"},
		"/issues/{comments}/{comment_id}/{reactions}"},
	{ReviewComment, "/pulls/comments/{comment_id}", "comment_id", []string{"pull_requests:write"},
		"/pulls/{comments}/{comment_id}/{reactions}"},
	{CommitComment, "/comments/{comment_id}", "comment_id", []string{"contents:write"}, ""},
	{Release, "/releases/{release_id}", "release_id", []string{"contents:write"}, listedBySubject},
}

// listedBySubject is the list pattern of a kind whose area serves the GET
// list itself with List (releases: .../releases/{release_id}/{assets}
// lists assets and reactions).
const listedBySubject = "-"

// List is the GET list handler of kind's reactions, for an area that
// serves it on a pattern of its own (listedBySubject); nil when the kind
// has no SubjectFunc.
func (h *Handler) List(kind Kind) httpapi.HandlerFunc {
	for _, rt := range routesByKind {
		if rt.kind == kind && h.Subjects[kind] != nil {
			return h.list(rt)
		}
	}
	return nil
}

// literal reports whether the path's wildcard segments standing for
// literal words ({comments}, {reactions}) hold those words.
func literal(r *http.Request) bool {
	for _, word := range []string{"comments", "reactions"} {
		if v := r.PathValue(word); v != "" && v != word {
			return false
		}
	}
	return true
}

// Routes is the reactions route table. Anyone who reads a repository
// lists its reactions (public repositories anonymously; fine-grained:
// Metadata read) and reacts (classic tokens: public_repo or repo;
// fine-grained and app tokens: the subject's own write permission:
// Issues or Pull requests for issues and their comments, Pull requests
// for review comments, Contents for commit comments and releases). A
// reaction is deleted by its author, or by an administrator.
func (h *Handler) Routes() []httpapi.Route {
	read := auth.Rule{Target: auth.TargetRepo, Role: auth.RoleRead, Public: true,
		Permissions: auth.Perm("metadata:read"), TokenTypes: auth.AllTokenTypes}
	var out []httpapi.Route
	for _, rt := range routesByKind {
		if h.Subjects[rt.kind] == nil {
			continue
		}
		write := auth.Rule{Target: auth.TargetRepo, Role: auth.RoleRead, Permissions: auth.Perm(rt.write...),
			TokenTypes: auth.AllTokenTypes}
		remove := write
		remove.Extra = "Authors delete their own reactions; anyone else needs admin access."
		const repo = "/repos/{owner}/{repo}"
		base := repo + rt.path + "/reactions"
		list := base
		if rt.list != "" {
			list = repo + rt.list
		}
		if rt.list != listedBySubject {
			out = append(out, httpapi.Route{Method: "GET", Pattern: list, Handle: h.list(rt), Auth: read})
		}
		out = append(out,
			httpapi.Route{Method: "POST", Pattern: base, Handle: h.create(rt), Auth: write},
			httpapi.Route{Method: "DELETE", Pattern: base + "/{reaction_id}", Handle: h.delete(rt), Auth: remove},
		)
	}
	return out
}

// subject resolves the route's subject in the route's repository: a 404
// for a key that is not a number or names nothing there.
func (h *Handler) subject(r *http.Request, rt route) (Subject, error) {
	key, err := httpapi.PathInt64(r, rt.key)
	if err != nil || !literal(r) {
		return Subject{}, apierr.NotFound()
	}
	repo := repos.From(r.Context())
	id, err := h.Subjects[rt.kind](r.Context(), repo, key)
	if errors.Is(err, ErrNoSubject) {
		return Subject{}, apierr.NotFound()
	} else if err != nil {
		return Subject{}, err
	}
	return Subject{Kind: rt.kind, ID: id, RepoID: repo.ID}, nil
}

// list answers GET .../reactions: the subject's reactions, oldest first,
// paged, of one content when ?content= names one (a 422 for an unknown
// content).
func (h *Handler) list(rt route) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		subject, err := h.subject(r, rt)
		if err != nil {
			return err
		}
		page, err := httpapi.ParsePage(r)
		if err != nil {
			return err
		}
		content := r.URL.Query().Get("content")
		if content != "" && contentIndex(content) < 0 {
			return apierr.Invalid("Reaction", "content", apierr.CodeInvalid)
		}
		list, more, err := h.Service.List(r.Context(), subject, content, page)
		if err != nil {
			return err
		}
		base := httpapi.BaseURL(r.Context())
		out := make([]reactionJSON, len(list))
		for i, x := range list {
			out[i] = toJSON(base, x)
		}
		httpapi.SetLinksMore(w, r, page, more)
		httpapi.WriteJSON(w, http.StatusOK, out)
		return nil
	}
}

// createRequest is the body of POST .../reactions.
type createRequest struct {
	Content *string `json:"content"`
}

// create answers POST .../reactions: 201 with the new reaction, or 200
// with the one the caller had already left.
func (h *Handler) create(rt route) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var body createRequest
		if err := httpapi.DecodeJSON(r, &body); err != nil {
			return err
		}
		if body.Content == nil {
			return apierr.Invalid("Reaction", "content", apierr.CodeMissingField)
		}
		subject, err := h.subject(r, rt)
		if err != nil {
			return err
		}
		actor, err := h.actor(r)
		if err != nil {
			return err
		}
		x, created, err := h.Service.Create(r.Context(), subject, actor, *body.Content)
		if err != nil {
			return err
		}
		status := http.StatusOK
		if created {
			status = http.StatusCreated
		}
		httpapi.WriteJSON(w, status, toJSON(httpapi.BaseURL(r.Context()), x))
		return nil
	}
}

// delete answers DELETE .../reactions/{reaction_id}: 204.
func (h *Handler) delete(rt route) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := httpapi.PathInt64(r, "reaction_id")
		if err != nil {
			return apierr.NotFound()
		}
		subject, err := h.subject(r, rt)
		if err != nil {
			return err
		}
		actor, err := h.actor(r)
		if err != nil {
			return err
		}
		admin := auth.RoleFrom(r.Context()) >= auth.RoleAdmin
		if err := h.Service.Delete(r.Context(), subject, id, actor, admin); err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
}

// actor is the calling user (an installation's bot for its tokens).
func (h *Handler) actor(r *http.Request) (*accounts.Account, error) {
	return accounts.ByID(r.Context(), h.Service.DB, auth.PrincipalFrom(r.Context()).UserID())
}

// reactionJSON is the platform's reaction object.
type reactionJSON struct {
	ID        int64                `json:"id"`
	NodeID    string               `json:"node_id"`
	User      *accounts.SimpleUser `json:"user"`
	Content   string               `json:"content"`
	CreatedAt wire.Time            `json:"created_at"`
}

func toJSON(base string, x *Reaction) reactionJSON {
	j := reactionJSON{ID: x.ID, NodeID: wire.NodeID("REA", x.ID), Content: x.Content, CreatedAt: wire.T(x.CreatedAt)}
	if x.User != nil {
		u := accounts.ToSimpleUser(base, x.User)
		j.User = &u
	}
	return j
}

// Rollup is the platform's reaction rollup object, the `reactions` key
// of the subjects' responses.
type Rollup struct {
	URL        string `json:"url"`
	TotalCount int    `json:"total_count"`
	PlusOne    int    `json:"+1"`
	MinusOne   int    `json:"-1"`
	Laugh      int    `json:"laugh"`
	Confused   int    `json:"confused"`
	Heart      int    `json:"heart"`
	Hooray     int    `json:"hooray"`
	Eyes       int    `json:"eyes"`
	Rocket     int    `json:"rocket"`
}

// Rollup is the rollup object of the counts of the subject whose API URL
// is subjectURL.
func (c Counts) Rollup(subjectURL string) Rollup {
	return Rollup{URL: subjectURL + "/reactions", TotalCount: c.Total(), PlusOne: c[0], MinusOne: c[1], Laugh: c[2],
		Confused: c[3], Heart: c[4], Hooray: c[5], Rocket: c[6], Eyes: c[7]}
}

func itoa(n int) string { return strconv.Itoa(n) }
