package settings

import (
	"net/http"
	"strconv"
	"strings"

	"forgeapi/internal/actions/runnerproto"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/wire"
)

// RegisterPath and RemovePath are forgeapi's own runner registration
// endpoints, which `forgeapi runner` calls with a registration or remove
// token (Authorization: RemoteAuth TOKEN), as the platform's runner does
// with its own service.
const (
	RegisterPath = "/_runner/register"
	RemovePath   = "/_runner/remove"
)

// runnerRoutes are the self-hosted runners of repositories and
// organizations, and the registration endpoints.
func (h *Handler) runnerRoutes() []httpapi.Route {
	const repo = "/repos/{owner}/{repo}/actions/runners"
	const org = "/orgs/{org}/actions/runners"
	read, write := repoRule(auth.RoleAdmin, "administration:read"), repoRule(auth.RoleAdmin, "administration:write")
	orgRead, orgWrite := orgRule("organization_self_hosted_runners:read"), orgRule("organization_self_hosted_runners:write")
	runnerToken := auth.Rule{ClientCredentials: true}
	out := []httpapi.Route{
		{Method: "POST", Pattern: RegisterPath, Handle: h.register, Auth: runnerToken},
		{Method: "POST", Pattern: RemovePath, Handle: h.unregister, Auth: runnerToken},
		{Method: "POST", Pattern: "/enterprises/{enterprise}/actions/runners/generate-jitconfig", Handle: h.generateJIT(enterprisePlaceOf),
			Auth: auth.Rule{Target: auth.TargetEnterprise, Role: auth.RoleAdmin, Scopes: []string{"manage_runners:enterprise"}}},
	}
	for _, p := range []struct {
		path        string
		place       placeFunc
		read, write auth.Rule
	}{{repo, repoPlaceOf, read, write}, {org, orgPlaceOf, orgRead, orgWrite}} {
		out = append(out,
			httpapi.Route{Method: "GET", Pattern: p.path, Handle: h.listRunners(p.place), Auth: p.read},
			httpapi.Route{Method: "POST", Pattern: p.path + "/registration-token", Handle: h.createToken(TokenRegistration, p.place), Auth: p.write},
			httpapi.Route{Method: "POST", Pattern: p.path + "/remove-token", Handle: h.createToken(TokenRemove, p.place), Auth: p.write},
			httpapi.Route{Method: "POST", Pattern: p.path + "/generate-jitconfig", Handle: h.generateJIT(p.place), Auth: p.write},
			httpapi.Route{Method: "GET", Pattern: p.path + "/{runner_id}", Handle: h.getRunner(p.place), Auth: p.read},
			httpapi.Route{Method: "DELETE", Pattern: p.path + "/{runner_id}", Handle: h.deleteRunner(p.place), Auth: p.write},
			httpapi.Route{Method: "GET", Pattern: p.path + "/{runner_id}/labels", Handle: h.labels(p.place, nil), Auth: p.read},
			httpapi.Route{Method: "POST", Pattern: p.path + "/{runner_id}/labels", Handle: h.labels(p.place, h.addLabels), Auth: p.write},
			httpapi.Route{Method: "PUT", Pattern: p.path + "/{runner_id}/labels", Handle: h.labels(p.place, h.setLabels), Auth: p.write},
			httpapi.Route{Method: "DELETE", Pattern: p.path + "/{runner_id}/labels", Handle: h.labels(p.place, h.removeCustomLabels), Auth: p.write},
			httpapi.Route{Method: "DELETE", Pattern: p.path + "/{runner_id}/labels/{name}", Handle: h.labels(p.place, h.removeLabel), Auth: p.write},
		)
	}
	return out
}

// runnerJSON is the platform's runner.
type runnerJSON struct {
	ID            int64       `json:"id"`
	RunnerGroupID *int64      `json:"runner_group_id,omitempty"`
	Name          string      `json:"name"`
	OS            string      `json:"os"`
	Status        string      `json:"status"`
	Busy          bool        `json:"busy"`
	Ephemeral     bool        `json:"ephemeral"`
	Labels        []labelJSON `json:"labels"`
}

// labelJSON is the platform's runner-label.
type labelJSON struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
	Type string `json:"type"`
}

// toLabelsJSON renders labels.
func toLabelsJSON(ls []Label) []labelJSON {
	out := make([]labelJSON, 0, len(ls))
	for _, l := range ls {
		t := "read-only"
		if l.Custom {
			t = "custom"
		}
		out = append(out, labelJSON{ID: l.ID, Name: l.Name, Type: t})
	}
	return out
}

// toRunnerJSON renders a runner.
func toRunnerJSON(r *Runner) runnerJSON {
	j := runnerJSON{ID: r.ID, Name: r.Name, OS: r.OS, Status: r.Status, Busy: r.Busy, Ephemeral: r.Ephemeral, Labels: toLabelsJSON(r.Labels)}
	if r.GroupID != 0 {
		j.RunnerGroupID = &r.GroupID
	}
	return j
}

// createToken answers POST .../registration-token and .../remove-token:
// 201 with the token and its expiry, an hour on.
func (h *Handler) createToken(kind string, place placeFunc) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		p, _, _ := place(r)
		token, expires, err := h.Service.CreateToken(r.Context(), kind, p)
		if err != nil {
			return err
		}
		httpapi.WriteJSON(w, http.StatusCreated, map[string]any{"token": token, "expires_at": wire.T(expires)})
		return nil
	}
}

// jitRequest is the body of POST .../generate-jitconfig.
type jitRequest struct {
	Name          *string   `json:"name"`
	RunnerGroupID *int64    `json:"runner_group_id"`
	Labels        *[]string `json:"labels"`
	WorkFolder    *string   `json:"work_folder"`
}

// jitOS are the labels that name a just-in-time runner's OS (read-only
// labels, as the runner reports them), with the architectures'.
var jitOS, jitArch = []string{"Linux", "Windows", "macOS"}, []string{"X64", "X86", "ARM64", "ARM"}

// generateJIT answers POST .../actions/runners/generate-jitconfig: 201
// with the new runner (ephemeral, offline until it runs) and its
// encoded configuration for `forgeapi runner run --jitconfig`; a name the
// place has is a 409, a bad body a 422.
func (h *Handler) generateJIT(place placeFunc) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var body jitRequest
		if err := httpapi.DecodeJSON(r, &body); err != nil {
			return err
		}
		n, folder, err := jitRunner(body)
		if err != nil {
			return apierr.Simple(err)
		}
		p, _, _ := place(r)
		if p.Scope == ScopeOrg {
			n.GroupID = *body.RunnerGroupID
		}
		rn, cred, err := h.Service.CreateJITRunner(r.Context(), p, n)
		if err != nil {
			return apierr.Simple(err)
		}
		labels := make([]string, 0, len(rn.Labels))
		for _, l := range rn.Labels {
			labels = append(labels, l.Name)
		}
		cfg := runnerproto.JITConfig{URL: httpapi.BaseURL(r.Context()), ID: rn.ID, Name: rn.Name, Labels: labels,
			Credential: cred, WorkFolder: folder}
		httpapi.WriteJSON(w, http.StatusCreated, map[string]any{"runner": toRunnerJSON(rn), "encoded_jit_config": cfg.Encode()})
		return nil
	}
}

// jitRunner validates a generate-jitconfig body: the runner to make and
// its work folder. Labels naming an OS or architecture are its read-only
// ones (Linux and X64 when none is named), self-hosted always.
func jitRunner(b jitRequest) (NewRunner, string, error) {
	var f apierr.Fields
	n := NewRunner{OS: "Linux", Arch: "X64", Version: ""}
	switch {
	case b.Name == nil:
		f.Add("Runner", "name", apierr.CodeMissingField)
	case *b.Name == "" || len(*b.Name) > 64 || !validLabel(*b.Name):
		f.Addf("Runner", "name", "name must be 1 to 64 characters, without commas or surrounding spaces")
	default:
		n.Name = *b.Name
	}
	if b.RunnerGroupID == nil {
		f.Add("Runner", "runner_group_id", apierr.CodeMissingField)
	}
	switch {
	case b.Labels == nil:
		f.Add("Runner", "labels", apierr.CodeMissingField)
	case len(*b.Labels) < 1 || len(*b.Labels) > 100:
		f.Addf("Runner", "labels", "labels must list 1 to 100 labels")
	}
	if b.Labels != nil {
		for _, l := range *b.Labels {
			switch {
			case !validLabel(l):
				f.Addf("Runner", "labels", "Labels are 1 to 100 characters, without commas or surrounding spaces")
			case strings.EqualFold(l, "self-hosted"):
			case containsFold(jitOS, l) != "":
				n.OS = containsFold(jitOS, l)
			case containsFold(jitArch, l) != "":
				n.Arch = containsFold(jitArch, l)
			default:
				n.Labels = append(n.Labels, l)
			}
		}
	}
	folder := "_work"
	if b.WorkFolder != nil && *b.WorkFolder != "" {
		folder = *b.WorkFolder
	}
	return n, folder, f.Err()
}

// containsFold is the element of list equal to s in any case, "" when
// none is.
func containsFold(list []string, s string) string {
	for _, l := range list {
		if strings.EqualFold(l, s) {
			return l
		}
	}
	return ""
}

// listRunners answers GET .../actions/runners: total_count and a page of
// runners, those named ?name= only.
func (h *Handler) listRunners(place placeFunc) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		page, err := httpapi.ParsePage(r)
		if err != nil {
			return err
		}
		p, _, _ := place(r)
		list, total, err := h.Service.Runners(r.Context(), p, r.URL.Query().Get("name"), page.Limit(), page.Offset())
		if err != nil {
			return err
		}
		out := make([]runnerJSON, 0, len(list))
		for _, rn := range list {
			out = append(out, toRunnerJSON(rn))
		}
		httpapi.SetLinks(w, r, page, total)
		httpapi.WriteJSON(w, http.StatusOK, map[string]any{"total_count": total, "runners": out})
		return nil
	}
}

// runner resolves the route's {runner_id} of its place: a 404 when there
// is none.
func (h *Handler) runner(r *http.Request, place placeFunc) (*Runner, error) {
	id, err := httpapi.PathInt64(r, "runner_id")
	if err != nil {
		return nil, err
	}
	p, _, _ := place(r)
	rn, err := h.Service.Runner(r.Context(), p, id)
	return rn, notFound(err)
}

// getRunner answers GET .../actions/runners/{runner_id}.
func (h *Handler) getRunner(place placeFunc) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		rn, err := h.runner(r, place)
		if err != nil {
			return err
		}
		httpapi.WriteJSON(w, http.StatusOK, toRunnerJSON(rn))
		return nil
	}
}

// deleteRunner answers DELETE .../actions/runners/{runner_id}: 204.
func (h *Handler) deleteRunner(place placeFunc) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		rn, err := h.runner(r, place)
		if err != nil {
			return err
		}
		if err := notFound(h.Service.DeleteRunner(r.Context(), rn.Place, rn.ID)); err != nil {
			return err
		}
		httpapi.NoContent(w)
		return nil
	}
}

// labelChange changes a runner's labels and returns them.
type labelChange func(r *http.Request, rn *Runner) ([]Label, error)

// labels answers the label routes of a runner: change (nil for GET)
// applies, then 200 with total_count and the runner's labels.
func (h *Handler) labels(place placeFunc, change labelChange) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		rn, err := h.runner(r, place)
		if err != nil {
			return err
		}
		list := rn.Labels
		if change != nil {
			if list, err = change(r, rn); err != nil {
				return apierr.Simple(err) // the label operations' 422 form
			}
		}
		httpapi.WriteJSON(w, http.StatusOK, map[string]any{"total_count": len(list), "labels": toLabelsJSON(list)})
		return nil
	}
}

// labelsBody reads {"labels": [...]}: at least min labels, at most 100,
// each one the platform takes.
func labelsBody(r *http.Request, min int) ([]string, error) {
	var body struct {
		Labels *[]string `json:"labels"`
	}
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return nil, err
	}
	switch {
	case body.Labels == nil:
		return nil, apierr.Invalid("Runner", "labels", apierr.CodeMissingField)
	case len(*body.Labels) < min || len(*body.Labels) > 100:
		return nil, apierr.Validation(apierr.FieldError{Resource: "Runner", Field: "labels", Code: apierr.CodeInvalid,
			Message: "labels must list " + strconv.Itoa(min) + " to 100 labels"})
	}
	for _, l := range *body.Labels {
		if !validLabel(l) {
			return nil, apierr.Validation(apierr.FieldError{Resource: "Runner", Field: "labels", Code: apierr.CodeInvalid,
				Message: "Labels are 1 to 100 characters, without commas or surrounding spaces"})
		}
	}
	return *body.Labels, nil
}

// addLabels is POST .../labels.
func (h *Handler) addLabels(r *http.Request, rn *Runner) ([]Label, error) {
	names, err := labelsBody(r, 1)
	if err != nil {
		return nil, err
	}
	return h.Service.AddLabels(r.Context(), rn, names)
}

// setLabels is PUT .../labels: the custom labels replaced.
func (h *Handler) setLabels(r *http.Request, rn *Runner) ([]Label, error) {
	names, err := labelsBody(r, 0)
	if err != nil {
		return nil, err
	}
	return h.Service.SetLabels(r.Context(), rn, names)
}

// removeCustomLabels is DELETE .../labels: every custom label removed.
func (h *Handler) removeCustomLabels(r *http.Request, rn *Runner) ([]Label, error) {
	return h.Service.SetLabels(r.Context(), rn, nil)
}

// removeLabel is DELETE .../labels/{name}: a 404 for a label the runner
// does not have, a 422 for a read-only one.
func (h *Handler) removeLabel(r *http.Request, rn *Runner) ([]Label, error) {
	list, err := h.Service.RemoveLabel(r.Context(), rn, r.PathValue("name"))
	return list, notFound(err)
}

// remoteAuth is the token of an Authorization: RemoteAuth TOKEN header,
// "" when there is none.
func remoteAuth(r *http.Request) string {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "RemoteAuth") {
		return ""
	}
	return strings.TrimSpace(token)
}

// registerRequest is the body of POST /_runner/register.
type registerRequest struct {
	Name        string   `json:"name"`
	OS          string   `json:"os"`
	Arch        string   `json:"architecture"`
	Version     string   `json:"version"`
	Labels      []string `json:"labels"`
	RunnerGroup string   `json:"runner_group"`
	Ephemeral   bool     `json:"ephemeral"`
	Replace     bool     `json:"replace"`
}

// register answers POST /_runner/register: 201 with the runner and its
// credential; a token that is not a live registration token is a 401.
func (h *Handler) register(w http.ResponseWriter, r *http.Request) error {
	token := remoteAuth(r)
	if token == "" {
		return ErrBadRunnerToken
	}
	var body registerRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	var f apierr.Fields
	if body.Name == "" || len(body.Name) > 64 || !validLabel(body.Name) {
		f.Addf("Runner", "name", "name must be 1 to 64 characters, without commas or surrounding spaces")
	}
	if body.OS != "Linux" && body.OS != "Windows" && body.OS != "macOS" {
		f.Addf("Runner", "os", "os must be Linux, Windows or macOS")
	}
	if body.Arch != "X64" && body.Arch != "ARM64" && body.Arch != "ARM" && body.Arch != "X86" {
		f.Addf("Runner", "architecture", "architecture must be X64, X86, ARM64 or ARM")
	}
	if len(body.Labels) > 100 {
		f.Addf("Runner", "labels", "labels must list at most 100 labels")
	}
	for _, l := range body.Labels {
		if !validLabel(l) {
			f.Addf("Runner", "labels", "Labels are 1 to 100 characters, without commas or surrounding spaces")
			break
		}
	}
	if err := f.Err(); err != nil {
		return err
	}
	rn, cred, err := h.Service.Register(r.Context(), token, NewRunner{Name: body.Name, OS: body.OS, Arch: body.Arch,
		Version: body.Version, Labels: body.Labels, Group: body.RunnerGroup, Ephemeral: body.Ephemeral, Replace: body.Replace})
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusCreated, struct {
		runnerJSON
		Credential string `json:"credential"`
	}{toRunnerJSON(rn), cred})
	return nil
}

// unregister answers POST /_runner/remove with {"name": ...}: 204; a
// token that is not a live remove token is a 401, a name its place has no
// runner of a 404.
func (h *Handler) unregister(w http.ResponseWriter, r *http.Request) error {
	token := remoteAuth(r)
	if token == "" {
		return ErrBadRunnerToken
	}
	var body struct {
		Name string `json:"name"`
	}
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	if err := notFound(h.Service.Unregister(r.Context(), token, body.Name)); err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}
