package keys

import (
	"io"
	"net/http"
	"strings"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
)

// Handler serves the SSH key endpoints.
type Handler struct {
	Service *Service
}

// Routes is the keys route table. A user's own keys: classic and OAuth
// tokens need read:public_key, write:public_key (add) or
// admin:public_key (delete), permission-based user tokens the Git SSH
// keys permission (GPG keys and SSH signing keys: their own scopes and
// permissions); anyone lists a user's public keys. Deploy keys need
// admin on the repository (classic tokens: repo; permission-based
// tokens: Administration).
func (h *Handler) Routes() []httpapi.Route {
	self := func(scope, perm string) auth.Rule {
		return auth.Rule{Target: auth.TargetSelf, Unauthorized401: true, Scopes: []string{scope},
			Permissions: auth.Perm(perm), TokenTypes: auth.UAT | auth.FPAT}
	}
	deploy := func(perm string) auth.Rule {
		return auth.Rule{Target: auth.TargetRepo, Role: auth.RoleAdmin, Scopes: []string{"repo"},
			Permissions: auth.Perm(perm), TokenTypes: auth.AllTokenTypes}
	}
	const repo = "/repos/{owner}/{repo}/keys"
	return []httpapi.Route{
		{Method: "GET", Pattern: "/user/keys", Handle: h.listMine, Auth: self("read:public_key", "git_ssh_keys:read")},
		{Method: "POST", Pattern: "/user/keys", Handle: h.createMine, Auth: self("write:public_key", "git_ssh_keys:write")},
		{Method: "GET", Pattern: "/user/keys/{key_id}", Handle: h.getMine, Auth: self("read:public_key", "git_ssh_keys:read")},
		{Method: "DELETE", Pattern: "/user/keys/{key_id}", Handle: h.deleteMine, Auth: self("admin:public_key", "git_ssh_keys:write")},
		{Method: "GET", Pattern: "/users/{username}/keys", Handle: h.listUser,
			Auth: auth.Rule{Target: auth.TargetUser, Public: true, TokenTypes: auth.AllTokenTypes}},
		{Method: "GET", Pattern: "/user/gpg_keys", Handle: h.listMyGPG, Auth: self("read:gpg_key", "gpg_keys:read")},
		{Method: "POST", Pattern: "/user/gpg_keys", Handle: h.createGPG, Auth: self("write:gpg_key", "gpg_keys:write")},
		{Method: "GET", Pattern: "/user/gpg_keys/{gpg_key_id}", Handle: h.getGPG, Auth: self("read:gpg_key", "gpg_keys:read")},
		{Method: "DELETE", Pattern: "/user/gpg_keys/{gpg_key_id}", Handle: h.deleteGPG, Auth: self("admin:gpg_key", "gpg_keys:write")},
		{Method: "GET", Pattern: "/users/{username}/gpg_keys", Handle: h.listUserGPG,
			Auth: auth.Rule{Target: auth.TargetUser, Public: true, TokenTypes: auth.AllTokenTypes}},
		{Method: "GET", Pattern: "/user/ssh_signing_keys", Handle: h.listMySigning, Auth: self("read:ssh_signing_key", "ssh_signing_keys:read")},
		{Method: "POST", Pattern: "/user/ssh_signing_keys", Handle: h.createSigning, Auth: self("write:ssh_signing_key", "ssh_signing_keys:write")},
		{Method: "GET", Pattern: "/user/ssh_signing_keys/{ssh_signing_key_id}", Handle: h.getSigning,
			Auth: self("read:ssh_signing_key", "ssh_signing_keys:read")},
		{Method: "DELETE", Pattern: "/user/ssh_signing_keys/{ssh_signing_key_id}", Handle: h.deleteSigning,
			Auth: self("admin:ssh_signing_key", "ssh_signing_keys:write")},
		{Method: "GET", Pattern: "/users/{username}/ssh_signing_keys", Handle: h.listUserSigning,
			Auth: auth.Rule{Target: auth.TargetUser, Public: true, TokenTypes: auth.AllTokenTypes}},
		{Method: "GET", Pattern: repo, Handle: h.listDeploy, Auth: deploy("administration:read")},
		{Method: "POST", Pattern: repo, Handle: h.createDeploy, Auth: deploy("administration:write")},
		{Method: "GET", Pattern: repo + "/{key_id}", Handle: h.getDeploy, Auth: deploy("administration:read")},
		{Method: "DELETE", Pattern: repo + "/{key_id}", Handle: h.deleteDeploy, Auth: deploy("administration:write")},
	}
}

// ServeFile answers the web address {web}/{name} when name is
// LOGIN.keys (the user's SSH keys, one a line, as authorized_keys takes
// them) or LOGIN.gpg (their GPG keys, armored, one after the other); any
// other name, or a login that is not a user's, is the JSON 404. The web
// layer hands it the single-segment addresses that are not owners' pages.
func (h *Handler) ServeFile(w http.ResponseWriter, r *http.Request, name string) {
	login, ext := "", ""
	for _, e := range []string{".keys", ".gpg"} {
		if l, ok := strings.CutSuffix(name, e); ok {
			login, ext = l, e
		}
	}
	if login == "" {
		r.Pattern = ""
		httpapi.WriteError(w, r, apierr.NotFound())
		return
	}
	u, err := accounts.ByLogin(r.Context(), h.Service.DB, login)
	if err == nil && u.IsOrg() {
		err = apierr.NotFound()
	}
	var text string
	if err == nil {
		text, err = h.keysText(r, u.ID, ext)
	}
	if err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = io.WriteString(w, text)
}

// keysText is the text of the user's .keys (ext ".keys") or .gpg file.
func (h *Handler) keysText(r *http.Request, userID int64, ext string) (string, error) {
	var b strings.Builder
	if ext == ".keys" {
		list, err := h.Service.AllUser(r.Context(), userID)
		for _, k := range list {
			b.WriteString(k.Text + "\n")
		}
		return b.String(), err
	}
	list, err := h.Service.AllGPG(r.Context(), userID)
	for _, k := range list {
		b.WriteString(k.RawKey)
	}
	return b.String(), err
}

// newKeyRequest is the body of POST /user/keys and POST .../keys.
type newKeyRequest struct {
	Title    *string `json:"title"`
	Key      *string `json:"key"`
	ReadOnly *bool   `json:"read_only"`
}

// decodeNew reads a new key's body; a deploy key is read-only unless
// the body says otherwise.
func decodeNew(r *http.Request) (NewKey, error) {
	var body newKeyRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return NewKey{}, err
	}
	if body.Key == nil || strings.TrimSpace(*body.Key) == "" {
		return NewKey{}, apierr.Invalid("PublicKey", "key", apierr.CodeMissingField)
	}
	n := NewKey{Key: *body.Key, ReadOnly: true}
	if body.Title != nil {
		n.Title = *body.Title
	}
	if body.ReadOnly != nil {
		n.ReadOnly = *body.ReadOnly
	}
	return n, nil
}

// keyID is {key_id}: a 404 when it is not a number.
func keyID(r *http.Request) (int64, error) {
	id, err := httpapi.PathInt64(r, "key_id")
	if err != nil {
		return 0, apierr.NotFound()
	}
	return id, nil
}

func (h *Handler) actor(r *http.Request) (*accounts.Account, error) {
	return accounts.ByID(r.Context(), h.Service.DB, auth.PrincipalFrom(r.Context()).UserID())
}

// repoOf is the route's repository.
func repoOf(r *http.Request) *repos.Repository { return repos.From(r.Context()) }
