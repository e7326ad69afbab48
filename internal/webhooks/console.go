package webhooks

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"forgeapi/internal/accounts"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// The web console's way into the service (internal/console): the same
// validation, rules, audit entries and ping and meta deliveries as the
// API, for a signed-in user, who acts for no OAuth app and so sees the
// hooks no OAuth app created (visibleTo). The caller
// checks that the user may administer the hooks' repository or
// organization.

// HookForm is a repository or organization hook as the console's form
// edits it.
type HookForm struct {
	URL         string
	ContentType string // json | form
	// Secret is the new secret; on an edit, "" keeps the stored one
	// unless ClearSecret is set.
	Secret      string
	ClearSecret bool
	InsecureSSL bool
	// Events are the event names, "*" for all; none means push.
	Events []string
	Active bool
}

// body is the form as the API's PATCH body: the config replaces the
// stored one, keeping the secret when the form leaves it empty.
func (f HookForm) body(creating bool) *hookBody {
	insecure := insecureSSL{value: "0"}
	if f.InsecureSSL {
		insecure.value = "1"
	}
	secret := f.Secret
	if secret == "" && !creating && !f.ClearSecret {
		secret = masked
	}
	contentType := f.ContentType
	if contentType == "" {
		contentType = "form"
	}
	events := slices.DeleteFunc(slices.Clone(f.Events), func(e string) bool { return strings.TrimSpace(e) == "" })
	if len(events) == 0 {
		events = []string{"push"}
	}
	name := "web"
	return &hookBody{Name: &name, Active: &f.Active, Events: &events,
		Config: &configBody{URL: &f.URL, ContentType: &contentType, Secret: &secret, InsecureSSL: &insecure}}
}

// FormOf returns the form showing a stored hook (never its secret).
func FormOf(h *Hook) HookForm {
	return HookForm{URL: h.URL, ContentType: h.ContentType, InsecureSSL: h.InsecureSSL == "1",
		Events: slices.Clone(h.Events), Active: h.Active}
}

// RepoHooks returns the repository's hooks that no OAuth app created, in
// creation order.
func (s *Service) RepoHooks(ctx context.Context, repoID int64) ([]*Hook, error) {
	return queryHooks(ctx, s.DB, repoHooksPage, repoID, 0, 1000, 0)
}

// OrgHooks returns the organization's hooks that no OAuth app created, in
// creation order.
func (s *Service) OrgHooks(ctx context.Context, orgID int64) ([]*Hook, error) {
	return queryHooks(ctx, s.DB, orgHooksPage, orgID, 0, 1000, 0)
}

// CreateHookForm creates a hook of the repository, or of the
// organization when repo is nil, from the console's form; its errors are
// the API's (a validation *apierr.Error names the fields).
func (s *Service) CreateHookForm(ctx context.Context, repo *repos.Repository, org *accounts.Account, f HookForm, sender *accounts.Account) (*Hook, error) {
	t := target{Repo: repo, Org: org}
	if repo != nil {
		t.Org = nil
	}
	return s.CreateHook(ctx, t, f.body(true), 0, sender)
}

// UpdateHookForm replaces the hook's config, events and active flag with
// the form's (the secret kept when the form leaves it empty).
func (s *Service) UpdateHookForm(ctx context.Context, id int64, f HookForm) (*Hook, error) {
	body := f.body(false)
	return s.EditHook(ctx, id, func(h *Hook) error { return s.applyBody(h, body, false) })
}

// ConsoleHook returns the live hook with the id when it belongs to the
// repository (repoID) or organization (orgID) and no OAuth app created
// it; store.ErrNotFound otherwise.
func (s *Service) ConsoleHook(ctx context.Context, id, repoID, orgID int64) (*Hook, error) {
	h, err := HookByID(ctx, s.DB, id)
	if err != nil {
		return nil, err
	}
	if h.DeletedAt != nil || h.AppID != 0 || h.IsApp() || h.RepoID != repoID || h.OrgID != orgID {
		return nil, store.ErrNotFound
	}
	return h, nil
}

// Deliveries lists the hook's deliveries as the API does (newest first;
// Status "failure" for the failed ones).
func (s *Service) Deliveries(ctx context.Context, hookID int64, f DeliveryFilter) ([]*Delivery, error) {
	return listDeliveries(ctx, s.DB, hookID, f)
}

// DeliveryOf returns the hook's delivery with the id; store.ErrNotFound
// when the hook has none with it.
func (s *Service) DeliveryOf(ctx context.Context, hookID, id int64) (*Delivery, error) {
	return deliveryOfHook(ctx, s.DB, hookID, id)
}

// DeliveryPayload returns the JSON payload the delivery sends.
func (s *Service) DeliveryPayload(ctx context.Context, d *Delivery) (json.RawMessage, error) {
	return payloadBody(ctx, s.DB, d.PayloadID)
}

// DeliveryPending reports whether the delivery is still to be attempted
// (the API's status "pending").
func DeliveryPending(d *Delivery) bool { return !d.Done }
