package feeds

import (
	"encoding/json"
	"strings"

	"forgeapi/internal/accounts"
	"forgeapi/internal/wire"
)

// eventJSON is Part B's "Feed event".
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

// toJSON renders stored events under the API base URL. Logins and the
// repository name are as they were when the event happened.
func toJSON(base string, rows []row) []eventJSON {
	out := make([]eventJSON, len(rows))
	for i, r := range rows {
		e := eventJSON{
			ID: wire.Itoa(r.ID), Type: r.Type, Payload: json.RawMessage(r.Payload), Public: r.Public,
			CreatedAt: wire.T(r.CreatedAt),
			Actor: actorJSON{ID: r.ActorID, Login: r.ActorLogin, DisplayLogin: strings.TrimSuffix(r.ActorLogin, "[bot]"),
				URL: base + "/users/" + r.ActorLogin, AvatarURL: accounts.AvatarURL(base, &accounts.Account{ID: r.ActorID})},
		}
		if r.RepoID != nil {
			e.Repo = repoJSON{ID: *r.RepoID, Name: r.RepoName, URL: base + "/repos/" + r.RepoName}
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
