package graphql

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/checks"
	"forgeapi/internal/git/gitread"
	"forgeapi/internal/repos"
	"forgeapi/internal/statuses"
	"forgeapi/internal/store"
)

// gitObjectID is the GitObjectID scalar: a git object's hex name.
type gitObjectID string

// ImplementsGraphQLType reports that gitObjectID is GitObjectID.
func (gitObjectID) ImplementsGraphQLType(name string) bool { return name == "GitObjectID" }

// UnmarshalGraphQL reads a GitObjectID argument.
func (g *gitObjectID) UnmarshalGraphQL(input any) error {
	s, ok := input.(string)
	if !ok {
		return fmt.Errorf("GitObjectID: want a string, got %T", input)
	}
	*g = gitObjectID(s)
	return nil
}

// commit is the commit sha of the pull request's base repository (which
// holds its head commits under refs/pull/), read when a field needs it.
func (r *pullRequestResolver) commit(sha string) *commitResolver {
	return &commitResolver{h: r.h, repo: r.p.Repo, sha: sha, page: r.page}
}

// Commits are the pull request's commits, oldest first (at most
// pulls.MaxCommits, as REST lists them); totalCount is REST's commits.
// The last alone (commits(last: 1), as gh asks for the checks) is the
// head commit, read from git only for the fields that need it.
func (r *pullRequestResolver) Commits(ctx context.Context, args connectionArgs) (*connection[*pullRequestCommitResolver], error) {
	if args.First == nil && args.Last == nil {
		return counted[*pullRequestCommitResolver]("commits", r.p.Commits), nil
	}
	if err := args.check("commits"); err != nil {
		return nil, err
	}
	start, end, err := args.window(r.p.Commits)
	if err != nil || start == end {
		return pageOf([]*pullRequestCommitResolver{}, start, r.p.Commits), err
	}
	if start == r.p.Commits-1 && end == r.p.Commits {
		return pageOf([]*pullRequestCommitResolver{{r.commit(r.p.HeadSHA)}}, start, r.p.Commits), nil
	}
	list, err := r.h.Pulls.Commits(ctx, r.p)
	if err != nil {
		return nil, err
	}
	start, end = min(start, len(list)), min(end, len(list))
	out := make([]*pullRequestCommitResolver, 0, end-start)
	for _, c := range list[start:end] {
		cr := r.commit(c.SHA)
		cr.once.Do(func() { cr.c = c })
		out = append(out, &pullRequestCommitResolver{cr})
	}
	return pageOf(out, start, r.p.Commits), nil
}

// pullRequestCommitResolver resolves PullRequestCommit.
type pullRequestCommitResolver struct{ commit *commitResolver }

func (r *pullRequestCommitResolver) Commit() *commitResolver { return r.commit }

// Files are the files the pull request changes, by path (at most
// pulls.MaxFiles).
func (r *pullRequestResolver) Files(ctx context.Context, args connectionArgs) (*connection[*changedFileResolver], error) {
	list, err := r.h.Pulls.Files(ctx, r.p)
	if err != nil {
		return nil, err
	}
	out := make([]*changedFileResolver, len(list))
	for i := range list {
		out[i] = &changedFileResolver{&list[i]}
	}
	return pageList(out, args, "files")
}

// changedFileResolver resolves PullRequestChangedFile.
type changedFileResolver struct{ f *gitread.FileDiff }

func (r *changedFileResolver) Path() string     { return r.f.Path }
func (r *changedFileResolver) Additions() int32 { return int32(r.f.Additions) }
func (r *changedFileResolver) Deletions() int32 { return int32(r.f.Deletions) }

// StatusCheckRollup is the head commit's statuses, null when it has none.
func (r *pullRequestResolver) StatusCheckRollup(ctx context.Context) (*statusCheckRollupResolver, error) {
	return r.commit(r.p.HeadSHA).StatusCheckRollup(ctx)
}

// MergeCommit is the commit that merged the pull request, null until
// merged.
func (r *pullRequestResolver) MergeCommit() *commitResolver {
	if r.p.MergedAt == nil || r.p.MergeCommitSHA == "" {
		return nil
	}
	return r.commit(r.p.MergeCommitSHA)
}

// PotentialMergeCommit is the test merge of an open pull request that
// merges cleanly, null otherwise.
func (r *pullRequestResolver) PotentialMergeCommit() *commitResolver {
	if r.p.MergedAt != nil || !r.p.Open() || r.p.Mergeable == nil || !*r.p.Mergeable || r.p.MergeCommitSHA == "" {
		return nil
	}
	return r.commit(r.p.MergeCommitSHA)
}

// commitResolver resolves Commit: its oid at once, the rest read from
// git once when asked.
type commitResolver struct {
	h    *Handler
	repo *repos.Repository
	sha  string
	// page, when set, loads the statuses of its pull requests' heads.
	page *pullPage

	once sync.Once
	c    gitread.Commit
	err  error
}

// load reads the commit once.
func (r *commitResolver) load() (gitread.Commit, error) {
	r.once.Do(func() {
		g, err := gitread.Open(r.h.Repos.GitDir(r.repo.ID))
		if err != nil {
			r.err = err
			return
		}
		defer g.Close()
		r.c, r.err = g.CommitObject(r.sha)
	})
	return r.c, r.err
}

func (r *commitResolver) Oid() gitObjectID       { return gitObjectID(r.sha) }
func (r *commitResolver) AbbreviatedOid() string { return r.sha[:min(7, len(r.sha))] }

// URL is the commit's web page.
func (r *commitResolver) URL(ctx context.Context) uri {
	return uri(repoWebURL(ctx, r.repo) + "/commit/" + r.sha)
}

// Message is the commit's whole message.
func (r *commitResolver) Message() (string, error) {
	c, err := r.load()
	return strings.TrimRight(c.Message, "\n"), err
}

// MessageHeadline is the first line of the message.
func (r *commitResolver) MessageHeadline() (string, error) {
	msg, err := r.Message()
	headline, _, _ := strings.Cut(msg, "\n")
	return headline, err
}

// MessageBody is the message after its headline and blank line.
func (r *commitResolver) MessageBody() (string, error) {
	msg, err := r.Message()
	_, body, _ := strings.Cut(msg, "\n")
	return strings.TrimLeft(body, "\n"), err
}

// AuthoredDate is the author's date.
func (r *commitResolver) AuthoredDate() (dateTime, error) {
	c, err := r.load()
	return at(c.AuthorDate), err
}

// CommittedDate is the committer's date.
func (r *commitResolver) CommittedDate() (dateTime, error) {
	c, err := r.load()
	return at(c.CommitterDate), err
}

// Authors are the commit's author (forgeapi reads no co-authors).
func (r *commitResolver) Authors(ctx context.Context, args connectionArgs) (*connection[*gitActorResolver], error) {
	c, err := r.load()
	if err != nil {
		return nil, err
	}
	return pageList([]*gitActorResolver{{h: r.h, name: c.AuthorName, email: c.AuthorEmail, date: c.AuthorDate}}, args, "authors")
}

// StatusCheckRollup is the latest status of each context of the commit
// and the latest check run of each name of its suites, null when it has
// none.
func (r *commitResolver) StatusCheckRollup(ctx context.Context) (*statusCheckRollupResolver, error) {
	var latest []*statuses.Status
	var runs []*checks.Run
	var err error
	paged := false
	if r.page != nil {
		latest, runs, paged, err = r.page.latestChecks(ctx, r.sha)
	}
	if !paged && err == nil {
		latest, err = (&statuses.Service{DB: r.h.DB}).Latest(ctx, r.repo.ID, r.sha)
		if err == nil {
			var all map[string][]*checks.Run
			all, err = checks.LatestRunsOf(ctx, r.h.DB, r.repo.ID, []string{r.sha})
			runs = all[r.sha]
		}
	}
	if err != nil || len(latest) == 0 && len(runs) == 0 {
		return nil, err
	}
	return &statusCheckRollupResolver{h: r.h, repo: r.repo, latest: latest, runs: runs}, nil
}

// CheckSuites are the commit's check suites, oldest first, narrowed by
// filterBy's appId and checkName.
func (r *commitResolver) CheckSuites(ctx context.Context, args struct {
	connectionArgs
	FilterBy *checkSuiteFilter
}) (*connection[*checkSuiteResolver], error) {
	var appID int64
	name := ""
	if f := args.FilterBy; f != nil {
		if f.AppID != nil {
			appID = int64(*f.AppID)
		}
		if f.CheckName != nil {
			name = *f.CheckName
		}
	}
	list, err := checks.SuitesOf(ctx, r.h.DB, r.repo.ID, r.sha, appID, name)
	if err != nil {
		return nil, err
	}
	out := make([]*checkSuiteResolver, len(list))
	for i, s := range list {
		out[i] = &checkSuiteResolver{h: r.h, repo: r.repo, suite: s}
	}
	return pageList(out, args.connectionArgs, "checkSuites")
}

// checkSuiteFilter is the CheckSuiteFilter input.
type checkSuiteFilter struct {
	AppID     *int32
	CheckName *string
}

// gitActorResolver resolves GitActor: a commit's author or committer.
type gitActorResolver struct {
	h           *Handler
	name, email string
	date        time.Time // zero when not known
}

func (r *gitActorResolver) Name() *string  { return optional(r.name) }
func (r *gitActorResolver) Email() *string { return optional(r.email) }

// User is the user of the author's email address, null when none.
func (r *gitActorResolver) User(ctx context.Context) (*userResolver, error) {
	a, err := accounts.ByEmail(ctx, r.h.DB, r.email)
	if errors.Is(err, store.ErrNotFound) || err == nil && a.IsOrg() {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	return &userResolver{r.h.account(a)}, nil
}

// statusCheckRollupResolver resolves StatusCheckRollup over a commit's
// latest statuses and latest check runs.
type statusCheckRollupResolver struct {
	h      *Handler
	repo   *repos.Repository
	latest []*statuses.Status
	runs   []*checks.Run
}

// State counts both: FAILURE when a status failed or erred or a run
// concluded other than success, neutral or skipped; PENDING while a
// status is pending or a run is not completed; SUCCESS otherwise.
func (r *statusCheckRollupResolver) State() string {
	state := statuses.StateSuccess
	if len(r.latest) > 0 {
		state = statuses.Combined(r.latest)
	}
	for _, run := range r.runs {
		if state == statuses.StateFailure {
			break
		}
		state = worse(state, runState(run))
	}
	return strings.ToUpper(state)
}

// Contexts are the latest check run of each name, by name, then the
// latest status of each context, by context.
func (r *statusCheckRollupResolver) Contexts(args connectionArgs) (*connection[*checkContextResolver], error) {
	out := make([]*checkContextResolver, 0, len(r.runs)+len(r.latest))
	for _, run := range r.runs {
		out = append(out, &checkContextResolver{run: &checkRunResolver{h: r.h, repo: r.repo, run: run}})
	}
	for _, st := range r.latest {
		out = append(out, &checkContextResolver{status: &statusContextResolver{st}})
	}
	return pageList(out, args, "contexts")
}

// checkContextResolver resolves the StatusCheckRollupContext union: a
// StatusContext or a CheckRun.
type checkContextResolver struct {
	status *statusContextResolver
	run    *checkRunResolver
}

func (r *checkContextResolver) ToStatusContext() (*statusContextResolver, bool) {
	return r.status, r.status != nil
}
func (r *checkContextResolver) ToCheckRun() (*checkRunResolver, bool) { return r.run, r.run != nil }

// statusContextResolver resolves StatusContext.
type statusContextResolver struct{ st *statuses.Status }

func (r *statusContextResolver) Context() string      { return r.st.Context }
func (r *statusContextResolver) State() string        { return strings.ToUpper(r.st.State) }
func (r *statusContextResolver) Description() *string { return optional(r.st.Description) }
func (r *statusContextResolver) CreatedAt() dateTime  { return at(r.st.CreatedAt) }

// TargetURL is the status's link, null when none.
func (r *statusContextResolver) TargetURL() *uri {
	if r.st.TargetURL == "" {
		return nil
	}
	u := uri(r.st.TargetURL)
	return &u
}

// requiredArgs are the arguments of isRequired.
type requiredArgs struct {
	PullRequestID     *string
	PullRequestNumber *int32
}

// IsRequired is false: forgeapi requires no status check before a merge.
func (r *statusContextResolver) IsRequired(args requiredArgs) bool { return false }

// checkRunResolver resolves CheckRun.
type checkRunResolver struct {
	h    *Handler
	repo *repos.Repository
	run  *checks.Run
}

func (r *checkRunResolver) Name() string           { return r.run.Name }
func (r *checkRunResolver) Status() string         { return strings.ToUpper(r.run.Status) }
func (r *checkRunResolver) StartedAt() *dateTime   { return optionalTime(r.run.StartedAt) }
func (r *checkRunResolver) CompletedAt() *dateTime { return optionalTime(r.run.CompletedAt) }

// Conclusion is the run's conclusion, null until it completes.
func (r *checkRunResolver) Conclusion() *string {
	if r.run.Conclusion == nil {
		return nil
	}
	c := strings.ToUpper(*r.run.Conclusion)
	return &c
}

// DetailsURL is the app's link, else the run's page.
func (r *checkRunResolver) DetailsURL(ctx context.Context) *uri {
	u := uri(r.run.DetailsURL)
	if u == "" {
		u = uri(repoWebURL(ctx, r.repo) + r.run.HTMLPath())
	}
	return &u
}

// IsRequired is false: forgeapi's merges require no check yet.
func (r *checkRunResolver) IsRequired(args requiredArgs) bool { return false }

// CheckSuite is the run's suite.
func (r *checkRunResolver) CheckSuite(ctx context.Context) (*checkSuiteResolver, error) {
	s, err := checks.SuiteByID(ctx, r.h.DB, r.repo.ID, r.run.SuiteID)
	if err != nil {
		return nil, err
	}
	return &checkSuiteResolver{h: r.h, repo: r.repo, suite: s}, nil
}

// checkSuiteResolver resolves CheckSuite.
type checkSuiteResolver struct {
	h     *Handler
	repo  *repos.Repository
	suite *checks.Suite
}

// WorkflowRun is null: forgeapi runs no workflows.
func (*checkSuiteResolver) WorkflowRun() *workflowRunResolver { return nil }
func (r *checkSuiteResolver) Status() string                  { return strings.ToUpper(r.suite.Status) }

// Conclusion is the suite's conclusion, null until it completes.
func (r *checkSuiteResolver) Conclusion() *string {
	if r.suite.Conclusion == nil {
		return nil
	}
	c := strings.ToUpper(*r.suite.Conclusion)
	return &c
}

// CheckRuns are the latest run of each name in the suite, newest first,
// narrowed by filterBy's checkName, status and conclusions (and appId,
// the suite's own app or none).
func (r *checkSuiteResolver) CheckRuns(ctx context.Context, args struct {
	connectionArgs
	FilterBy *checkRunFilter
}) (*connection[*checkRunResolver], error) {
	runs, err := checks.LatestRunsOfSuite(ctx, r.h.DB, r.suite.ID)
	if err != nil {
		return nil, err
	}
	out := []*checkRunResolver{}
	for _, run := range runs {
		if args.FilterBy.selects(run) {
			out = append(out, &checkRunResolver{h: r.h, repo: r.repo, run: run})
		}
	}
	return pageList(out, args.connectionArgs, "checkRuns")
}

// checkRunFilter is the CheckRunFilter input (checkType is ignored:
// every run forgeapi has is of the type ALL).
type checkRunFilter struct {
	AppID       *int32
	CheckName   *string
	CheckType   *string
	Conclusions *[]string
	Status      *string
	Statuses    *[]string
}

// selects reports whether the run passes the filter (nil passes all).
func (f *checkRunFilter) selects(run *checks.Run) bool {
	if f == nil {
		return true
	}
	status, conclusion := strings.ToUpper(run.Status), ""
	if run.Conclusion != nil {
		conclusion = strings.ToUpper(*run.Conclusion)
	}
	return (f.AppID == nil || int64(*f.AppID) == run.AppID) && (f.CheckName == nil || *f.CheckName == run.Name) &&
		(f.Status == nil || *f.Status == status) && (f.Statuses == nil || slices.Contains(*f.Statuses, status)) &&
		(f.Conclusions == nil || slices.Contains(*f.Conclusions, conclusion))
}

// runState is a run's part of the rollup state: pending until it
// completes, success for success, neutral and skipped, else failure.
func runState(run *checks.Run) string {
	if !run.Completed() || run.Conclusion == nil {
		return statuses.StatePending
	}
	switch *run.Conclusion {
	case checks.ConclusionSuccess, checks.ConclusionNeutral, checks.ConclusionSkipped:
		return statuses.StateSuccess
	}
	return statuses.StateFailure
}

// worse is the worse of two rollup states: failure, pending, success.
func worse(a, b string) string {
	rank := map[string]int{statuses.StateSuccess: 0, statuses.StatePending: 1, statuses.StateFailure: 2}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

// workflowRunResolver resolves WorkflowRun, of which forgeapi has none.
type workflowRunResolver struct{}

func (*workflowRunResolver) Workflow() *namedResolver { return nil }

// repoWebURL is the web page of the repository.
func repoWebURL(ctx context.Context, repo *repos.Repository) string {
	return string((&repositoryResolver{r: repo}).URL(ctx))
}
