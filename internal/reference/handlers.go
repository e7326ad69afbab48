package reference

import (
	"net/http"
	"slices"
	"strings"

	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
)

// emojiImages is where the emojis' images are: the platform's asset
// host, as its /emojis names them.
const emojiImages = "https://github.githubassets.com/images/icons/emoji/unicode/"

// Handler serves the reference tables.
type Handler struct{}

// Routes is the reference tables' route table.
func (h *Handler) Routes() []httpapi.Route {
	public := auth.Rule{Public: true, TokenTypes: auth.AllTokenTypes}
	return []httpapi.Route{
		{Method: "GET", Pattern: "/emojis", Handle: h.emojis, Auth: public},
		{Method: "GET", Pattern: "/licenses", Handle: h.licenses, Auth: public},
		{Method: "GET", Pattern: "/licenses/{license}", Handle: h.license, Auth: public},
		{Method: "GET", Pattern: "/gitignore/templates", Handle: h.gitignoreNames, Auth: public},
		{Method: "GET", Pattern: "/gitignore/templates/{name}", Handle: h.gitignoreTemplate, Auth: public},
		{Method: "GET", Pattern: "/codes_of_conduct", Handle: h.codesOfConduct, Auth: public},
		{Method: "GET", Pattern: "/codes_of_conduct/{key}", Handle: h.codeOfConduct, Auth: public},
		{Method: "GET", Pattern: "/zen", Handle: h.zen, Auth: public},
		{Method: "GET", Pattern: "/octocat", Handle: h.octocat, Auth: public},
	}
}

func (h *Handler) emojis(w http.ResponseWriter, r *http.Request) error {
	t, err := Load()
	if err != nil {
		return err
	}
	out := make(map[string]string, len(t.Emojis))
	for alias, image := range t.Emojis {
		out[alias] = emojiImages + image + ".png?v8"
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// licenseSimple is the platform's license-simple object.
type licenseSimple struct {
	Key     string  `json:"key"`
	Name    string  `json:"name"`
	SPDXID  *string `json:"spdx_id"`
	URL     *string `json:"url"`
	NodeID  string  `json:"node_id"`
	HTMLURL string  `json:"html_url,omitempty"`
}

// licenseJSON is the platform's license object.
type licenseJSON struct {
	licenseSimple
	Description    string   `json:"description"`
	Implementation string   `json:"implementation"`
	Permissions    []string `json:"permissions"`
	Conditions     []string `json:"conditions"`
	Limitations    []string `json:"limitations"`
	Body           string   `json:"body"`
	Featured       bool     `json:"featured"`
}

func simple(r *http.Request, l *License) licenseSimple {
	url := httpapi.BaseURL(r.Context()) + "/licenses/" + l.Key
	spdx := l.SPDXID
	return licenseSimple{Key: l.Key, Name: l.Name, SPDXID: &spdx, URL: &url, NodeID: LicenseNodeID(l.Key),
		HTMLURL: "http://choosealicense.com/licenses/" + l.Key + "/"}
}

// licenses lists the commonly used licenses (those choosealicense.com
// does not hide), or the featured ones with featured=true, by key.
func (h *Handler) licenses(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	featured := r.URL.Query().Get("featured")
	if featured != "" && featured != "true" && featured != "false" {
		return apierr.Invalid("License", "featured", apierr.CodeInvalid)
	}
	t, err := Load()
	if err != nil {
		return err
	}
	var list []licenseSimple
	for _, l := range t.Licenses {
		if !l.Hidden && (featured != "true" || l.Featured) && (featured != "false" || !l.Featured) {
			list = append(list, simple(r, l))
		}
	}
	httpapi.SetLinks(w, r, page, len(list))
	httpapi.WriteJSON(w, http.StatusOK, append([]licenseSimple{}, httpapi.Slice(page, list)...))
	return nil
}

func (h *Handler) license(w http.ResponseWriter, r *http.Request) error {
	t, err := Load()
	if err != nil {
		return err
	}
	l := t.License(r.PathValue("license"))
	if l == nil {
		return apierr.NotFound()
	}
	httpapi.WriteJSON(w, http.StatusOK, licenseJSON{licenseSimple: simple(r, l), Description: l.Description,
		Implementation: l.Implementation, Permissions: nonNil(l.Permissions), Conditions: nonNil(l.Conditions),
		Limitations: nonNil(l.Limitations), Body: l.Body, Featured: l.Featured})
	return nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func (h *Handler) gitignoreNames(w http.ResponseWriter, r *http.Request) error {
	t, err := Load()
	if err != nil {
		return err
	}
	names := make([]string, 0, len(t.Gitignore))
	for name := range t.Gitignore {
		names = append(names, name)
	}
	slices.Sort(names)
	httpapi.WriteJSON(w, http.StatusOK, names)
	return nil
}

// gitignoreTemplate answers a template by name (any case): its name and
// source, or the source alone for the raw media type.
func (h *Handler) gitignoreTemplate(w http.ResponseWriter, r *http.Request) error {
	t, err := Load()
	if err != nil {
		return err
	}
	name := r.PathValue("name")
	source, ok := t.Gitignore[name]
	if !ok {
		for n, s := range t.Gitignore {
			if strings.EqualFold(n, name) {
				name, source, ok = n, s, true
			}
		}
	}
	if !ok {
		return apierr.NotFound()
	}
	if httpapi.MediaParam(r) == "raw" {
		w.Header().Set("Content-Type", "application/vnd.github.raw; charset=utf-8")
		_, _ = w.Write([]byte(source))
		return nil
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]string{"name": name, "source": source})
	return nil
}

// codeOfConductJSON is the platform's code-of-conduct object; the list
// leaves the body out, as the platform's does.
type codeOfConductJSON struct {
	Key     string `json:"key"`
	Name    string `json:"name"`
	URL     string `json:"url"`
	Body    string `json:"body,omitempty"`
	HTMLURL string `json:"html_url"`
}

func codeOfConductOf(r *http.Request, c *CodeOfConduct) codeOfConductJSON {
	return codeOfConductJSON{Key: c.Key, Name: c.Name, URL: httpapi.BaseURL(r.Context()) + "/codes_of_conduct/" + c.Key,
		HTMLURL: c.HTMLURL}
}

// codesOfConduct answers GET /codes_of_conduct: the codes of conduct the
// platform offers, by key, without their texts.
func (h *Handler) codesOfConduct(w http.ResponseWriter, r *http.Request) error {
	t, err := Load()
	if err != nil {
		return err
	}
	out := make([]codeOfConductJSON, len(t.CodesOfConduct))
	for i, c := range t.CodesOfConduct {
		out[i] = codeOfConductOf(r, c)
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// codeOfConduct answers GET /codes_of_conduct/{key}: one code of conduct
// (key in any case) with its text.
func (h *Handler) codeOfConduct(w http.ResponseWriter, r *http.Request) error {
	t, err := Load()
	if err != nil {
		return err
	}
	c := t.CodeOfConduct(r.PathValue("key"))
	if c == nil {
		return apierr.NotFound()
	}
	out := codeOfConductOf(r, c)
	out.Body = c.Body
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}
