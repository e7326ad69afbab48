package auditlog

import (
	"encoding/base64"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/store"
)

// Handler serves GET /orgs/{org}/audit-log.
type Handler struct {
	DB *store.DB
}

// Routes is the audit log's route table: organization owners only;
// classic and OAuth tokens need read:audit_log, fine-grained tokens the
// organization permission Administration read.
func (h *Handler) Routes() []httpapi.Route {
	return []httpapi.Route{
		{Method: "GET", Pattern: "/orgs/{org}/audit-log", Handle: h.list,
			Auth: auth.Rule{Target: auth.TargetOrg, Role: auth.RoleAdmin, Scopes: []string{"read:audit_log"},
				Permissions: auth.Perm("organization_administration:read"), TokenTypes: auth.AllTokenTypes}},
	}
}

// request is a parsed audit log query.
type request struct {
	filter    Filter
	ascending bool  // the listing's order
	after     int64 // cursor: entries after it in the listing's order
	before    int64 // cursor: entries before it in the listing's order
	perPage   int
}

func parseRequest(r *http.Request) (*request, error) {
	q := r.URL.Query()
	f, err := ParsePhrase(q.Get("phrase"))
	if err != nil {
		return nil, err
	}
	req := &request{filter: f}
	switch q.Get("include") {
	case "", "web":
		req.filter.Web = true
	case "git":
		req.filter.Git = true
	case "all":
		req.filter.Web, req.filter.Git = true, true
	default:
		return nil, apierr.Invalid("AuditLog", "include", apierr.CodeInvalid)
	}
	switch q.Get("order") {
	case "", "desc":
	case "asc":
		req.ascending = true
	default:
		return nil, apierr.Invalid("AuditLog", "order", apierr.CodeInvalid)
	}
	if req.after, err = parseCursor(q.Get("after")); err != nil {
		return nil, err
	}
	if req.before, err = parseCursor(q.Get("before")); err != nil {
		return nil, err
	}
	page, err := httpapi.ParsePage(r)
	req.perPage = page.PerPage
	return req, err
}

// cursor is an entry's position: its id, encoded.
func cursor(e *Entry) string {
	return base64.RawURLEncoding.EncodeToString([]byte("audit:" + strconv.FormatInt(e.ID, 10)))
}

func parseCursor(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	rest, ok := strings.CutPrefix(string(b), "audit:")
	id, perr := strconv.ParseInt(rest, 10, 64)
	if err != nil || !ok || perr != nil || id <= 0 {
		return 0, apierr.Unprocessable("Invalid cursor %q", s)
	}
	return id, nil
}

// list answers the entries, newest first unless order=asc, per_page at a
// time; Link names the next page (after the last entry) and the previous
// one (before the first).
func (h *Handler) list(w http.ResponseWriter, r *http.Request) error {
	req, err := parseRequest(r)
	if err != nil {
		return err
	}
	org := accounts.OrgFrom(r.Context())
	list, next, prev, err := h.page(r, org.ID, req)
	if err != nil {
		return err
	}
	setLinks(w, r, list, next, prev)
	out := make([]map[string]any, 0, len(list))
	for _, e := range list {
		out = append(out, toJSON(org, e))
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// page reads the page the request asks for, and whether entries follow
// it (next) and precede it (prev) in the listing's order.
func (h *Handler) page(r *http.Request, orgID int64, req *request) (list []*Entry, next, prev bool, err error) {
	if req.before != 0 {
		// Walk back from the cursor, then show the page in order.
		list, err = Search(r.Context(), h.DB, orgID, req.filter, !req.ascending, req.before, req.perPage+1)
		prev = len(list) > req.perPage
		return reversed(list[:min(len(list), req.perPage)]), true, prev, err
	}
	list, err = Search(r.Context(), h.DB, orgID, req.filter, req.ascending, req.after, req.perPage+1)
	next = len(list) > req.perPage
	return list[:min(len(list), req.perPage)], next, req.after != 0, err
}

// setLinks writes the Link header: next after the page's last entry,
// prev before its first, first without a cursor.
func setLinks(w http.ResponseWriter, r *http.Request, list []*Entry, next, prev bool) {
	var links []string
	add := func(rel, key, value string) {
		q := r.URL.Query()
		q.Del("after")
		q.Del("before")
		if key != "" {
			q.Set(key, value)
		}
		links = append(links, fmt.Sprintf(`<%s>; rel="%s"`, httpapi.LinkURL(r, r.URL.Path, url.Values(q)), rel))
	}
	if next && len(list) > 0 {
		add("next", "after", cursor(list[len(list)-1]))
	}
	if prev && len(list) > 0 {
		add("prev", "before", cursor(list[0]))
	}
	if r.URL.Query().Has("after") || r.URL.Query().Has("before") {
		add("first", "", "")
	}
	if len(links) > 0 {
		w.Header().Set("Link", strings.Join(links, ", "))
	}
}

// toJSON is the platform's audit-log-event: the entry's own fields over
// its recorded data.
func toJSON(org *accounts.Account, e *Entry) map[string]any {
	out := maps.Clone(e.Data)
	ms := e.At.UnixMilli()
	out["@timestamp"], out["created_at"], out["_document_id"] = ms, ms, e.DocumentID
	out["action"], out["actor"], out["org"], out["org_id"] = e.Action, e.ActorLogin, org.Login, org.ID
	if e.Repo != "" {
		out["repo"] = e.Repo
	}
	if e.User != "" {
		out["user"] = e.User
	}
	return out
}
