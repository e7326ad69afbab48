package keys

import (
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
// keys permission; anyone lists a user's public keys. Deploy keys need
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
		{Method: "GET", Pattern: repo, Handle: h.listDeploy, Auth: deploy("administration:read")},
		{Method: "POST", Pattern: repo, Handle: h.createDeploy, Auth: deploy("administration:write")},
		{Method: "GET", Pattern: repo + "/{key_id}", Handle: h.getDeploy, Auth: deploy("administration:read")},
		{Method: "DELETE", Pattern: repo + "/{key_id}", Handle: h.deleteDeploy, Auth: deploy("administration:write")},
	}
}

// Register adds the plain-text {web}/{username}.keys address to a mux.
func (h *Handler) Register(mux interface{ Handle(string, http.Handler) }) {
	mux.Handle("GET /{userkeys}", http.HandlerFunc(h.keysFile))
}

// keysFile answers GET /{username}.keys: the user's public keys, one a
// line, as authorized_keys takes them; any other name is the JSON 404.
func (h *Handler) keysFile(w http.ResponseWriter, r *http.Request) {
	login, ok := strings.CutSuffix(r.PathValue("userkeys"), ".keys")
	if !ok || login == "" {
		r.Pattern = ""
		httpapi.WriteError(w, r, apierr.NotFound())
		return
	}
	u, err := accounts.ByLogin(r.Context(), h.Service.DB, login)
	if err != nil || u.IsOrg() {
		if err == nil {
			err = apierr.NotFound()
		}
		httpapi.WriteError(w, r, err)
		return
	}
	list, err := h.Service.AllUser(r.Context(), u.ID)
	if err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	var b strings.Builder
	for _, k := range list {
		b.WriteString(k.Text)
		b.WriteByte('\n')
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte(b.String()))
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
