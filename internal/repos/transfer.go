package repos

import (
	"errors"
	"net/http"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/store"
)

// transferRequest is the body of POST /repos/{owner}/{repo}/transfer.
type transferRequest struct {
	NewOwner *string `json:"new_owner"`
	NewName  *string `json:"new_name"`
	TeamIDs  []int64 `json:"team_ids"` // no teams here: accepted and unused
}

// transfer answers POST /repos/{owner}/{repo}/transfer (admins): 202 with
// the repository under its new owner, optionally with a new name. The
// transfer happens at once (the platform's continues asynchronously): to
// the caller, or to an organization the caller may create repositories
// in. A transfer to another user needs that user's acceptance on the
// platform, which forgeapi does not keep: it is a 422 saying so. The old
// owner and name redirect to the repository (see Renamed); the git data,
// hooks, deliveries, stars, collaborators and feeds stay with it.
func (h *Handler) transfer(w http.ResponseWriter, r *http.Request) error {
	var body transferRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	if body.NewOwner == nil || *body.NewOwner == "" {
		return apierr.Invalid("Repository", "new_owner", apierr.CodeMissingField)
	}
	ctx := r.Context()
	target, err := accounts.ByLogin(ctx, h.Service.DB, *body.NewOwner)
	if errors.Is(err, store.ErrNotFound) {
		return apierr.Custom("Repository", "new_owner", "%s does not exist.", *body.NewOwner)
	} else if err != nil {
		return err
	}
	actor, err := accounts.ByID(ctx, h.Service.DB, auth.PrincipalFrom(ctx).UserID())
	if err != nil {
		return err
	}
	repo := From(ctx)
	switch {
	case target.ID == repo.Owner.ID:
		return apierr.Custom("Repository", "new_owner", "%s already owns %s.", target.Login, repo.FullName())
	case target.IsOrg():
		if err := h.checkCreatesIn(r, actor, target, "Repository", "new_owner"); err != nil {
			return err
		}
	case target.ID != actor.ID:
		return apierr.Custom("Repository", "new_owner",
			"A transfer to another user waits for their acceptance, which this server does not keep: transfer to yourself or to an organization you can create repositories in.")
	}
	moved, err := h.Service.Update(ctx, repo, Changes{Owner: target, Name: body.NewName}, actor)
	if err != nil {
		return err
	}
	return h.write(w, r, http.StatusAccepted, moved, auth.RoleAdmin)
}
