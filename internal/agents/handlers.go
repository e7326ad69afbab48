package agents

import (
	"errors"
	"net/http"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/httpapi"
)

// noSource is the 404 of the source endpoints when none is configured.
func noSource() error {
	return apierr.New(http.StatusNotFound, "No custom agents source is configured for this enterprise.")
}

// listAgents serves GET /enterprises/{enterprise}/assistant/custom-agents.
func (h *Handler) listAgents(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	src, err := h.Service.Source(ctx, accounts.EnterpriseFrom(ctx))
	if errors.Is(err, ErrNoSource) {
		httpapi.WriteJSON(w, http.StatusOK, agentsJSON{})
		return nil
	}
	if err != nil {
		return err
	}
	if src.Repo == nil {
		return apierr.New(http.StatusNotFound, "Source repository not found: the organization %s has no %s repository.",
			src.Org.Login, RepositoryName)
	}
	agents, total, err := h.Service.Definitions(ctx, src.Repo, page.Offset(), page.Limit())
	if err != nil {
		return err
	}
	out := agentsJSON{CustomAgents: make([]agentJSON, 0, len(agents))}
	base := httpapi.BaseURL(ctx)
	for _, a := range agents {
		out.CustomAgents = append(out.CustomAgents, toAgentJSON(base, src.Repo, a))
	}
	httpapi.SetLinks(w, r, page, total)
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// getSource serves GET /enterprises/{enterprise}/assistant/custom-agents/source.
func (h *Handler) getSource(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	src, err := h.Service.Source(ctx, accounts.EnterpriseFrom(ctx))
	if errors.Is(err, ErrNoSource) {
		return noSource()
	}
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, toSourceJSON(httpapi.BaseURL(ctx), src, false))
	return nil
}

// putSourceRequest is the body of PUT .../custom-agents/source.
type putSourceRequest struct {
	OrganizationID *int64 `json:"organization_id"`
	CreateRuleset  *bool  `json:"create_ruleset"`
}

// putSource serves PUT /enterprises/{enterprise}/assistant/custom-agents/source.
func (h *Handler) putSource(w http.ResponseWriter, r *http.Request) error {
	var req putSourceRequest
	if err := httpapi.DecodeJSON(r, &req); err != nil {
		return err
	}
	switch {
	case req.OrganizationID == nil:
		return apierr.Invalid(resource, "organization_id", apierr.CodeMissingField)
	case *req.OrganizationID <= 0:
		return apierr.Invalid(resource, "organization_id", apierr.CodeInvalid)
	}
	createRuleset := req.CreateRuleset == nil || *req.CreateRuleset
	ctx := r.Context()
	src, err := h.Service.SetSource(ctx, accounts.EnterpriseFrom(ctx), *req.OrganizationID, createRuleset)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, toSourceJSON(httpapi.BaseURL(ctx), src, true))
	return nil
}

// deleteSource serves DELETE /enterprises/{enterprise}/assistant/custom-agents/source.
func (h *Handler) deleteSource(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	err := h.Service.DeleteSource(ctx, accounts.EnterpriseFrom(ctx))
	if errors.Is(err, ErrNoSource) {
		return noSource()
	}
	if err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}
