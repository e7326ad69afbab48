package feeds

import (
	"context"
	"net/http"
	"strconv"

	"forgeapi/internal/access"
	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
)

// serve answers one feed request: the page of the filter's events, its
// Link header, ETag and X-Poll-Interval, or 304 when the client's ETag
// is current. The ETag is computed from the ids on the page before any
// event is rendered; a conditional poll of an unchanged page is answered
// from the page cache without a query. key names the feed and viewer;
// build makes its filter (only when a query is needed).
func (h *Handler) serve(w http.ResponseWriter, r *http.Request, key string, build func() (filter, error)) error {
	httpapi.SetHeader(w, "X-Poll-Interval", strconv.Itoa(h.poll.Observe()))
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	if page.Offset() >= h.cfg.MaxEvents {
		return apierr.Unprocessable("In order to keep the API fast for everyone, pagination is limited for this resource: "+
			"feeds reach back %d events. Check the rel=\"last\" link of the Link header to see how far back you can page.", h.cfg.MaxEvents)
	}
	ctx, now := r.Context(), h.now()
	floor, err := h.floor.get(ctx, h.db, now.Add(-h.cfg.Window))
	if err != nil {
		return err
	}
	caller := auth.PrincipalFrom(ctx).CacheKey()
	pageKey := pageID{key, page.Page, page.PerPage}
	if r.Header.Get("If-None-Match") != "" {
		if e, ok := h.pages.get(pageKey, floor, now); ok && httpapi.NotModified(w, r, e.etag(caller)) {
			return nil
		}
	}
	f, err := build()
	if err != nil {
		return err
	}
	v := h.pages.version.Load()
	ids, err := pageIDs(ctx, h, key, f, floor, page.Offset(), min(page.PerPage, h.cfg.MaxEvents-page.Offset()))
	if err != nil {
		return err
	}
	if httpapi.NotModified(w, r, h.pages.put(pageKey, v, floor, ids, now).etag(caller)) {
		return nil
	}
	rows, err := eventsByID(ctx, h.db, ids)
	if err != nil {
		return err
	}
	total, err := h.total(ctx, key, f, floor, page, ids)
	if err != nil {
		return err
	}
	httpapi.SetLinks(w, r, page, total)
	httpapi.WriteJSON(w, http.StatusOK, toJSON(httpapi.BaseURL(ctx), rows))
	return nil
}

// ready wraps a filter that costs nothing to build.
func ready(f filter) (string, func() (filter, error)) {
	return f.key, func() (filter, error) { return f, nil }
}

// total is how many of the filter's events paging reaches (at most
// MaxEvents). A short page needs no count; a full first page uses the
// count cache, keyed by the feed's newest event.
func (h *Handler) total(ctx context.Context, key string, f filter, floor int64, page httpapi.Page, ids []int64) (int, error) {
	if len(ids) < page.PerPage {
		return page.Offset() + len(ids), nil
	}
	now := h.now()
	if page.Page == 1 {
		if n, ok := h.count.get(key, ids[0], floor, now); ok {
			return n, nil
		}
	}
	n, err := countUpTo(ctx, h, key, f, floor, h.cfg.MaxEvents)
	if err == nil && page.Page == 1 {
		h.count.put(key, ids[0], floor, n, now)
	}
	return n, err
}

// pageVersion names the content of a page: the feed and viewer (key), the
// page and the ids on it.
func pageVersion(key string, page, perPage int, ids []int64) string {
	b := make([]byte, 0, len(key)+16+len(ids)*8)
	b = append(b, key...)
	b = append(b, '|')
	b = strconv.AppendInt(b, int64(page), 10)
	b = append(b, '|')
	b = strconv.AppendInt(b, int64(perPage), 10)
	for _, v := range ids {
		b = append(b, ',')
		b = strconv.AppendInt(b, v, 10)
	}
	return string(b)
}

func (h *Handler) publicEvents(w http.ResponseWriter, r *http.Request) error {
	key, build := ready(publicFeed())
	return h.serve(w, r, key, build)
}

// repoEvents: a public repository's feed shows its public events; a
// private repository's feed (the guard has checked the caller may see
// it) shows all its events.
func (h *Handler) repoEvents(w http.ResponseWriter, r *http.Request) error {
	repo := repos.From(r.Context())
	key, build := ready(repoFeed(repo.ID, repo.Private))
	return h.serve(w, r, key, build)
}

// networkEvents shows the public events of the repository's network: the
// root it was forked from (transitively) and every fork of that root.
func (h *Handler) networkEvents(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	repo := repos.From(ctx)
	return h.serve(w, r, "network:"+id(repo.ID), func() (filter, error) {
		return h.networks.Get(repo.ID, func() (filter, error) {
			root, err := networkRoot(ctx, h, repo)
			if err != nil {
				return filter{}, err
			}
			forks, err := repos.Forks(ctx, h.db, root.ID)
			if err != nil {
				return filter{}, err
			}
			ids := []int64{root.ID}
			for _, f := range forks {
				ids = append(ids, f.ID)
			}
			return networkFeed(ids, h.cfg.MaxUnionSources), nil
		})
	})
}

// networkRoot follows fork_of up to the repository that is no fork.
func networkRoot(ctx context.Context, h *Handler, repo *repos.Repository) (*repos.Repository, error) {
	seen := map[int64]bool{repo.ID: true}
	for repo.ForkOfID != 0 && !seen[repo.ForkOfID] {
		parent, err := repos.ByID(ctx, h.db, repo.ForkOfID)
		if err != nil {
			return nil, err
		}
		seen[parent.ID] = true
		repo = parent
	}
	return repo, nil
}

func (h *Handler) orgEvents(w http.ResponseWriter, r *http.Request) error {
	key, build := ready(orgFeed(accounts.OrgFrom(r.Context()).ID, false))
	return h.serve(w, r, key, build)
}

func (h *Handler) userEvents(w http.ResponseWriter, r *http.Request) error {
	user := accounts.UserFrom(r.Context())
	v := privateViewer(auth.PrincipalFrom(r.Context()), user)
	return h.serve(w, r, actorKey(user.ID, v), func() (filter, error) { return actorFeed(user.ID, v), nil })
}

func (h *Handler) userPublicEvents(w http.ResponseWriter, r *http.Request) error {
	key, build := ready(actorFeed(accounts.UserFrom(r.Context()).ID, viewer{}))
	return h.serve(w, r, key, build)
}

func (h *Handler) receivedEvents(w http.ResponseWriter, r *http.Request) error {
	user := accounts.UserFrom(r.Context())
	return h.serveReceived(w, r, user, privateViewer(auth.PrincipalFrom(r.Context()), user))
}

func (h *Handler) receivedPublicEvents(w http.ResponseWriter, r *http.Request) error {
	return h.serveReceived(w, r, accounts.UserFrom(r.Context()), viewer{})
}

// serveReceived serves the events the user receives as v sees them. The
// feed's filter (the user's sources and which of them v may see private
// events of) is cached until a write to the tables it is read from.
func (h *Handler) serveReceived(w http.ResponseWriter, r *http.Request, user *accounts.Account, v viewer) error {
	key := receivedKey(user.ID, v)
	return h.serve(w, r, key, func() (filter, error) {
		return h.received.Get(key, func() (filter, error) {
			src, err := receivedSources(r.Context(), h.db, user.ID, v)
			if err != nil {
				return filter{}, err
			}
			return receivedFeed(user.ID, src, h.cfg.MaxUnionSources), nil
		})
	})
}

// userOrgEvents is the user's organization dashboard: only the user may
// read it. Members see the organization's private events too (unless its
// base repository permission is none); others its public events. A fine-grained token must be one on the
// organization (the route requires its Events permission); an OAuth
// token made through the authorizations API is refused when the
// organization enforces SAML single sign-on, as /orgs/{org} routes do.
func (h *Handler) userOrgEvents(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	p, user := auth.PrincipalFrom(ctx), accounts.UserFrom(ctx)
	if p.UserID() != user.ID {
		return apierr.Forbidden("Only %s can read their organization dashboard.", user.Login)
	}
	org, err := accounts.OrgByLogin(ctx, h.db, r.PathValue("org"))
	if err != nil {
		return apierr.NotFound()
	}
	if err := access.SAMLRefusal(p, org); err != nil {
		return err
	}
	if p.FineGrained() && p.Token.ResourceOwnerID != org.ID {
		return apierr.Forbidden("%s", httpapi.NotAccessibleMessage(p.Token.Kind))
	}
	role, err := access.OrgRole(ctx, h.db, p, org)
	if err != nil {
		return err
	}
	// Owners read every repository; members as the base repository
	// permission lets them (none: public events only).
	reads := role >= auth.RoleAdmin || role >= auth.RoleRead && access.BaseRole(org) > auth.RoleNone
	member := reads && (!p.ScopeBased() || p.Token.Scopes.Grants("repo"))
	key, build := ready(orgFeed(org.ID, member))
	return h.serve(w, r, key, build)
}

// privateViewer returns the viewer of user's private events that the
// principal is, or the zero viewer (public events only): the user
// themself with a password or a classic or OAuth token with the repo
// scope sees the private events of every repository they can read (but
// an OAuth token made through the authorizations API not those of
// organizations that enforce SAML single sign-on, which refuse it); a
// fine-grained token of the user with the user permission Events (read)
// only those of the repositories the token selects.
func privateViewer(p *auth.Principal, user *accounts.Account) viewer {
	if p.Anonymous() || p.Account.ID != user.ID {
		return viewer{}
	}
	switch {
	case p.Token == nil:
		return viewer{user: user.ID}
	case p.ScopeBased() && p.Token.Scopes.Grants("repo"):
		return viewer{user: user.ID, noSAML: access.SAMLRefused(p)}
	case p.FineGrained() && p.Token.Kind != auth.KindInstallation && p.Token.ResourceOwnerID == user.ID &&
		p.Token.Grant.Has(auth.Need{Name: "user_events", Level: auth.Read}):
		return viewer{user: user.ID, scoped: true, owner: p.Token.ResourceOwnerID, all: p.Token.AllRepositories, repos: p.Token.RepositoryIDs}
	}
	return viewer{}
}
