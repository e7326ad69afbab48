package protection

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"forgeapi/internal/apierr"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/store"
)

// maxReviewCount is the most approvals a protection may require.
const maxReviewCount = 6

// putRequest is the body of PUT .../protection: the four sections are
// required (null turns one off).
type putRequest struct {
	StatusChecks           json.RawMessage `json:"required_status_checks"`
	EnforceAdmins          json.RawMessage `json:"enforce_admins"`
	Reviews                json.RawMessage `json:"required_pull_request_reviews"`
	Restrictions           json.RawMessage `json:"restrictions"`
	LinearHistory          *bool           `json:"required_linear_history"`
	ForcePushes            *bool           `json:"allow_force_pushes"`
	Deletions              *bool           `json:"allow_deletions"`
	BlockCreations         *bool           `json:"block_creations"`
	ConversationResolution *bool           `json:"required_conversation_resolution"`
	LockBranch             *bool           `json:"lock_branch"`
	ForkSyncing            *bool           `json:"allow_fork_syncing"`
}

// checksRequest is required_status_checks (PUT, PATCH).
type checksRequest struct {
	Strict   *bool     `json:"strict"`
	Contexts *[]string `json:"contexts"`
	Checks   *[]struct {
		Context *string `json:"context"`
		AppID   *int64  `json:"app_id"`
	} `json:"checks"`
}

// reviewsRequest is required_pull_request_reviews (PUT, PATCH).
type reviewsRequest struct {
	Dismissal    *actorsRequest `json:"dismissal_restrictions"`
	DismissStale *bool          `json:"dismiss_stale_reviews"`
	CodeOwners   *bool          `json:"require_code_owner_reviews"`
	Count        *int           `json:"required_approving_review_count"`
	LastPush     *bool          `json:"require_last_push_approval"`
	Bypass       *actorsRequest `json:"bypass_pull_request_allowances"`
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

// decodePut reads PUT .../protection into a Change that replaces the
// whole protection.
func (h *Handler) decodePut(r *http.Request) (Change, error) {
	var body putRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return nil, err
	}
	var missing []string
	for _, section := range []struct {
		key string
		raw json.RawMessage
	}{{"required_status_checks", body.StatusChecks}, {"enforce_admins", body.EnforceAdmins},
		{"required_pull_request_reviews", body.Reviews}, {"restrictions", body.Restrictions}} {
		if section.raw == nil {
			missing = append(missing, fmt.Sprintf("%q wasn't supplied.", section.key))
		}
	}
	if len(missing) > 0 {
		return nil, invalidRequest(strings.Join(missing, "\n"))
	}
	var st Settings
	var err error
	if !isNull(body.StatusChecks) {
		var c checksRequest
		if err := strictUnmarshal(body.StatusChecks, &c, "required_status_checks"); err != nil {
			return nil, err
		}
		if st.StatusChecks, err = c.apply(&StatusChecks{Checks: []Check{}}); err != nil {
			return nil, err
		}
	}
	if !isNull(body.EnforceAdmins) {
		if err := strictUnmarshal(body.EnforceAdmins, &st.EnforceAdmins, "enforce_admins"); err != nil {
			return nil, err
		}
	}
	rs := h.resolver(r, h.Service.DB)
	if !isNull(body.Reviews) {
		var rv reviewsRequest
		if err := strictUnmarshal(body.Reviews, &rv, "required_pull_request_reviews"); err != nil {
			return nil, err
		}
		if st.Reviews, err = rv.apply(rs, &Reviews{Count: 1}); err != nil {
			return nil, err
		}
	}
	if !isNull(body.Restrictions) {
		var a actorsRequest
		if err := strictUnmarshal(body.Restrictions, &a, "restrictions"); err != nil {
			return nil, err
		}
		if !rs.repo.Owner.IsOrg() {
			return nil, errOrgRestrictions
		}
		if st.Restrictions, err = rs.actors(&a); err != nil {
			return nil, err
		}
	}
	for _, b := range []struct {
		to   *bool
		from *bool
	}{{&st.LinearHistory, body.LinearHistory}, {&st.ForcePushes, body.ForcePushes}, {&st.Deletions, body.Deletions},
		{&st.BlockCreations, body.BlockCreations}, {&st.ConversationResolution, body.ConversationResolution},
		{&st.LockBranch, body.LockBranch}, {&st.ForkSyncing, body.ForkSyncing}} {
		if b.from != nil {
			*b.to = *b.from
		}
	}
	return func(_ store.Q, s *Settings) error { *s = st; return nil }, nil
}

// strictUnmarshal reads a section of a body: a 422 naming the field when
// it has the wrong form.
func strictUnmarshal(raw json.RawMessage, v any, field string) error {
	if err := json.Unmarshal(raw, v); err != nil {
		return invalidRequest(fmt.Sprintf("For 'properties/%s', %s is not of the expected form.", field, raw))
	}
	return nil
}

// invalidRequest is the platform's 422 of a body its schema refuses:
// "Invalid request." and the reason.
func invalidRequest(reason string) error {
	return apierr.Unprocessable("Invalid request.\n\n%s", reason)
}

// apply sets the request's fields on c (a copy is returned): checks win
// over contexts; an app_id of -1 (any app) or none is stored as none.
func (c checksRequest) apply(cur *StatusChecks) (*StatusChecks, error) {
	out := &StatusChecks{Strict: cur.Strict, Checks: slices.Clone(cur.Checks)}
	if c.Strict != nil {
		out.Strict = *c.Strict
	}
	switch {
	case c.Checks != nil:
		out.Checks = []Check{}
		for _, ch := range *c.Checks {
			if ch.Context == nil || *ch.Context == "" {
				return nil, invalidRequest(`"context" wasn't supplied.`)
			}
			id := ch.AppID
			if id != nil && *id <= 0 {
				id = nil
			}
			out.Checks = appendCheck(out.Checks, Check{Context: *ch.Context, AppID: id})
		}
	case c.Contexts != nil:
		out.Checks = []Check{}
		for _, name := range *c.Contexts {
			out.Checks = appendCheck(out.Checks, Check{Context: name})
		}
	}
	return out, nil
}

func appendCheck(list []Check, c Check) []Check {
	for _, x := range list {
		if x.Context == c.Context {
			return list
		}
	}
	return append(list, c)
}

// apply sets the request's fields on a copy of cur.
func (rv reviewsRequest) apply(rs resolver, cur *Reviews) (*Reviews, error) {
	out := *cur
	if rv.DismissStale != nil {
		out.DismissStale = *rv.DismissStale
	}
	if rv.CodeOwners != nil {
		out.CodeOwners = *rv.CodeOwners
	}
	if rv.LastPush != nil {
		out.LastPush = *rv.LastPush
	}
	if rv.Count != nil {
		if *rv.Count < 0 || *rv.Count > maxReviewCount {
			return nil, invalidRequest(fmt.Sprintf("required_approving_review_count must be between 0 and %d.", maxReviewCount))
		}
		out.Count = *rv.Count
	}
	var err error
	if rv.Dismissal != nil {
		if len(rv.Dismissal.Users)+len(rv.Dismissal.Teams)+len(rv.Dismissal.Apps) == 0 {
			out.Dismissal = nil // an empty object turns them off
		} else if out.Dismissal, err = rs.actors(rv.Dismissal); err != nil {
			return nil, err
		}
	}
	if rv.Bypass != nil {
		if out.Bypass, err = rs.actors(rv.Bypass); err != nil {
			return nil, err
		}
	}
	return &out, nil
}

// decodeReviews reads PATCH .../required_pull_request_reviews: the
// fields given change, the others stay (turning reviews on when off).
// The change resolves the request's names in Update's transaction.
func (h *Handler) decodeReviews(r *http.Request) (Change, error) {
	var rv reviewsRequest
	if err := httpapi.DecodeJSON(r, &rv); err != nil {
		return nil, err
	}
	return func(q store.Q, s *Settings) error {
		cur := s.Reviews
		if cur == nil {
			cur = &Reviews{Count: 1}
		}
		next, err := rv.apply(h.resolver(r, q), cur)
		if err != nil {
			return err
		}
		s.Reviews = next
		return nil
	}, nil
}

// decodeChecks reads PATCH .../required_status_checks (404 when off).
func decodeChecks(r *http.Request) (Change, error) {
	var c checksRequest
	if err := httpapi.DecodeJSON(r, &c); err != nil {
		return nil, err
	}
	return func(_ store.Q, s *Settings) error {
		if s.StatusChecks == nil {
			return errChecksOff
		}
		next, err := c.apply(s.StatusChecks)
		if err != nil {
			return err
		}
		s.StatusChecks = next
		return nil
	}, nil
}

// The ways a list of names changes: add, set, remove.
const (
	opAdd = iota
	opSet
	opRemove
)

// merge applies op with the given ids to list.
func merge(list, ids []int64, op int) []int64 {
	switch op {
	case opSet:
		return ids
	case opRemove:
		return slices.DeleteFunc(slices.Clone(list), func(id int64) bool { return slices.Contains(ids, id) })
	}
	out := slices.Clone(list)
	for _, id := range ids {
		out = appendNew(out, id)
	}
	return out
}

// decodeContexts reads a change of the required contexts (404 when
// status checks are off).
func decodeContexts(op int) func(r *http.Request) (Change, error) {
	return func(r *http.Request) (Change, error) {
		names, err := listBody(r, "contexts")
		if err != nil {
			return nil, err
		}
		return func(_ store.Q, s *Settings) error {
			if s.StatusChecks == nil {
				return errChecksOff
			}
			c := &StatusChecks{Strict: s.StatusChecks.Strict}
			switch op {
			case opSet:
				for _, n := range names {
					c.Checks = appendCheck(c.Checks, Check{Context: n})
				}
			case opRemove:
				c.Checks = slices.DeleteFunc(slices.Clone(s.StatusChecks.Checks), func(ch Check) bool { return slices.Contains(names, ch.Context) })
			default:
				c.Checks = slices.Clone(s.StatusChecks.Checks)
				for _, n := range names {
					c.Checks = appendCheck(c.Checks, Check{Context: n})
				}
			}
			if c.Checks == nil {
				c.Checks = []Check{}
			}
			s.StatusChecks = c
			return nil
		}, nil
	}
}

// decodeActors reads a change of the restrictions' users, teams or apps
// (422 when restrictions are off).
func (h *Handler) decodeActors(kind string, op int) func(r *http.Request) (Change, error) {
	return func(r *http.Request) (Change, error) {
		names, err := listBody(r, kind)
		if err != nil {
			return nil, err
		}
		rs := h.resolver(r, h.Service.DB)
		var ids []int64
		switch kind {
		case "users":
			ids, err = rs.users(names)
		case "teams":
			ids, err = rs.teams(names)
		default:
			ids, err = rs.apps(names)
		}
		if err != nil {
			return nil, err
		}
		return func(_ store.Q, s *Settings) error {
			if s.Restrictions == nil {
				return errRestrictionsOffForChange
			}
			a := *s.Restrictions
			switch kind {
			case "users":
				a.Users = merge(a.Users, ids, op)
			case "teams":
				a.Teams = merge(a.Teams, ids, op)
			default:
				a.Apps = merge(a.Apps, ids, op)
			}
			s.Restrictions = &a
			return nil
		}, nil
	}
}
