package gists

import (
	"net/url"
	"path"
	"strconv"
	"strings"
	"unicode/utf8"

	"forgeapi/internal/accounts"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/wire"
)

// fileJSON is one entry of a gist's files map.
type fileJSON struct {
	Filename  string  `json:"filename"`
	Type      string  `json:"type"`
	Language  string  `json:"language,omitempty"`
	RawURL    string  `json:"raw_url"`
	Size      int64   `json:"size"`
	Truncated *bool   `json:"truncated,omitempty"`
	Content   *string `json:"content,omitempty"`
	Encoding  string  `json:"encoding,omitempty"`
}

// gistJSON is the platform's gist: base-gist in lists (no content, no
// history or forks), gist-simple for one gist.
type gistJSON struct {
	URL         string               `json:"url"`
	ForksURL    string               `json:"forks_url"`
	CommitsURL  string               `json:"commits_url"`
	ID          string               `json:"id"`
	NodeID      string               `json:"node_id"`
	GitPullURL  string               `json:"git_pull_url"`
	GitPushURL  string               `json:"git_push_url"`
	HTMLURL     string               `json:"html_url"`
	Files       map[string]fileJSON  `json:"files"`
	Public      bool                 `json:"public"`
	CreatedAt   wire.Time            `json:"created_at"`
	UpdatedAt   wire.Time            `json:"updated_at"`
	Description *string              `json:"description"`
	Comments    int                  `json:"comments"`
	User        *accounts.SimpleUser `json:"user"`
	CommentsURL string               `json:"comments_url"`
	Owner       accounts.SimpleUser  `json:"owner"`
	Truncated   bool                 `json:"truncated"`
	// One gist only.
	ForkOf  *gistJSON      `json:"fork_of,omitempty"`
	Forks   *[]forkJSON    `json:"forks,omitempty"`
	History *[]historyJSON `json:"history,omitempty"`
}

// forkJSON is an entry of a gist's forks.
type forkJSON struct {
	ID        string         `json:"id"`
	URL       string         `json:"url"`
	User      *accounts.User `json:"user,omitempty"`
	CreatedAt wire.Time      `json:"created_at"`
	UpdatedAt wire.Time      `json:"updated_at"`
}

// historyJSON is a gist-history entry, and (with User required) a
// gist-commit.
type historyJSON struct {
	User         *accounts.SimpleUser `json:"user"`
	Version      string               `json:"version"`
	CommittedAt  wire.Time            `json:"committed_at"`
	ChangeStatus changeStatus         `json:"change_status"`
	URL          string               `json:"url"`
}

type changeStatus struct {
	Total     int `json:"total"`
	Additions int `json:"additions"`
	Deletions int `json:"deletions"`
}

// commentJSON is the platform's gist-comment.
type commentJSON struct {
	ID                int64                `json:"id"`
	NodeID            string               `json:"node_id"`
	URL               string               `json:"url"`
	Body              string               `json:"body"`
	User              *accounts.SimpleUser `json:"user"`
	CreatedAt         wire.Time            `json:"created_at"`
	UpdatedAt         wire.Time            `json:"updated_at"`
	AuthorAssociation string               `json:"author_association"`
}

// NodeType is the type part of a gist's node id.
const NodeType = "G"

// NodeID is the gist's node id, in REST and GraphQL.
func NodeID(g *Gist) string { return wire.NodeID(NodeType, g.ID) }

// gistURLs are the addresses of a gist: base is the API's base URL.
type gistURLs struct{ api, web string }

func urlsOf(base string, g *Gist) gistURLs {
	return gistURLs{api: base + "/gists/" + g.Name, web: httpapi.WebBase(base) + "/gist/" + g.Name}
}

// GitURL is the address git clones and pushes the gist at.
func GitURL(base, name string) string { return httpapi.WebBase(base) + "/gist/" + name + ".git" }

// rawURL is the address of a file's bytes: by blob, so that it names that
// content for good, as the platform's.
func rawURL(base string, g *Gist, f File) string {
	return httpapi.WebBase(base) + "/gist/" + url.PathEscape(g.Owner.Login) + "/" + g.Name + "/raw/" + f.BlobSHA + "/" + url.PathEscape(f.Name)
}

// toJSON renders a gist with its files; a file's content is shown when
// read (cut at MaxContent).
func toJSON(base string, g *Gist, files []File, comments int) gistJSON {
	u := urlsOf(base, g)
	j := gistJSON{
		URL: u.api, ForksURL: u.api + "/forks", CommitsURL: u.api + "/commits", CommentsURL: u.api + "/comments",
		ID: g.Name, NodeID: NodeID(g), GitPullURL: GitURL(base, g.Name), GitPushURL: GitURL(base, g.Name),
		HTMLURL: u.web, Files: make(map[string]fileJSON, len(files)), Public: g.Public,
		CreatedAt: wire.T(g.CreatedAt), UpdatedAt: wire.T(g.UpdatedAt), Description: g.Description,
		Comments: comments, Owner: accounts.ToSimpleUser(base, g.Owner),
	}
	for _, f := range files {
		j.Files[f.Name] = toFileJSON(base, g, f)
	}
	return j
}

func toFileJSON(base string, g *Gist, f File) fileJSON {
	typ, lang := fileType(f.Name)
	j := fileJSON{Filename: f.Name, Type: typ, Language: lang, RawURL: rawURL(base, g, f), Size: f.Size}
	if f.Content != nil {
		content, truncated := f.Content, false
		if len(content) > MaxContent {
			content, truncated = content[:MaxContent], true
		}
		s := string(content)
		j.Content, j.Truncated = &s, &truncated
		if !utf8.ValidString(s) {
			j.Encoding = "utf-8" // the bytes as they are; raw_url serves them exactly
		}
	}
	return j
}

func toHistoryJSON(base string, g *Gist, r Revision, user *accounts.SimpleUser) historyJSON {
	return historyJSON{User: user, Version: r.SHA, CommittedAt: wire.T(r.CommitterDate),
		ChangeStatus: changeStatus{Total: r.Additions + r.Deletions, Additions: r.Additions, Deletions: r.Deletions},
		URL:          urlsOf(base, g).api + "/" + r.SHA}
}

func toCommentJSON(base string, g *Gist, c *Comment) commentJSON {
	j := commentJSON{ID: c.ID, NodeID: wire.NodeID("GC", c.ID),
		URL:  urlsOf(base, g).api + "/comments/" + strconv.FormatInt(c.ID, 10),
		Body: c.Body, CreatedAt: wire.T(c.CreatedAt), UpdatedAt: wire.T(c.UpdatedAt), AuthorAssociation: "NONE"}
	if c.User != nil {
		u := accounts.ToSimpleUser(base, c.User)
		j.User = &u
		if c.User.ID == g.Owner.ID {
			j.AuthorAssociation = "OWNER"
		}
	}
	return j
}

// languages are the languages of the common file extensions, as the
// platform names them (linguist); another extension has none.
var languages = map[string]string{
	".go": "Go", ".rb": "Ruby", ".py": "Python", ".js": "JavaScript", ".ts": "TypeScript", ".md": "Markdown",
	".txt": "Text", ".sh": "Shell", ".json": "JSON", ".yml": "YAML", ".yaml": "YAML", ".c": "C", ".h": "C",
	".cpp": "C++", ".java": "Java", ".rs": "Rust", ".html": "HTML", ".css": "CSS", ".sql": "SQL", ".toml": "TOML",
	".php": "PHP", ".swift": "Swift", ".kt": "Kotlin", ".xml": "XML",
}

// fileType returns the file's MIME type and language from its extension:
// text/plain for a file of no known language.
func fileType(name string) (typ, lang string) {
	lang = languages[strings.ToLower(path.Ext(name))]
	switch lang {
	case "", "Text":
		return "text/plain", lang
	case "Markdown":
		return "text/markdown", lang
	case "JSON", "XML", "JavaScript":
		return "application/" + strings.ToLower(lang), lang
	case "HTML", "CSS":
		return "text/" + strings.ToLower(lang), lang
	}
	return "application/x-" + strings.ToLower(strings.ReplaceAll(lang, "+", "p")), lang
}
