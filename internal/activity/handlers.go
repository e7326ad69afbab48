package activity

import (
	"context"
	"errors"
	"net/http"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// Handler serves starring, watching and following.
type Handler struct {
	Service *Service
}

// caller is the authenticated account the request acts as.
func (h *Handler) caller(r *http.Request) (*accounts.Account, error) {
	return accounts.ByID(r.Context(), h.Service.DB, auth.PrincipalFrom(r.Context()).Account.ID)
}

// present answers 204 when ok and 404 otherwise: the platform's shape
// for "is it so?" endpoints.
func present(w http.ResponseWriter, ok bool, err error) error {
	if err != nil {
		return err
	}
	if !ok {
		return apierr.NotFound()
	}
	httpapi.NoContent(w)
	return nil
}

func (h *Handler) star(w http.ResponseWriter, r *http.Request) error {
	user, err := h.caller(r)
	if err != nil {
		return err
	}
	if err := h.Service.Star(r.Context(), user, repos.From(r.Context())); err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

func (h *Handler) unstar(w http.ResponseWriter, r *http.Request) error {
	user, err := h.caller(r)
	if err != nil {
		return err
	}
	if err := h.Service.Unstar(r.Context(), user, repos.From(r.Context())); err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

func (h *Handler) checkStarred(w http.ResponseWriter, r *http.Request) error {
	ok, err := Starred(r.Context(), h.Service.DB, auth.PrincipalFrom(r.Context()).UserID(), repos.From(r.Context()).ID)
	return present(w, ok, err)
}

func (h *Handler) follow(w http.ResponseWriter, r *http.Request) error {
	p := auth.PrincipalFrom(r.Context())
	if err := h.Service.Follow(r.Context(), p.UserID(), accounts.UserFrom(r.Context()).ID); err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

func (h *Handler) unfollow(w http.ResponseWriter, r *http.Request) error {
	p := auth.PrincipalFrom(r.Context())
	if err := h.Service.Unfollow(r.Context(), p.UserID(), accounts.UserFrom(r.Context()).ID); err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

func (h *Handler) checkFollowing(w http.ResponseWriter, r *http.Request) error {
	ok, err := Follows(r.Context(), h.Service.DB, auth.PrincipalFrom(r.Context()).UserID(), accounts.UserFrom(r.Context()).ID)
	return present(w, ok, err)
}

// subscriptionJSON is the platform's repository-subscription object.
type subscriptionJSON struct {
	Subscribed    bool      `json:"subscribed"`
	Ignored       bool      `json:"ignored"`
	Reason        *string   `json:"reason"`
	CreatedAt     wire.Time `json:"created_at"`
	URL           string    `json:"url"`
	RepositoryURL string    `json:"repository_url"`
}

func toSubscriptionJSON(r *http.Request, repo *repos.Repository, s *Subscription) subscriptionJSON {
	api := httpapi.BaseURL(r.Context()) + "/repos/" + repo.FullName()
	return subscriptionJSON{Subscribed: !s.Ignored, Ignored: s.Ignored, CreatedAt: wire.T(s.CreatedAt),
		URL: api + "/subscription", RepositoryURL: api}
}

// subscriptionRequest is the body of PUT /repos/{owner}/{repo}/subscription.
type subscriptionRequest struct {
	Subscribed *bool `json:"subscribed"`
	Ignored    *bool `json:"ignored"`
}

// ignored returns the subscription's ignored flag: ignored true mutes the
// repository; otherwise the user watches it. subscribed false without
// ignored true would be no subscription at all: DELETE does that.
func (b subscriptionRequest) ignored() (bool, error) {
	ignored := b.Ignored != nil && *b.Ignored
	subscribed := b.Subscribed == nil || *b.Subscribed
	switch {
	case ignored && b.Subscribed != nil && *b.Subscribed:
		return false, apierr.Custom("Subscription", "ignored", "subscribed and ignored cannot both be true")
	case !ignored && !subscribed:
		return false, apierr.Custom("Subscription", "subscribed", "to stop watching a repository, delete its subscription")
	}
	return ignored, nil
}

func (h *Handler) setSubscription(w http.ResponseWriter, r *http.Request) error {
	var body subscriptionRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	ignored, err := body.ignored()
	if err != nil {
		return err
	}
	repo := repos.From(r.Context())
	userID := auth.PrincipalFrom(r.Context()).UserID()
	if !ignored {
		if err := accounts.CheckNotBlocked(r.Context(), h.Service.DB, repo.Owner, userID); err != nil {
			return err
		}
	}
	sub, err := h.Service.Subscribe(r.Context(), userID, repo.ID, ignored)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, toSubscriptionJSON(r, repo, sub))
	return nil
}

func (h *Handler) getSubscription(w http.ResponseWriter, r *http.Request) error {
	repo := repos.From(r.Context())
	sub, err := SubscriptionOf(r.Context(), h.Service.DB, auth.PrincipalFrom(r.Context()).UserID(), repo.ID)
	if errors.Is(err, store.ErrNotFound) {
		return apierr.NotFound()
	} else if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, toSubscriptionJSON(r, repo, sub))
	return nil
}

func (h *Handler) deleteSubscription(w http.ResponseWriter, r *http.Request) error {
	if err := h.Service.Unsubscribe(r.Context(), auth.PrincipalFrom(r.Context()).UserID(), repos.From(r.Context()).ID); err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

// followList is a page of the followers or the followed accounts of id.
type followList func(ctx context.Context, q store.Q, id int64, limit, offset int) ([]*accounts.Account, error)

// writeFollows answers a page of list for the account as simple users,
// with a Link to the next page when the page is full.
func (h *Handler) writeFollows(w http.ResponseWriter, r *http.Request, id int64, list followList) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	found, err := list(r.Context(), h.Service.DB, id, page.Limit()+1, page.Offset())
	if err != nil {
		return err
	}
	more := len(found) > page.Limit()
	found = found[:min(len(found), page.Limit())]
	base := httpapi.BaseURL(r.Context())
	out := make([]accounts.SimpleUser, 0, len(found))
	for _, a := range found {
		out = append(out, accounts.ToSimpleUser(base, a))
	}
	httpapi.SetLinksMore(w, r, page, more)
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (h *Handler) listOwnFollowers(w http.ResponseWriter, r *http.Request) error {
	return h.writeFollows(w, r, auth.PrincipalFrom(r.Context()).UserID(), accounts.Followers)
}

func (h *Handler) listOwnFollowing(w http.ResponseWriter, r *http.Request) error {
	return h.writeFollows(w, r, auth.PrincipalFrom(r.Context()).UserID(), accounts.Following)
}

func (h *Handler) listFollowers(w http.ResponseWriter, r *http.Request) error {
	return h.writeFollows(w, r, accounts.UserFrom(r.Context()).ID, accounts.Followers)
}

func (h *Handler) listFollowing(w http.ResponseWriter, r *http.Request) error {
	return h.writeFollows(w, r, accounts.UserFrom(r.Context()).ID, accounts.Following)
}

// checkUserFollows answers GET /users/{username}/following/{target_user}:
// 204 when the user follows the target, 404 otherwise.
func (h *Handler) checkUserFollows(w http.ResponseWriter, r *http.Request) error {
	target, err := accounts.ByLogin(r.Context(), h.Service.DB, r.PathValue("target_user"))
	if errors.Is(err, store.ErrNotFound) {
		return apierr.NotFound()
	}
	if err != nil {
		return err
	}
	ok, err := Follows(r.Context(), h.Service.DB, accounts.UserFrom(r.Context()).ID, target.ID)
	return present(w, ok, err)
}

// stargazerJSON is a stargazer with the star media type
// (application/vnd.github.star+json): when, and who.
type stargazerJSON struct {
	StarredAt wire.Time           `json:"starred_at"`
	User      accounts.SimpleUser `json:"user"`
}

// listStargazers answers GET /repos/{owner}/{repo}/stargazers: the users
// who starred it, in the order they did, paged; with the star media type
// each with starred_at.
func (h *Handler) listStargazers(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	list, err := accounts.Stargazers(r.Context(), h.Service.DB, repos.From(r.Context()).ID, page.Limit()+1, page.Offset())
	if err != nil {
		return err
	}
	more := len(list) > page.Limit()
	list = list[:min(len(list), page.Limit())]
	base := httpapi.BaseURL(r.Context())
	httpapi.SetLinksMore(w, r, page, more)
	if httpapi.MediaParam(r) == "star" {
		out := make([]stargazerJSON, 0, len(list))
		for _, s := range list {
			out = append(out, stargazerJSON{StarredAt: wire.T(s.StarredAt), User: accounts.ToSimpleUser(base, s.User)})
		}
		httpapi.WriteJSON(w, http.StatusOK, out)
		return nil
	}
	out := make([]accounts.SimpleUser, 0, len(list))
	for _, s := range list {
		out = append(out, accounts.ToSimpleUser(base, s.User))
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// listWatchers answers GET /repos/{owner}/{repo}/subscribers: the users
// who watch it, paged.
func (h *Handler) listWatchers(w http.ResponseWriter, r *http.Request) error {
	id := repos.From(r.Context()).ID
	return h.writeFollows(w, r, id, accounts.Watchers)
}
