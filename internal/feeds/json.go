package feeds

import (
	"bytes"
	"encoding/json"
	"strings"

	"forgeapi/internal/accounts"
	"forgeapi/internal/wire"
)

// eventJSON is the spec's "Feed event".
type eventJSON struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	Actor     actorJSON       `json:"actor"`
	Repo      repoJSON        `json:"repo"`
	Payload   json.RawMessage `json:"payload"`
	Public    bool            `json:"public"`
	CreatedAt wire.Time       `json:"created_at"`
	Org       *orgJSON        `json:"org,omitempty"`
}

type actorJSON struct {
	ID           int64  `json:"id"`
	Login        string `json:"login"`
	DisplayLogin string `json:"display_login"`
	GravatarID   string `json:"gravatar_id"`
	URL          string `json:"url"`
	AvatarURL    string `json:"avatar_url"`
}

type repoJSON struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
	URL  string `json:"url"`
}

type orgJSON struct {
	ID         int64  `json:"id"`
	Login      string `json:"login"`
	GravatarID string `json:"gravatar_id"`
	URL        string `json:"url"`
	AvatarURL  string `json:"avatar_url"`
}

// eventsJSON is a page of feed events. It renders itself (AppendJSON)
// byte for byte as encoding/json renders the slice, without reflection.
type eventsJSON []eventJSON

// AppendJSON appends the events as encoding/json (without HTML
// escaping, as httpapi.WriteJSON encodes) renders them.
func (es eventsJSON) AppendJSON(b []byte) []byte {
	if es == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i := range es {
		if i > 0 {
			b = append(b, ',')
		}
		b = es[i].appendJSON(b)
	}
	return append(b, ']')
}

func (e *eventJSON) appendJSON(b []byte) []byte {
	o := wire.Begin(b)
	o.String("id", e.ID)
	o.String("type", e.Type)
	o.Key("actor")
	a := wire.Begin(o.B)
	a.Int("id", e.Actor.ID)
	a.String("login", e.Actor.Login)
	a.String("display_login", e.Actor.DisplayLogin)
	a.String("gravatar_id", e.Actor.GravatarID)
	a.String("url", e.Actor.URL)
	a.String("avatar_url", e.Actor.AvatarURL)
	o.B = a.End()
	o.Key("repo")
	r := wire.Begin(o.B)
	r.Int("id", e.Repo.ID)
	r.String("name", e.Repo.Name)
	r.String("url", e.Repo.URL)
	o.B = r.End()
	o.Key("payload")
	o.B = appendRaw(o.B, e.Payload)
	o.Bool("public", e.Public)
	o.Time("created_at", e.CreatedAt)
	if e.Org != nil {
		o.Key("org")
		g := wire.Begin(o.B)
		g.Int("id", e.Org.ID)
		g.String("login", e.Org.Login)
		g.String("gravatar_id", e.Org.GravatarID)
		g.String("url", e.Org.URL)
		g.String("avatar_url", e.Org.AvatarURL)
		o.B = g.End()
	}
	return o.End()
}

// appendRaw appends a raw JSON value compacted, as encoding/json writes
// a json.RawMessage; null when it is not valid JSON (encoding/json
// would fail the whole response).
func appendRaw(b []byte, raw json.RawMessage) []byte {
	if len(raw) == 0 {
		return append(b, "null"...)
	}
	buf := bytes.NewBuffer(b)
	if err := json.Compact(buf, raw); err != nil {
		return append(b, "null"...)
	}
	return buf.Bytes()
}

// toJSON renders stored events under the API base URL. Logins and the
// repository name are as they were when the event happened.
func toJSON(base string, rows []row) eventsJSON {
	out := make(eventsJSON, len(rows))
	for i, r := range rows {
		e := eventJSON{
			ID: wire.Itoa(r.ID), Type: r.Type, Payload: json.RawMessage(r.Payload), Public: r.Public,
			CreatedAt: wire.T(r.CreatedAt),
			Actor: actorJSON{ID: r.ActorID, Login: r.ActorLogin, DisplayLogin: strings.TrimSuffix(r.ActorLogin, "[bot]"),
				URL: base + "/users/" + r.ActorLogin, AvatarURL: accounts.AvatarURL(base, &accounts.Account{ID: r.ActorID})},
		}
		if r.RepoID != nil {
			e.Repo = repoJSON{ID: *r.RepoID, Name: r.RepoName, URL: base + "/repos/" + r.RepoName}
		} else { // an event of no repository (GistEvent): the platform's empty one
			e.Repo = repoJSON{Name: "/", URL: base + "/repos//"}
		}
		if r.OrgID != nil {
			e.Org = &orgJSON{ID: *r.OrgID, Login: r.OrgLogin, URL: base + "/orgs/" + r.OrgLogin,
				AvatarURL: accounts.AvatarURL(base, &accounts.Account{ID: *r.OrgID})}
		}
		if len(e.Payload) == 0 {
			e.Payload = json.RawMessage("{}")
		}
		out[i] = e
	}
	return out
}
