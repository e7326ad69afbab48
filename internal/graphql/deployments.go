package graphql

import (
	"context"
	"errors"
	"slices"
	"strings"

	gql "github.com/graph-gophers/graphql-go"

	"forgeapi/internal/auth"
	"forgeapi/internal/deployments"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// maxDeployments bounds the deployments and environments a repository's
// connections read to filter and order them.
const maxDeployments = 10000

// mayRead reports whether the principal may read what a fine-grained
// permission guards in the repository: every caller who sees a public
// repository, a permission-based token on a private one only with it.
func mayRead(p *auth.Principal, repo *repos.Repository, permission string) bool {
	if p.FineGrained() && repo.Private {
		return p.Token.Selects(repo.ID, repo.Owner.ID) && p.Token.Grant.Satisfies(auth.Perm(permission))
	}
	return true
}

// checkRead is FORBIDDEN when the caller may not read what permission
// guards (mayRead), as REST's route answers 403.
func (r *repositoryResolver) checkRead(ctx context.Context, permission string) error {
	if p := requestFrom(ctx).principal; !mayRead(p, r.r, permission) {
		return forbidden(httpapi.NotAccessibleMessage(p.Token.Kind))
	}
	return nil
}

// deploymentOrder is the DeploymentOrder input.
type deploymentOrder struct {
	Field     string
	Direction string
}

// deploymentsArgs are the arguments of Repository.deployments.
type deploymentsArgs struct {
	connectionArgs
	Environments *[]string
	OrderBy      deploymentOrder
}

// Deployments are the repository's deployments to the environments
// asked (all by default), by creation, oldest first unless orderBy says
// DESC; Deployments read of a permission-based token on a private
// repository. The page's latest statuses are loaded in one query.
func (r *repositoryResolver) Deployments(ctx context.Context, args deploymentsArgs) (*connection[*deploymentResolver], error) {
	if err := args.checkCounted("deployments"); err != nil {
		return nil, err
	}
	if err := r.checkRead(ctx, "deployments:read"); err != nil {
		return nil, err
	}
	all, _, err := r.h.Deployments.List(ctx, r.r.ID, deployments.Filter{}, maxDeployments, 0)
	if err != nil {
		return nil, err
	}
	var list []*deployments.Deployment
	for _, d := range all {
		if args.Environments == nil || slices.ContainsFunc(*args.Environments, func(e string) bool { return strings.EqualFold(e, d.Environment) }) {
			list = append(list, d)
		}
	}
	if args.OrderBy.Direction != "DESC" {
		slices.Reverse(list) // List is newest first
	}
	out := make([]*deploymentResolver, len(list))
	for i, d := range list {
		out[i] = &deploymentResolver{repo: r, d: d}
	}
	page, err := pageList(out, args.connectionArgs, "deployments")
	if err != nil {
		return nil, err
	}
	return page, r.h.loadLatestStatuses(ctx, page.nodes)
}

// loadLatestStatuses loads the latest status of each deployment of a
// page in one query.
func (h *Handler) loadLatestStatuses(ctx context.Context, page []*deploymentResolver) error {
	ids := make([]int64, len(page))
	for i, d := range page {
		ids[i] = d.d.ID
	}
	latest, err := h.Deployments.LatestStatuses(ctx, ids)
	if err != nil {
		return err
	}
	for _, d := range page {
		d.latest, d.latestKnown = latest[d.d.ID], true
	}
	return nil
}

// deploymentResolver resolves Deployment.
type deploymentResolver struct {
	repo        *repositoryResolver
	d           *deployments.Deployment
	latest      *deployments.Status // the latest status, when latestKnown
	latestKnown bool
}

func (r *deploymentResolver) ID() gql.ID                      { return gql.ID(deployments.DeploymentNodeID(r.d.ID)) }
func (r *deploymentResolver) DatabaseID() *int32              { return databaseID(r.d.ID) }
func (r *deploymentResolver) CommitOid() string               { return r.d.SHA }
func (r *deploymentResolver) CreatedAt() dateTime             { return at(r.d.CreatedAt) }
func (r *deploymentResolver) UpdatedAt() dateTime             { return at(r.d.UpdatedAt) }
func (r *deploymentResolver) Description() *string            { return r.d.Description }
func (r *deploymentResolver) Environment() *string            { return &r.d.Environment }
func (r *deploymentResolver) Task() *string                   { return &r.d.Task }
func (r *deploymentResolver) Payload() *string                { p := string(r.d.Payload); return &p }
func (r *deploymentResolver) Repository() *repositoryResolver { return r.repo }

// OriginalEnvironment is the environment the deployment was created for.
func (r *deploymentResolver) OriginalEnvironment() *string { return &r.d.OriginalEnvironment }

// Creator is who created the deployment.
func (r *deploymentResolver) Creator() (*actorResolver, error) {
	if r.d.Creator == nil {
		return nil, notFound("The deployment's creator no longer exists.")
	}
	return r.repo.h.actorOf(r.d.Creator), nil
}

// Commit is the deployed commit, null for credentials that may not read
// the repository's contents.
func (r *deploymentResolver) Commit(ctx context.Context) *commitResolver {
	if !mayReadContents(requestFrom(ctx).principal, r.repo.r) {
		return nil
	}
	return &commitResolver{h: r.repo.h, repo: r.repo.r, sha: r.d.SHA}
}

// Ref is the branch or tag the deployment named, null for a SHA (or one
// deleted since).
func (r *deploymentResolver) Ref(ctx context.Context) (*refResolver, error) {
	if !mayReadContents(requestFrom(ctx).principal, r.repo.r) {
		return nil, nil
	}
	for _, full := range []string{"refs/heads/" + r.d.Ref, "refs/tags/" + r.d.Ref} {
		ref, err := r.repo.refNamed(full)
		if ref != nil || err != nil {
			return ref, err
		}
	}
	return nil, nil
}

// latestStatus loads the deployment's latest status once.
func (r *deploymentResolver) latestStatus(ctx context.Context) (*deployments.Status, error) {
	if !r.latestKnown {
		m, err := r.repo.h.Deployments.LatestStatuses(ctx, []int64{r.d.ID})
		if err != nil {
			return nil, err
		}
		r.latest, r.latestKnown = m[r.d.ID], true
	}
	return r.latest, nil
}

// LatestStatus is the deployment's latest status, null without one.
func (r *deploymentResolver) LatestStatus(ctx context.Context) (*deploymentStatusResolver, error) {
	st, err := r.latestStatus(ctx)
	if err != nil || st == nil {
		return nil, err
	}
	return &deploymentStatusResolver{deployment: r, st: st}, nil
}

// LatestEnvironment is the environment of the latest status, else the
// deployment's.
func (r *deploymentResolver) LatestEnvironment(ctx context.Context) (*string, error) {
	st, err := r.latestStatus(ctx)
	if err != nil {
		return nil, err
	}
	if st != nil {
		return &st.Environment, nil
	}
	return &r.d.Environment, nil
}

// State is the deployment's state from its latest status: ACTIVE for
// success, DESTROYED for a transient environment's inactive, PENDING
// without a status, else the status's state.
func (r *deploymentResolver) State(ctx context.Context) (*string, error) {
	st, err := r.latestStatus(ctx)
	if err != nil {
		return nil, err
	}
	state := "PENDING"
	switch {
	case st == nil:
	case st.State == deployments.StateSuccess:
		state = "ACTIVE"
	case st.State == deployments.StateInactive && r.d.Transient:
		state = "DESTROYED"
	default:
		state = strings.ToUpper(st.State)
	}
	return &state, nil
}

// Statuses are the deployment's statuses, newest first, as REST lists
// them.
func (r *deploymentResolver) Statuses(ctx context.Context, args connectionArgs) (*connection[*deploymentStatusResolver], error) {
	if err := args.checkCounted("statuses"); err != nil {
		return nil, err
	}
	all, _, err := r.repo.h.Deployments.Statuses(ctx, r.d.ID, deployments.MaxStatusesPerDeployment, 0)
	if err != nil {
		return nil, err
	}
	out := make([]*deploymentStatusResolver, len(all))
	for i, st := range all {
		out[i] = &deploymentStatusResolver{deployment: r, st: st}
	}
	return pageList(out, args, "statuses")
}

// deploymentStatusResolver resolves DeploymentStatus.
type deploymentStatusResolver struct {
	deployment *deploymentResolver
	st         *deployments.Status
}

func (r *deploymentStatusResolver) ID() gql.ID                      { return gql.ID(deployments.StatusNodeID(r.st.ID)) }
func (r *deploymentStatusResolver) CreatedAt() dateTime             { return at(r.st.CreatedAt) }
func (r *deploymentStatusResolver) UpdatedAt() dateTime             { return at(r.st.CreatedAt) }
func (r *deploymentStatusResolver) Description() *string            { return optional(r.st.Description) }
func (r *deploymentStatusResolver) Environment() *string            { return &r.st.Environment }
func (r *deploymentStatusResolver) State() string                   { return strings.ToUpper(r.st.State) }
func (r *deploymentStatusResolver) Deployment() *deploymentResolver { return r.deployment }
func (r *deploymentStatusResolver) EnvironmentURL() *uri            { return optionalURI(r.st.EnvironmentURL) }
func (r *deploymentStatusResolver) LogURL() *uri                    { return optionalURI(r.st.LogURL) }

// Creator is who posted the status.
func (r *deploymentStatusResolver) Creator() (*actorResolver, error) {
	if r.st.Creator == nil {
		return nil, notFound("The deployment status's creator no longer exists.")
	}
	return r.deployment.repo.h.actorOf(r.st.Creator), nil
}

func optionalURI(s string) *uri {
	if s == "" {
		return nil
	}
	u := uri(s)
	return &u
}

// environmentsOrder is the Environments input (the order of
// Repository.environments).
type environmentsOrder struct {
	Field     string
	Direction string
}

// environmentsArgs are the arguments of Repository.environments.
type environmentsArgs struct {
	connectionArgs
	Names                   []string
	OrderBy                 environmentsOrder
	PinnedEnvironmentFilter string
}

// Environments are the repository's environments (those named, when
// names is not empty) by name; forgeapi pins none, so ONLY lists none.
// Actions read of a permission-based token on a private repository, as
// REST's.
func (r *repositoryResolver) Environments(ctx context.Context, args environmentsArgs) (*connection[*environmentResolver], error) {
	if err := args.checkCounted("environments"); err != nil {
		return nil, err
	}
	if err := r.checkRead(ctx, "actions:read"); err != nil {
		return nil, err
	}
	all, _, err := r.h.Deployments.Environments(ctx, r.r.ID, maxDeployments, 0)
	if err != nil {
		return nil, err
	}
	var out []*environmentResolver
	for _, e := range all {
		named := len(args.Names) == 0 || slices.Contains(args.Names, e.Name)
		if named && args.PinnedEnvironmentFilter != "ONLY" {
			out = append(out, &environmentResolver{repo: r, e: e})
		}
	}
	if args.OrderBy.Direction == "DESC" {
		slices.Reverse(out)
	}
	return pageList(out, args.connectionArgs, "environments")
}

// environmentArgs are the arguments of Repository.environment.
type environmentArgs struct{ Name string }

// Environment is the repository's environment of that name, null when
// there is none.
func (r *repositoryResolver) Environment(ctx context.Context, args environmentArgs) (*environmentResolver, error) {
	if err := r.checkRead(ctx, "actions:read"); err != nil {
		return nil, err
	}
	e, err := r.h.Deployments.Environment(ctx, r.r.ID, args.Name)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &environmentResolver{repo: r, e: e}, nil
}

// environmentResolver resolves Environment.
type environmentResolver struct {
	repo *repositoryResolver
	e    *deployments.Environment
}

func (r *environmentResolver) ID() gql.ID         { return gql.ID(deployments.EnvironmentNodeID(r.e.ID)) }
func (r *environmentResolver) DatabaseID() *int32 { return databaseID(r.e.ID) }
func (r *environmentResolver) Name() string       { return r.e.Name }

// databaseID is a REST id as GraphQL's Int (null beyond its range).
func databaseID(id int64) *int32 {
	if id > 1<<31-1 {
		return nil
	}
	v := int32(id)
	return &v
}

// deploymentNode resolves the node id of a deployment (DE), deployment
// status (DES) or environment (EN) whose repository the caller sees and
// may read them of.
func (h *Handler) deploymentNode(ctx context.Context, typ string, id int64) (*nodeResolver, error) {
	var repoID int64
	var d *deployments.Deployment
	var st *deployments.Status
	var env *deployments.Environment
	var err error
	switch typ {
	case "DES":
		if st, err = h.Deployments.StatusByID(ctx, id); err != nil {
			return nil, err
		}
		id = st.DeploymentID
		fallthrough
	case "DE":
		if d, err = h.Deployments.ByID(ctx, id); err != nil {
			return nil, err
		}
		repoID = d.RepoID
	case "EN":
		if env, err = h.Deployments.EnvironmentByID(ctx, id); err != nil {
			return nil, err
		}
		repoID = env.RepoID
	}
	repo, err := repos.ByID(ctx, h.DB, repoID)
	if err != nil {
		return nil, err
	}
	r, err := h.visibleRepository(ctx, repo)
	if err != nil {
		return nil, err
	}
	permission := "deployments:read"
	if env != nil {
		permission = "actions:read"
	}
	if !mayRead(requestFrom(ctx).principal, repo, permission) {
		return nil, store.ErrNotFound
	}
	switch {
	case env != nil:
		return &nodeResolver{&environmentResolver{repo: r, e: env}}, nil
	case st != nil:
		return &nodeResolver{&deploymentStatusResolver{deployment: &deploymentResolver{repo: r, d: d}, st: st}}, nil
	}
	return &nodeResolver{&deploymentResolver{repo: r, d: d}}, nil
}
