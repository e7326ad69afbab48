package notifications

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// PollInterval is the X-Poll-Interval the lists answer: how many seconds
// a client should wait before polling again, as the platform's.
const PollInterval = "60"

// Handler serves the notifications endpoints.
type Handler struct {
	Service *Service
}

// Routes is the notifications route table: the authenticated user's own
// threads, for classic and OAuth tokens with the notifications or repo
// scope (fine-grained and app tokens do not reach notifications, as on
// the platform). A repository's list needs read access to it too.
// Anonymous callers get 401 where the platform's description documents
// it, 404 elsewhere (hidden).
func (h *Handler) Routes() []httpapi.Route {
	self := auth.Rule{Target: auth.TargetSelf, Scopes: []string{"notifications", "repo"}, Unauthorized401: true}
	hidden := self
	hidden.Unauthorized401 = false
	repo := auth.Rule{Target: auth.TargetRepo, Role: auth.RoleRead, Scopes: []string{"notifications", "repo"}}
	const thread = "/notifications/threads/{thread_id}"
	return []httpapi.Route{
		{Method: "GET", Pattern: "/notifications", Handle: h.list, Auth: self},
		{Method: "PUT", Pattern: "/notifications", Handle: h.markRead, Auth: self},
		{Method: "GET", Pattern: thread, Handle: h.getThread, Auth: self},
		{Method: "PATCH", Pattern: thread, Handle: h.markThreadRead, Auth: hidden},
		{Method: "DELETE", Pattern: thread, Handle: h.markThreadDone, Auth: hidden},
		{Method: "GET", Pattern: thread + "/subscription", Handle: h.getSubscription, Auth: self},
		{Method: "PUT", Pattern: thread + "/subscription", Handle: h.setSubscription, Auth: self},
		{Method: "DELETE", Pattern: thread + "/subscription", Handle: h.deleteSubscription, Auth: self},
		{Method: "GET", Pattern: "/repos/{owner}/{repo}/notifications", Handle: h.list, Auth: repo},
		{Method: "PUT", Pattern: "/repos/{owner}/{repo}/notifications", Handle: h.markRead, Auth: repo},
	}
}

// list answers GET /notifications and GET /repos/{owner}/{repo}/notifications:
// the caller's threads (unread only unless all=true; participating=true
// leaves out those of watched repositories; since and before bound
// updated_at), newest first, paged, with Last-Modified (the newest
// thread's update, which If-Modified-Since compares) and X-Poll-Interval.
func (h *Handler) list(w http.ResponseWriter, r *http.Request) error {
	f, err := filterOf(r)
	if err != nil {
		return err
	}
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	user, err := h.user(r)
	if err != nil {
		return err
	}
	list, more, latest, err := h.Service.List(r.Context(), user, f, page.Limit(), page.Offset())
	if err != nil {
		return err
	}
	urls := repos.URLsOf(r.Context())
	out := make([]threadJSON, len(list))
	for i, t := range list {
		out[i] = toJSON(urls, t)
	}
	w.Header().Set("X-Poll-Interval", PollInterval)
	httpapi.SetLastModified(w, latest)
	httpapi.SetLinksMore(w, r, page, more)
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// filterOf reads a list's all, participating, since and before (a 422
// naming a bad one); the route's repository, when it has one.
func filterOf(r *http.Request) (Filter, error) {
	q := r.URL.Query()
	var f Filter
	var fields apierr.Fields
	for name, dst := range map[string]*bool{"all": &f.All, "participating": &f.Participating} {
		if s := q.Get(name); s != "" {
			v, err := strconv.ParseBool(s)
			if err != nil {
				fields.Add("", name, apierr.CodeInvalid)
			}
			*dst = v
		}
	}
	for name, dst := range map[string]*time.Time{"since": &f.Since, "before": &f.Before} {
		if s := q.Get(name); s != "" {
			t, err := time.Parse(time.RFC3339, s)
			if err != nil {
				fields.Add("", name, apierr.CodeInvalid)
			}
			*dst = t
		}
	}
	if repo := repos.From(r.Context()); repo != nil {
		f.RepoID = repo.ID
	}
	return f, fields.Err()
}

// markReadRequest is the body of PUT /notifications.
type markReadRequest struct {
	LastReadAt *string `json:"last_read_at"`
	Read       *bool   `json:"read"`
}

// markRead answers PUT /notifications and PUT .../notifications: the
// threads updated at or before last_read_at (now by default) are marked
// read (or unread with read false); 205 Reset Content.
func (h *Handler) markRead(w http.ResponseWriter, r *http.Request) error {
	var body markReadRequest
	if r.ContentLength != 0 {
		if err := httpapi.DecodeJSON(r, &body); err != nil {
			return err
		}
	}
	at := store.Now()
	if body.LastReadAt != nil {
		t, err := time.Parse(time.RFC3339, *body.LastReadAt)
		if err != nil {
			return apierr.Invalid("Notification", "last_read_at", apierr.CodeInvalid)
		}
		at = t
	}
	user, err := h.user(r)
	if err != nil {
		return err
	}
	var repoID int64
	if repo := repos.From(r.Context()); repo != nil {
		repoID = repo.ID
	}
	if err := h.Service.MarkRead(r.Context(), user, repoID, at, body.Read == nil || *body.Read); err != nil {
		return err
	}
	w.WriteHeader(http.StatusResetContent)
	return nil
}

// getThread answers GET /notifications/threads/{thread_id}.
func (h *Handler) getThread(w http.ResponseWriter, r *http.Request) error {
	t, err := h.thread(r)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, toJSON(repos.URLsOf(r.Context()), t))
	return nil
}

// markThreadRead answers PATCH /notifications/threads/{thread_id}: 205.
func (h *Handler) markThreadRead(w http.ResponseWriter, r *http.Request) error {
	return h.change(w, r, http.StatusResetContent, h.Service.MarkThreadRead)
}

// markThreadDone answers DELETE /notifications/threads/{thread_id}: 204.
func (h *Handler) markThreadDone(w http.ResponseWriter, r *http.Request) error {
	return h.change(w, r, http.StatusNoContent, h.Service.MarkThreadDone)
}

// deleteSubscription answers DELETE .../subscription: 204; the thread is
// updated again only for what names the caller.
func (h *Handler) deleteSubscription(w http.ResponseWriter, r *http.Request) error {
	return h.change(w, r, http.StatusNoContent, func(ctx context.Context, user *accounts.Account, id int64) error {
		return h.Service.Subscribe(ctx, user, id, false, false)
	})
}

// getSubscription answers GET .../subscription.
func (h *Handler) getSubscription(w http.ResponseWriter, r *http.Request) error {
	t, err := h.thread(r)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, toSubscriptionJSON(httpapi.BaseURL(r.Context()), t))
	return nil
}

// setSubscription answers PUT .../subscription with {"ignored": bool}:
// an ignored thread gets no more updates; otherwise it is subscribed.
func (h *Handler) setSubscription(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Ignored *bool `json:"ignored"`
	}
	if r.ContentLength != 0 {
		if err := httpapi.DecodeJSON(r, &body); err != nil {
			return err
		}
	}
	ignored := body.Ignored != nil && *body.Ignored
	user, err := h.user(r)
	if err != nil {
		return err
	}
	id, err := threadID(r)
	if err != nil {
		return err
	}
	if err := h.Service.Subscribe(r.Context(), user, id, !ignored, ignored); err != nil {
		return err
	}
	return h.getSubscription(w, r)
}

// change runs a change of the caller's thread and answers status.
func (h *Handler) change(w http.ResponseWriter, r *http.Request, status int, do func(context.Context, *accounts.Account, int64) error) error {
	user, err := h.user(r)
	if err != nil {
		return err
	}
	id, err := threadID(r)
	if err != nil {
		return err
	}
	if err := do(r.Context(), user, id); err != nil {
		return err
	}
	w.WriteHeader(status)
	return nil
}

// thread is the caller's thread {thread_id}: a 404 for another's.
func (h *Handler) thread(r *http.Request) (*Thread, error) {
	user, err := h.user(r)
	if err != nil {
		return nil, err
	}
	id, err := threadID(r)
	if err != nil {
		return nil, err
	}
	return h.Service.Get(r.Context(), user, id)
}

func threadID(r *http.Request) (int64, error) {
	id, err := httpapi.PathInt64(r, "thread_id")
	if err != nil {
		return 0, apierr.NotFound()
	}
	return id, nil
}

func (h *Handler) user(r *http.Request) (*accounts.Account, error) {
	return accounts.ByID(r.Context(), h.Service.DB, auth.PrincipalFrom(r.Context()).UserID())
}

// threadJSON is the platform's thread object.
type threadJSON struct {
	ID              string           `json:"id"`
	Repository      repos.SimpleJSON `json:"repository"`
	Subject         subjectJSON      `json:"subject"`
	Reason          string           `json:"reason"`
	Unread          bool             `json:"unread"`
	UpdatedAt       wire.Time        `json:"updated_at"`
	LastReadAt      *wire.Time       `json:"last_read_at"`
	URL             string           `json:"url"`
	SubscriptionURL string           `json:"subscription_url"`
}

type subjectJSON struct {
	Title            string  `json:"title"`
	URL              string  `json:"url"`
	LatestCommentURL *string `json:"latest_comment_url"`
	Type             string  `json:"type"`
}

func toJSON(urls repos.URLs, t *Thread) threadJSON {
	base := urls.Base
	url := base + "/notifications/threads/" + strconv.FormatInt(t.ID, 10)
	repo := repos.ToJSON(urls, t.Repo, repos.Stats{}, auth.RoleNone)
	kind := "issues"
	if t.SubjectType == SubjectPullRequest {
		kind = "pulls"
	}
	subject := subjectJSON{Title: t.Title, Type: t.SubjectType,
		URL: base + "/repos/" + t.Repo.FullName() + "/" + kind + "/" + strconv.FormatInt(t.Number, 10)}
	if t.LatestCommentURL != "" {
		subject.LatestCommentURL = &t.LatestCommentURL
	} else {
		subject.LatestCommentURL = &subject.URL
	}
	return threadJSON{ID: strconv.FormatInt(t.ID, 10), Repository: repo.Simple(), Subject: subject, Reason: t.Reason,
		Unread: t.Unread, UpdatedAt: wire.T(t.UpdatedAt), LastReadAt: wire.TP(t.LastReadAt), URL: url,
		SubscriptionURL: url + "/subscription"}
}

// subscriptionJSON is the platform's thread-subscription object.
type subscriptionJSON struct {
	Subscribed bool      `json:"subscribed"`
	Ignored    bool      `json:"ignored"`
	Reason     *string   `json:"reason"`
	CreatedAt  wire.Time `json:"created_at"`
	URL        string    `json:"url"`
	ThreadURL  string    `json:"thread_url"`
}

func toSubscriptionJSON(base string, t *Thread) subscriptionJSON {
	thread := base + "/notifications/threads/" + strconv.FormatInt(t.ID, 10)
	return subscriptionJSON{Subscribed: t.Subscribed, Ignored: t.Ignored, CreatedAt: wire.T(t.CreatedAt),
		URL: thread + "/subscription", ThreadURL: thread}
}
