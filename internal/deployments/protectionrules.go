package deployments

import (
	"context"
	"errors"
	"net/http"

	"forgeapi/internal/apierr"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// ProtectionRule is a custom deployment protection rule: an app enabled
// on an environment to gate its deployments.
type ProtectionRule struct {
	ID            int64
	EnvironmentID int64
	AppID         int64
}

// RuleApp is an app as the protection rules show it.
type RuleApp struct {
	ID   int64
	Slug string
}

// RuleApps finds the apps that protection rules name.
type RuleApps interface {
	// Available returns the apps that may gate the repository's
	// deployments.
	Available(ctx context.Context, repo *repos.Repository) ([]RuleApp, error)
	// App returns the app id, and false when there is none.
	App(ctx context.Context, id int64) (RuleApp, bool, error)
	// Installation returns the id of the app's installation on the
	// repository's owner, read in q, and false when the app is not
	// installed there, is suspended or does not select the repository.
	Installation(ctx context.Context, q store.Q, appID int64, repo *repos.Repository) (int64, bool, error)
	// AppOfInstallation returns the app of an installation, and false
	// when there is no such installation.
	AppOfInstallation(ctx context.Context, installationID int64) (RuleApp, bool, error)
}

// ProtectionRules returns the environment's custom protection rules,
// oldest first.
func (s *Service) ProtectionRules(ctx context.Context, envID int64) ([]*ProtectionRule, error) {
	return protectionRules(ctx, s.DB, envID)
}

// protectionRules is ProtectionRules read through q, the caller's
// transaction when it has one.
func protectionRules(ctx context.Context, q store.Q, envID int64) ([]*ProtectionRule, error) {
	return queryRules(ctx, q, `SELECT id, environment_id, app_id FROM deployment_protection_rules
		WHERE environment_id = $1 ORDER BY id`, envID)
}

// ProtectionRuleByID returns the environment's rule id
// (store.ErrNotFound when it has none).
func (s *Service) ProtectionRuleByID(ctx context.Context, envID, id int64) (*ProtectionRule, error) {
	list, err := queryRules(ctx, s.DB, `SELECT id, environment_id, app_id FROM deployment_protection_rules
		WHERE environment_id = $1 AND id = $2`, envID, id)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, store.ErrNotFound
	}
	return list[0], nil
}

// EnableProtectionRule enables the app on the environment; an app
// enabled already is a 422.
func (s *Service) EnableProtectionRule(ctx context.Context, envID, appID int64) (*ProtectionRule, error) {
	r := &ProtectionRule{EnvironmentID: envID, AppID: appID}
	err := store.Normalize(s.DB.QueryRowContext(ctx, `INSERT INTO deployment_protection_rules (environment_id, app_id, created_at)
		VALUES ($1, $2, $3) RETURNING id`, envID, appID, store.Now()).Scan(&r.ID))
	if errors.Is(err, store.ErrConflict) {
		return nil, apierr.Invalid("DeploymentProtectionRule", "integration_id", apierr.CodeAlreadyExists)
	}
	return r, err
}

// DisableProtectionRule removes the rule.
func (s *Service) DisableProtectionRule(ctx context.Context, r *ProtectionRule) error {
	_, err := s.DB.ExecContext(ctx, `DELETE FROM deployment_protection_rules WHERE id = $1`, r.ID)
	return store.Normalize(err)
}

// queryRules runs a query of protection rules' columns in q.
func queryRules(ctx context.Context, q store.Q, query string, args ...any) ([]*ProtectionRule, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, store.Normalize(err)
	}
	defer rows.Close()
	out := []*ProtectionRule{}
	for rows.Next() {
		r := &ProtectionRule{}
		if err := rows.Scan(&r.ID, &r.EnvironmentID, &r.AppID); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// ruleAppJSON is the platform's custom-deployment-rule-app.
type ruleAppJSON struct {
	ID             int64  `json:"id"`
	Slug           string `json:"slug"`
	IntegrationURL string `json:"integration_url"`
	NodeID         string `json:"node_id"`
}

func toRuleAppJSON(base string, a RuleApp) ruleAppJSON {
	return ruleAppJSON{ID: a.ID, Slug: a.Slug, IntegrationURL: base + "/apps/" + a.Slug, NodeID: wire.NodeID("A", a.ID)}
}

// ruleJSON is the platform's deployment-protection-rule.
type ruleJSON struct {
	ID      int64       `json:"id"`
	NodeID  string      `json:"node_id"`
	Enabled bool        `json:"enabled"`
	App     ruleAppJSON `json:"app"`
}

// ruleJSON renders the rule with its app; false when the app is gone.
func (h *Handler) ruleJSON(r *http.Request, rule *ProtectionRule) (ruleJSON, bool, error) {
	app, ok, err := h.RuleApps.App(r.Context(), rule.AppID)
	if err != nil || !ok {
		return ruleJSON{}, false, err
	}
	return ruleJSON{ID: rule.ID, NodeID: wire.NodeID("CDPR", rule.ID), Enabled: true,
		App: toRuleAppJSON(httpapi.BaseURL(r.Context()), app)}, true, nil
}

// listRules answers GET .../deployment_protection_rules.
func (h *Handler) listRules(w http.ResponseWriter, r *http.Request) error {
	e, err := h.environment(r)
	if err != nil {
		return err
	}
	rules, err := h.Service.ProtectionRules(r.Context(), e.ID)
	if err != nil {
		return err
	}
	out := []ruleJSON{}
	for _, rule := range rules {
		j, ok, err := h.ruleJSON(r, rule)
		if err != nil {
			return err
		}
		if ok {
			out = append(out, j)
		}
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"total_count": len(out), "custom_deployment_protection_rules": out})
	return nil
}

// availableRuleApps answers GET .../deployment_protection_rules/apps:
// the apps that may be enabled (RuleApps.Available).
func (h *Handler) availableRuleApps(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	if _, err := h.environment(r); err != nil {
		return err
	}
	all, err := h.RuleApps.Available(r.Context(), repos.From(r.Context()))
	if err != nil {
		return err
	}
	base := httpapi.BaseURL(r.Context())
	out := []ruleAppJSON{}
	for _, a := range httpapi.Slice(page, all) {
		out = append(out, toRuleAppJSON(base, a))
	}
	httpapi.SetLinks(w, r, page, len(all))
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"total_count": len(all), "available_custom_deployment_protection_rule_integrations": out})
	return nil
}

// createRule answers POST .../deployment_protection_rules: 201 with the
// rule enabling integration_id, which must be an available app.
func (h *Handler) createRule(w http.ResponseWriter, r *http.Request) error {
	e, err := h.environment(r)
	if err != nil {
		return err
	}
	var body struct {
		IntegrationID *int64 `json:"integration_id"`
	}
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	if body.IntegrationID == nil {
		return apierr.Invalid("DeploymentProtectionRule", "integration_id", apierr.CodeMissingField)
	}
	available, err := h.RuleApps.Available(r.Context(), repos.From(r.Context()))
	if err != nil {
		return err
	}
	if !containsApp(available, *body.IntegrationID) {
		return apierr.Custom("DeploymentProtectionRule", "integration_id",
			"The app %d is not installed on this repository as a deployment protection rule.", *body.IntegrationID)
	}
	rule, err := h.Service.EnableProtectionRule(r.Context(), e.ID, *body.IntegrationID)
	if err != nil {
		return err
	}
	j, _, err := h.ruleJSON(r, rule)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusCreated, j)
	return nil
}

func containsApp(list []RuleApp, id int64) bool {
	for _, a := range list {
		if a.ID == id {
			return true
		}
	}
	return false
}

// rule reads the route's {protection_rule_id} of its environment.
func (h *Handler) rule(r *http.Request) (*ProtectionRule, error) {
	e, err := h.environment(r)
	if err != nil {
		return nil, err
	}
	id, err := httpapi.PathInt64(r, "protection_rule_id")
	if err != nil {
		return nil, err
	}
	rule, err := h.Service.ProtectionRuleByID(r.Context(), e.ID, id)
	if isNotFound(err) {
		return nil, apierr.NotFound()
	}
	return rule, err
}

// getRule answers GET .../deployment_protection_rules/{protection_rule_id}.
func (h *Handler) getRule(w http.ResponseWriter, r *http.Request) error {
	rule, err := h.rule(r)
	if err != nil {
		return err
	}
	j, ok, err := h.ruleJSON(r, rule)
	if err != nil {
		return err
	}
	if !ok {
		return apierr.NotFound()
	}
	httpapi.WriteJSON(w, http.StatusOK, j)
	return nil
}

// deleteRule answers DELETE .../deployment_protection_rules/{protection_rule_id}: 204.
func (h *Handler) deleteRule(w http.ResponseWriter, r *http.Request) error {
	rule, err := h.rule(r)
	if err != nil {
		return err
	}
	if err := h.Service.DisableProtectionRule(r.Context(), rule); err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}
