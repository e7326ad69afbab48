package gists

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/git/githttp"
	"forgeapi/internal/git/gitread"
	"forgeapi/internal/githost"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/store"
)

// serveGit serves a gist's repository over git's smart HTTP through
// githost (its authentication and refusals), with Access deciding.
func (h *Handler) serveGit(w http.ResponseWriter, r *http.Request) {
	seg := r.PathValue("gist")
	name := strings.TrimSuffix(seg, ".git")
	subPath := strings.TrimPrefix(r.URL.Path, "/gist/"+seg)
	h.Git.ServeDir(w, r, subPath, func(ctx context.Context, p *auth.Principal, service githttp.Service) (githost.DirTarget, error) {
		return h.Access(ctx, p, name, service)
	})
}

// Access is what the principal may do with the repository of the gist
// name (its hex id) for the git service, for any transport: anyone
// clones and fetches, secret gists too; only the owner pushes, with the
// gist scope (classic and OAuth tokens) or the Gists permission (write)
// of a permission-based token, and a push may neither bring a directory
// nor delete the gist's branch, and moves the gist's updated_at. A refusal is an *apierr.Error (404 for no
// such gist, 401 for an anonymous push, 403 for anyone else's).
func (h *Handler) Access(ctx context.Context, p *auth.Principal, name string, service githttp.Service) (githost.DirTarget, error) {
	g, err := ByName(ctx, h.Service.DB, name)
	if errors.Is(err, store.ErrNotFound) {
		return githost.DirTarget{}, apierr.NotFound()
	}
	if err != nil {
		return githost.DirTarget{}, err
	}
	t := githost.DirTarget{Dir: h.Service.Dir(g.Name)}
	if service != githttp.ServiceReceivePack {
		return t, nil
	}
	if err := pushRefusal(p, g); err != nil {
		return t, err
	}
	t.PreReceive = func(ctx context.Context, updates []githttp.RefUpdate, inspect githttp.Inspector) error {
		return checkPush(ctx, t.Dir, updates, inspect)
	}
	t.PostReceive = func(ctx context.Context, _ []githttp.RefUpdate) error { return h.Service.Touch(ctx, g) }
	return t, nil
}

// pushRefusal is why the principal may not push to the gist, nil when it
// may.
func pushRefusal(p *auth.Principal, g *Gist) error {
	switch {
	case p.Anonymous():
		return apierr.Unauthorized("Authentication required.")
	case p.UserID() != g.Owner.ID:
		return apierr.Forbidden("Permission to push to gist %s denied: only its owner pushes.", g.Name)
	case p.ScopeBased() && !p.Token.Scopes.Grants("gist"):
		return apierr.Forbidden("The token lacks the gist scope.")
	case p.FineGrained() && !p.Token.Grant.Has(auth.Need{Name: "gists", Level: auth.Write}):
		return apierr.Forbidden("The token lacks the Gists permission (write).")
	case p.CloneOnly() || (p.Token != nil && p.Token.Kind == auth.KindInstallation):
		return apierr.Forbidden("Permission to push to gist %s denied.", g.Name)
	}
	return nil
}

// checkPush refuses a push that deletes the branch the gist shows, or
// whose new commits hold a directory: a gist's files have plain names.
func checkPush(ctx context.Context, dir string, updates []githttp.RefUpdate, inspect githttp.Inspector) error {
	shown, err := headRef(ctx, dir)
	if err != nil {
		return err
	}
	for _, u := range updates {
		if u.IsDelete() {
			if u.Ref == shown {
				return githttp.Refuse("The gist's branch %s cannot be deleted.", strings.TrimPrefix(shown, "refs/heads/"))
			}
			continue
		}
		paths, err := inspect.ChangedPaths(ctx, u)
		if err != nil {
			return err
		}
		for _, p := range paths {
			if strings.Contains(p, "/") {
				return githttp.Refuse("Gist does not support directories.")
			}
		}
	}
	return nil
}

// raw serves a gist file's bytes (raw_url) to anyone, as text: the blob
// must be in the gist's repository. Its address names the content, so it
// may be cached for good.
func (h *Handler) raw(w http.ResponseWriter, r *http.Request) {
	g, err := ByName(r.Context(), h.Service.DB, r.PathValue("gist"))
	if err == nil && !strings.EqualFold(g.Owner.Login, r.PathValue("owner")) {
		err = store.ErrNotFound
	}
	var data []byte
	if err == nil {
		data, err = readBlob(h.Service.Dir(g.Name), r.PathValue("blob"))
	}
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			err = apierr.NotFound()
		}
		httpapi.WriteError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "max-age=300")
	_, _ = w.Write(data)
}

// readBlob reads the blob sha of the repository dir; store.ErrNotFound
// when it has no such blob.
func readBlob(dir, sha string) ([]byte, error) {
	if len(sha) != 40 || strings.Trim(sha, "0123456789abcdef") != "" {
		return nil, store.ErrNotFound
	}
	repo, err := gitread.Open(dir)
	if err != nil {
		return nil, err
	}
	defer repo.Close()
	if typ, err := repo.ObjectType(sha); err != nil || typ != "blob" {
		return nil, store.ErrNotFound
	}
	return repo.ReadBlob(sha)
}
