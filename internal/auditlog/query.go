package auditlog

import (
	"context"
	"database/sql"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"time"

	"forgeapi/internal/apierr"
	"forgeapi/internal/store"
)

// Filter is a search of an organization's audit log.
type Filter struct {
	Action string // an action, or a category ("repo": every repo.* action)
	Actor  string
	Repo   string // owner/name
	User   string
	// From and Until bound the entries' times in Unix milliseconds
	// (From included, Until excluded).
	From, Until int64
	Web, Git    bool // which kinds of entries
}

// ParsePhrase reads the platform's search phrase: space-separated
// qualifiers action:, actor:, repo:, user: and created: (a date or time,
// with >, >=, <, <= or a range a..b). Anything else is a 422.
func ParsePhrase(phrase string) (Filter, error) {
	f := Filter{Until: math.MaxInt64}
	for _, term := range strings.Fields(phrase) {
		key, value, ok := strings.Cut(term, ":")
		if !ok || value == "" {
			return f, apierr.Unprocessable("Invalid search phrase term %q: use action:, actor:, repo:, user: or created:", term)
		}
		var err error
		switch key {
		case "action":
			f.Action = value
		case "actor":
			f.Actor = value
		case "repo":
			f.Repo = value
		case "user":
			f.User = value
		case "created":
			f.From, f.Until, err = parseCreated(value)
		default:
			err = apierr.Unprocessable("Unknown search qualifier %q: use action:, actor:, repo:, user: or created:", key)
		}
		if err != nil {
			return f, err
		}
	}
	return f, nil
}

// parseCreated reads a created: qualifier's value as a range of Unix
// milliseconds [from, until).
func parseCreated(v string) (int64, int64, error) {
	if a, b, ok := strings.Cut(v, ".."); ok {
		from, _, err := parseTime(a)
		if err != nil {
			return 0, 0, err
		}
		_, until, err := parseTime(b)
		return from, until, err
	}
	for _, op := range []string{">=", "<=", ">", "<"} {
		if rest, ok := strings.CutPrefix(v, op); ok {
			start, end, err := parseTime(rest)
			switch op {
			case ">=":
				return start, math.MaxInt64, err
			case ">":
				return end, math.MaxInt64, err
			case "<=":
				return 0, end, err
			default:
				return 0, start, err
			}
		}
	}
	return parseTime(v)
}

// parseTime reads a date (the whole day, UTC) or an RFC 3339 time (that
// millisecond) as [start, end) in Unix milliseconds.
func parseTime(v string) (int64, int64, error) {
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		return t.UnixMilli(), t.AddDate(0, 0, 1).UnixMilli(), nil
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t.UnixMilli(), t.UnixMilli() + 1, nil
	}
	return 0, 0, apierr.Unprocessable("Invalid created: date %q: use YYYY-MM-DD or an RFC 3339 time", v)
}

// Search returns up to limit entries of the organization that match the
// filter, in id order (ascending or not) from the entry after the id
// bound (0 for none).
func Search(ctx context.Context, q store.Q, orgID int64, f Filter, ascending bool, bound int64, limit int) ([]*Entry, error) {
	lower, upper := int64(0), int64(math.MaxInt64)
	order := "DESC"
	if ascending {
		order = "ASC"
	}
	if bound != 0 && ascending {
		lower = bound
	} else if bound != 0 {
		upper = bound
	}
	rows, err := q.QueryContext(ctx, `SELECT id, org_id, document_id, action, actor_id, actor_login, repo, user_login,
		git, data, created_ms FROM audit_log
		WHERE org_id = $1 AND ($2 = '' OR action = $2 OR action LIKE $3) AND ($4 = '' OR lower(actor_login) = lower($4))
			AND ($5 = '' OR lower(repo) = lower($5)) AND ($6 = '' OR lower(user_login) = lower($6))
			AND created_ms >= $7 AND created_ms < $8 AND (git AND $9 OR NOT git AND $10) AND id > $11 AND id < $12
		ORDER BY id `+order+` LIMIT $13`,
		orgID, f.Action, f.Action+".%", f.Actor, f.Repo, f.User, f.From, f.Until, f.Git, f.Web, lower, upper, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*Entry
	for rows.Next() {
		e, err := scanEntry(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

func scanEntry(rows *sql.Rows) (*Entry, error) {
	var e Entry
	var actorID sql.NullInt64
	var data string
	var ms int64
	if err := rows.Scan(&e.ID, &e.OrgID, &e.DocumentID, &e.Action, &actorID, &e.ActorLogin, &e.Repo, &e.User,
		&e.Git, &data, &ms); err != nil {
		return nil, err
	}
	if actorID.Valid {
		e.Data = map[string]any{"actor_id": actorID.Int64}
	}
	if err := json.Unmarshal([]byte(data), &e.Data); err != nil {
		return nil, err
	}
	e.At = time.UnixMilli(ms).UTC()
	return &e, nil
}

// reversed returns the entries in the other order.
func reversed(list []*Entry) []*Entry {
	slices.Reverse(list)
	return list
}
