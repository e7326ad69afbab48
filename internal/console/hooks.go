package console

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"forgeapi/internal/access"
	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/repos"
	"forgeapi/internal/webhooks"
)

// hookScope is the repository or organization whose hooks a page shows,
// which the signed-in user administers.
type hookScope struct {
	Repo *repos.Repository // nil for an organization
	Org  *accounts.Account // nil for a repository
	Base string            // where the pages' forms post
	// Pages is the hooks page's path, where the pages link and the forms
	// lead back to: a repository's is the platform's
	// /{owner}/{repo}/settings/hooks (see RepoHooksPages), an
	// organization's is Base.
	Pages string
	Name  string // OWNER/REPO or the organization's login
}

func (s *hookScope) repoID() int64 {
	if s.Repo != nil {
		return s.Repo.ID
	}
	return 0
}

func (s *hookScope) orgID() int64 {
	if s.Org != nil {
		return s.Org.ID
	}
	return 0
}

// scope resolves the page's repository or organization. The same rule as
// the API applies: only the repository's admins (its owner, owners of its
// organization, admin collaborators) and the organization's owners; for
// anyone else the page does not exist (404).
func (h *Handler) scope(r *http.Request, v *visit) (*hookScope, error) {
	ctx, p := r.Context(), v.principal()
	if login := r.PathValue("org"); login != "" {
		org, err := accounts.OrgByLogin(ctx, h.DB, login)
		if err != nil {
			return nil, err
		}
		role, err := access.OrgRole(ctx, h.DB, p, org)
		if err != nil {
			return nil, err
		}
		if role < auth.RoleAdmin {
			return nil, notFound()
		}
		base := OrgPrefix + "/" + org.Login + "/settings/hooks"
		return &hookScope{Org: org, Base: base, Pages: base, Name: org.Login}, nil
	}
	repo, err := repos.ByOwnerAndName(ctx, h.DB, r.PathValue("owner"), r.PathValue("repo"))
	if err != nil {
		return nil, err
	}
	role, err := access.RepoRole(ctx, h.DB, p, repo)
	if err != nil {
		return nil, err
	}
	if role < auth.RoleAdmin {
		return nil, notFound()
	}
	pages := "/" + repo.FullName() + "/settings/hooks"
	return &hookScope{Repo: repo, Base: RepoPrefix + pages, Pages: pages, Name: repo.FullName()}, nil
}

// scopeAndHook resolves the page's scope and its {hook_id}.
func (h *Handler) scopeAndHook(r *http.Request, v *visit) (*hookScope, *webhooks.Hook, error) {
	s, err := h.scope(r, v)
	if err != nil {
		return nil, nil, err
	}
	id, err := strconv.ParseInt(r.PathValue("hook_id"), 10, 64)
	if err != nil {
		return nil, nil, notFound()
	}
	hook, err := h.Webhooks.ConsoleHook(r.Context(), id, s.repoID(), s.orgID())
	if err != nil {
		return nil, nil, err
	}
	return s, hook, nil
}

// hooksPage lists a scope's hooks.
type hooksPage struct {
	Scope *hookScope
	Hooks []*webhooks.Hook
}

// hooks serves GET .../settings/hooks.
func (h *Handler) hooks(w http.ResponseWriter, r *http.Request, v *visit) error {
	if requireUser(w, r, v) == nil {
		return nil
	}
	s, err := h.scope(r, v)
	if err != nil {
		return err
	}
	var list []*webhooks.Hook
	if s.Repo != nil {
		list, err = h.Webhooks.RepoHooks(r.Context(), s.Repo.ID)
	} else {
		list, err = h.Webhooks.OrgHooks(r.Context(), s.Org.ID)
	}
	if err != nil {
		return err
	}
	h.render(w, r, v, http.StatusOK, "hooks", hooksPage{Scope: s, Hooks: list})
	return nil
}

// hookPage is the form of a new or stored hook.
type hookPage struct {
	Scope  *hookScope
	Hook   *webhooks.Hook // nil for a new one
	Form   webhooks.HookForm
	Events string
	Errors []string
	Saved  bool
}

// PageTitle names the hook page.
func (p hookPage) PageTitle() string {
	if p.Hook == nil {
		return "Add webhook"
	}
	return "Manage webhook"
}

func newHookPage(s *hookScope, hook *webhooks.Hook, f webhooks.HookForm) hookPage {
	return hookPage{Scope: s, Hook: hook, Form: f, Events: strings.Join(f.Events, " ")}
}

// hookForm reads the hook form.
func hookForm(r *http.Request) webhooks.HookForm {
	f := r.PostForm
	events := strings.FieldsFunc(f.Get("events"), func(c rune) bool { return c == ',' || c == ' ' || c == '\n' || c == '\r' || c == '\t' })
	return webhooks.HookForm{URL: strings.TrimSpace(f.Get("url")), ContentType: f.Get("content_type"),
		Secret: f.Get("secret"), ClearSecret: f.Get("clear_secret") == "1", InsecureSSL: f.Get("insecure_ssl") == "1",
		Events: events, Active: f.Get("active") == "1"}
}

// formErrors turns a validation error into lines for the form; other
// errors are returned.
func formErrors(err error) ([]string, error) {
	var ae *apierr.Error
	if !errors.As(err, &ae) || ae.Status != http.StatusUnprocessableEntity {
		return nil, err
	}
	var lines []string
	for _, fe := range ae.Errors {
		msg := fe.Message
		if msg == "" {
			msg = fe.Field + " is " + strings.ReplaceAll(string(fe.Code), "_", " ")
		}
		lines = append(lines, msg)
	}
	if len(lines) == 0 {
		lines = append(lines, ae.Message)
	}
	return lines, nil
}

// newHookForm serves GET .../settings/hooks/new.
func (h *Handler) newHookForm(w http.ResponseWriter, r *http.Request, v *visit) error {
	if requireUser(w, r, v) == nil {
		return nil
	}
	s, err := h.scope(r, v)
	if err != nil {
		return err
	}
	h.render(w, r, v, http.StatusOK, "hook", newHookPage(s, nil,
		webhooks.HookForm{ContentType: "json", Events: []string{"push"}, Active: true}))
	return nil
}

func (h *Handler) sender(r *http.Request, u *session) (*accounts.Account, error) {
	return accounts.ByID(r.Context(), h.DB, u.userID)
}

// createHook serves POST .../settings/hooks: a new hook (and its ping),
// or the form again with the API's validation messages (422).
func (h *Handler) createHook(w http.ResponseWriter, r *http.Request, v *visit) error {
	u := requireUser(w, r, v)
	if u == nil {
		return nil
	}
	s, err := h.scope(r, v)
	if err != nil {
		return err
	}
	sender, err := h.sender(r, u)
	if err != nil {
		return err
	}
	f := hookForm(r)
	hook, err := h.Webhooks.CreateHookForm(r.Context(), s.Repo, s.Org, f, sender)
	if err != nil {
		lines, err := formErrors(err)
		if err != nil {
			return err
		}
		page := newHookPage(s, nil, f)
		page.Errors = lines
		h.render(w, r, v, http.StatusUnprocessableEntity, "hook", page)
		return nil
	}
	return seeOther(w, r, s.Pages+"/"+strconv.FormatInt(hook.ID, 10))
}

// hook serves GET .../settings/hooks/{hook_id}: the hook's form, with its
// Ping and Delete buttons and the way to its deliveries.
func (h *Handler) hook(w http.ResponseWriter, r *http.Request, v *visit) error {
	if requireUser(w, r, v) == nil {
		return nil
	}
	s, hook, err := h.scopeAndHook(r, v)
	if err != nil {
		return err
	}
	page := newHookPage(s, hook, webhooks.FormOf(hook))
	page.Saved = r.URL.Query().Get("saved") == "1"
	h.render(w, r, v, http.StatusOK, "hook", page)
	return nil
}

// updateHook serves POST .../settings/hooks/{hook_id}: the form replaces
// the hook's config, events and active flag (an empty secret keeps it).
func (h *Handler) updateHook(w http.ResponseWriter, r *http.Request, v *visit) error {
	if requireUser(w, r, v) == nil {
		return nil
	}
	s, hook, err := h.scopeAndHook(r, v)
	if err != nil {
		return err
	}
	f := hookForm(r)
	if _, err := h.Webhooks.UpdateHookForm(r.Context(), hook.ID, f); err != nil {
		lines, err := formErrors(err)
		if err != nil {
			return err
		}
		page := newHookPage(s, hook, f)
		page.Errors = lines
		h.render(w, r, v, http.StatusUnprocessableEntity, "hook", page)
		return nil
	}
	return seeOther(w, r, s.Pages+"/"+strconv.FormatInt(hook.ID, 10)+"?saved=1")
}

// pingHook serves POST .../{hook_id}/ping: a ping delivery, then its list.
func (h *Handler) pingHook(w http.ResponseWriter, r *http.Request, v *visit) error {
	u := requireUser(w, r, v)
	if u == nil {
		return nil
	}
	s, hook, err := h.scopeAndHook(r, v)
	if err != nil {
		return err
	}
	sender, err := h.sender(r, u)
	if err != nil {
		return err
	}
	if err := h.Webhooks.Ping(r.Context(), hook, sender); err != nil {
		return err
	}
	h.Webhooks.Wake()
	return seeOther(w, r, s.Pages+"/"+strconv.FormatInt(hook.ID, 10)+"/deliveries")
}

// deleteHook serves POST .../{hook_id}/delete.
func (h *Handler) deleteHook(w http.ResponseWriter, r *http.Request, v *visit) error {
	u := requireUser(w, r, v)
	if u == nil {
		return nil
	}
	s, hook, err := h.scopeAndHook(r, v)
	if err != nil {
		return err
	}
	sender, err := h.sender(r, u)
	if err != nil {
		return err
	}
	if err := h.Webhooks.DeleteHook(r.Context(), hook, sender); err != nil {
		return err
	}
	return seeOther(w, r, s.Pages)
}

// deliveriesPage is a hook's Recent Deliveries: one page, newest first.
type deliveriesPage struct {
	Scope      *hookScope
	Hook       *webhooks.Hook
	Deliveries []*webhooks.Delivery
	FailedOnly bool
	// Older is the link (a query) to the next page of older deliveries
	// ("" on the last page); Paged says this is not the newest page.
	Older string
	Paged bool
}

// recentDeliveries is how many deliveries a page shows.
const recentDeliveries = 100

// deliveries serves GET .../{hook_id}/deliveries (?status=failure: the
// failed ones only; ?before=ID: the page that starts at delivery ID),
// newest first.
func (h *Handler) deliveries(w http.ResponseWriter, r *http.Request, v *visit) error {
	if requireUser(w, r, v) == nil {
		return nil
	}
	s, hook, err := h.scopeAndHook(r, v)
	if err != nil {
		return err
	}
	f := webhooks.DeliveryFilter{Limit: recentDeliveries + 1}
	query := url.Values{}
	switch st := r.URL.Query().Get("status"); st {
	case "":
	case "failure":
		f.Status = st
		query.Set("status", st)
	default:
		return badRequest("status is failure or nothing.")
	}
	if before := r.URL.Query().Get("before"); before != "" {
		id, err := strconv.ParseInt(before, 10, 64)
		if err != nil || id <= 0 {
			return badRequest("before is a delivery id.")
		}
		f.Before = id
	}
	list, err := h.Webhooks.Deliveries(r.Context(), hook.ID, f)
	if err != nil {
		return err
	}
	page := deliveriesPage{Scope: s, Hook: hook, Deliveries: list, FailedOnly: f.Status != "", Paged: f.Before != 0}
	if len(list) > recentDeliveries {
		page.Deliveries = list[:recentDeliveries]
		query.Set("before", strconv.FormatInt(list[recentDeliveries].ID, 10))
		page.Older = "?" + query.Encode()
	}
	h.render(w, r, v, http.StatusOK, "deliveries", page)
	return nil
}

// header is one header line of a delivery's request or response.
type header struct{ Name, Value string }

// deliveryPage is one delivery: its request and response.
type deliveryPage struct {
	Scope           *hookScope
	Hook            *webhooks.Hook
	Delivery        *webhooks.Delivery
	RequestHeaders  []header
	Payload         string
	ResponseHeaders []header
	ResponseBody    string
	Pending         bool
}

// delivery serves GET .../{hook_id}/deliveries/{delivery_id}.
func (h *Handler) delivery(w http.ResponseWriter, r *http.Request, v *visit) error {
	if requireUser(w, r, v) == nil {
		return nil
	}
	s, hook, d, err := h.pathDelivery(r, v)
	if err != nil {
		return err
	}
	payload, err := h.Webhooks.DeliveryPayload(r.Context(), d)
	if err != nil {
		return err
	}
	sent, err := d.SentHeaders(hook)
	if err != nil {
		return err
	}
	page := deliveryPage{Scope: s, Hook: hook, Delivery: d, Payload: pretty([]byte(payload)),
		RequestHeaders: headerLines(sent), ResponseHeaders: headers(d.ResponseHeaders),
		ResponseBody: pretty([]byte(d.ResponseBody)), Pending: webhooks.DeliveryPending(d)}
	h.render(w, r, v, http.StatusOK, "delivery", page)
	return nil
}

func (h *Handler) pathDelivery(r *http.Request, v *visit) (*hookScope, *webhooks.Hook, *webhooks.Delivery, error) {
	s, hook, err := h.scopeAndHook(r, v)
	if err != nil {
		return nil, nil, nil, err
	}
	id, err := strconv.ParseInt(r.PathValue("delivery_id"), 10, 64)
	if err != nil {
		return nil, nil, nil, notFound()
	}
	d, err := h.Webhooks.DeliveryOf(r.Context(), hook.ID, id)
	if err != nil {
		return nil, nil, nil, err
	}
	return s, hook, d, nil
}

// redeliver serves POST .../deliveries/{delivery_id}/redeliver: a new
// delivery of the same payload with redelivery true (the API's
// redelivery, with its window), then the list.
func (h *Handler) redeliver(w http.ResponseWriter, r *http.Request, v *visit) error {
	if requireUser(w, r, v) == nil {
		return nil
	}
	s, hook, d, err := h.pathDelivery(r, v)
	if err != nil {
		return err
	}
	if err := h.Webhooks.Redeliver(r.Context(), hook, d); err != nil {
		return err
	}
	return seeOther(w, r, s.Pages+"/"+strconv.FormatInt(hook.ID, 10)+"/deliveries")
}

// headers returns a stored JSON object of headers as sorted lines.
func headers(raw string) []header {
	var m map[string]string
	if json.Unmarshal([]byte(raw), &m) != nil {
		return nil
	}
	return headerLines(m)
}

// headerLines are the lines of the headers m, by name.
func headerLines(m map[string]string) []header {
	out := make([]header, 0, len(m))
	for k, v := range m {
		out = append(out, header{k, v})
	}
	slices.SortFunc(out, func(a, b header) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// pretty indents JSON; other text is returned as is.
func pretty(b []byte) string {
	var buf bytes.Buffer
	if json.Indent(&buf, b, "", "  ") == nil {
		return buf.String()
	}
	return string(b)
}
