package gitdata

import (
	"encoding/json"
	"net/http"
	"strconv"

	"forgeapi/internal/apierr"
	"forgeapi/internal/git/gitread"
	"forgeapi/internal/git/gitwrite"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/repos/gitjson"
)

// maxTreeEntries is how many entries the answer of a tree write lists
// before it is truncated (the reads' limit, repocontent.MaxTreeEntries).
const maxTreeEntries = 100000

// treeRequest is the body of POST .../git/trees.
type treeRequest struct {
	Tree     *[]treeEntryRequest `json:"tree"`
	BaseTree *string             `json:"base_tree"`
}

// treeEntryRequest is one entry of a tree write. SHA is kept raw to tell
// null (delete the path) from absent.
type treeEntryRequest struct {
	Path    *string         `json:"path"`
	Mode    *string         `json:"mode"`
	Type    *string         `json:"type"`
	SHA     json.RawMessage `json:"sha"`
	Content *string         `json:"content"`
}

// modes are the entry modes a tree write accepts, with the type of
// object each names.
var modes = map[string]struct {
	mode uint32
	typ  string
}{
	"100644": {gitwrite.ModeFile, "blob"},
	"100755": {gitwrite.ModeExec, "blob"},
	"040000": {gitwrite.ModeDir, "tree"},
	"160000": {gitwrite.ModeGitlink, "commit"},
	"120000": {gitwrite.ModeSymlink, "blob"},
}

// createTree answers POST /repos/{owner}/{repo}/git/trees: 201 with the
// new tree (its top-level entries). The tree is base_tree (a tree SHA)
// with the entries applied in order, or the entries alone without
// base_tree. An entry names its object by sha (which must exist with the
// type its mode says; a submodule's commit need not) or gives its
// content (written as a blob); "sha": null deletes the path. Paths may be
// nested ("a/b/c").
func (h *Handler) createTree(w http.ResponseWriter, r *http.Request) error {
	var body treeRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	if body.Tree == nil {
		return apierr.Invalid("Tree", "tree", apierr.CodeMissingField)
	}
	repo := repos.From(r.Context())
	dir := h.Repos.GitDir(repo.ID)
	g, err := gitread.Open(dir)
	if err != nil {
		return err
	}
	defer g.Close()
	base := ""
	if body.BaseTree != nil && *body.BaseTree != "" {
		if ok, err := objectIs(g, *body.BaseTree, "tree"); err != nil {
			return err
		} else if !ok {
			return apierr.Unprocessable("base_tree is not a valid tree oid")
		}
		base = *body.BaseTree
	}
	edits := make([]gitwrite.TreeEdit, 0, len(*body.Tree))
	for _, e := range *body.Tree {
		edit, err := h.toEdit(g, dir, e)
		if err != nil {
			return err
		}
		edits = append(edits, edit)
	}
	sha, err := gitwrite.WriteTree(r.Context(), dir, base, edits)
	if err != nil {
		return refused("tree.", err)
	}
	sha, entries, truncated, err := g.Tree(sha, false, maxTreeEntries)
	if err != nil {
		return err
	}
	api := apiOf(r, repo)
	httpapi.WriteCreated(w, api+"/git/trees/"+sha, gitjson.TreeOf(api, sha, entries, truncated))
	return nil
}

// toEdit checks one entry of a tree write and returns its edit, writing
// its content as a blob when it gives one.
func (h *Handler) toEdit(g *gitread.Repository, dir string, e treeEntryRequest) (gitwrite.TreeEdit, error) {
	if e.Path == nil || *e.Path == "" {
		return gitwrite.TreeEdit{}, apierr.Unprocessable("tree.path is missing")
	}
	edit := gitwrite.TreeEdit{Path: *e.Path}
	sha, null, err := readSHA(e.SHA)
	if err != nil {
		return edit, err
	}
	switch {
	case sha != "" && e.Content != nil:
		return edit, apierr.Unprocessable("tree.sha and tree.content cannot both be given for %s", *e.Path)
	case null && e.Content == nil:
		edit.Delete = true
		return edit, nil
	case sha == "" && e.Content == nil:
		return edit, apierr.Unprocessable("tree.sha or tree.content is required for %s", *e.Path)
	}
	if e.Mode == nil {
		return edit, apierr.Unprocessable("tree.mode is missing for %s", *e.Path)
	}
	m, ok := modes[*e.Mode]
	if !ok {
		return edit, apierr.Unprocessable("tree.mode %s is not a valid mode (100644, 100755, 040000, 160000 or 120000)", strconv.Quote(*e.Mode))
	}
	if e.Type != nil && *e.Type != m.typ {
		return edit, apierr.Unprocessable("tree.type %s does not match tree.mode %s (a %s)", strconv.Quote(*e.Type), *e.Mode, m.typ)
	}
	edit.Mode = m.mode
	if e.Content != nil {
		if m.typ != "blob" {
			return edit, apierr.Unprocessable("tree.content is for a blob, not a %s (%s)", m.typ, *e.Path)
		}
		if len(*e.Content) > MaxBlobSize {
			return edit, apierr.Unprocessable("tree.content is larger than %d bytes (%s)", MaxBlobSize, *e.Path)
		}
		edit.SHA, err = gitwrite.WriteBlob(dir, []byte(*e.Content))
		return edit, err
	}
	if m.typ != "commit" { // a submodule's commit is another repository's
		if ok, err := objectIs(g, sha, m.typ); err != nil {
			return edit, err
		} else if !ok {
			return edit, apierr.Unprocessable("tree.sha %s is not a valid %s", sha, m.typ)
		}
	} else if len(sha) != 40 || !isHex(sha) {
		return edit, apierr.Unprocessable("tree.sha %s is not a valid commit", sha)
	}
	edit.SHA = sha
	return edit, nil
}

// readSHA reads an entry's sha: a string, null (null true) or absent
// (both zero).
func readSHA(raw json.RawMessage) (sha string, null bool, err error) {
	if len(raw) == 0 {
		return "", false, nil
	}
	if string(raw) == "null" {
		return "", true, nil
	}
	if err := json.Unmarshal(raw, &sha); err != nil {
		return "", false, apierr.Unprocessable("tree.sha must be a string or null")
	}
	return sha, false, nil
}

// isHex reports whether s is made only of lowercase or uppercase hex
// digits.
func isHex(s string) bool {
	for _, c := range []byte(s) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}
