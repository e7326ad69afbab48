package repos

import "forgeapi/internal/wire"

// AppendJSON appends the repository object exactly as encoding/json
// renders it (TestRepositoryJSONAppender compares the two), without
// reflection: GET /repos/{owner}/{repo} is the hottest response.
// httpapi.WriteJSON uses it.
func (j *JSON) AppendJSON(b []byte) []byte {
	o := wire.Begin(b)
	j.appendUpToHooks(&o, true)
	o.String("svn_url", j.SvnURL)
	o.StringPtr("homepage", j.Homepage)
	o.StringPtr("language", j.Language)
	o.Int("forks_count", int64(j.ForksCount))
	o.Int("stargazers_count", int64(j.StargazersCount))
	o.Int("watchers_count", int64(j.WatchersCount))
	o.Int("size", int64(j.Size))
	o.String("default_branch", j.DefaultBranch)
	o.Int("open_issues_count", int64(j.OpenIssuesCount))
	o.Bool("is_template", j.IsTemplate)
	o.Strings("topics", j.Topics)
	for _, f := range [...]struct {
		name string
		v    bool
	}{
		{"has_issues", j.HasIssues}, {"has_projects", j.HasProjects}, {"has_wiki", j.HasWiki},
		{"has_pages", j.HasPages}, {"has_downloads", j.HasDownloads}, {"has_discussions", j.HasDiscussions},
		{"archived", j.Archived}, {"disabled", j.Disabled},
	} {
		o.Bool(f.name, f.v)
	}
	o.String("visibility", j.Visibility)
	if j.PushedAt == nil {
		o.Null("pushed_at")
	} else {
		o.Time("pushed_at", *j.PushedAt)
	}
	o.Time("created_at", j.CreatedAt)
	o.Time("updated_at", j.UpdatedAt)
	if p := j.Permissions; p != nil {
		o.Key("permissions")
		o.B = p.appendJSON(o.B)
	}
	o.Bool("allow_rebase_merge", j.AllowRebaseMerge)
	if j.TemplateRepository == nil {
		o.Null("template_repository")
	} else {
		o.Key("template_repository")
		o.B = j.TemplateRepository.AppendJSON(o.B)
	}
	if j.TempCloneToken != nil {
		o.String("temp_clone_token", *j.TempCloneToken)
	}
	o.Bool("allow_squash_merge", j.AllowSquashMerge)
	o.Bool("allow_auto_merge", j.AllowAutoMerge)
	o.Bool("delete_branch_on_merge", j.DeleteBranchOnMerge)
	o.Bool("allow_merge_commit", j.AllowMergeCommit)
	o.Bool("allow_update_branch", j.AllowUpdateBranch)
	o.Bool("use_squash_pr_title_as_default", j.UseSquashPRTitleAsDefault)
	o.String("squash_merge_commit_title", j.SquashMergeCommitTitle)
	o.String("squash_merge_commit_message", j.SquashMergeCommitMessage)
	o.String("merge_commit_title", j.MergeCommitTitle)
	o.String("merge_commit_message", j.MergeCommitMessage)
	o.Bool("allow_forking", j.AllowForking)
	o.Bool("web_commit_signoff_required", j.WebCommitSignoffRequired)
	o.Int("subscribers_count", int64(j.SubscribersCount))
	o.Int("network_count", int64(j.NetworkCount))
	if j.License == nil {
		o.Null("license")
	} else {
		o.Value("license", j.License)
	}
	o.Int("forks", int64(j.Forks))
	o.Int("open_issues", int64(j.OpenIssues))
	o.Int("watchers", int64(j.Watchers))
	if j.Organization != nil {
		o.Key("organization")
		o.B = j.Organization.AppendJSON(o.B)
	}
	if s := j.SecurityAndAnalysis; s != nil {
		o.Key("security_and_analysis")
		a := wire.Begin(o.B)
		a.Key("advanced_security")
		st := wire.Begin(a.B)
		st.String("status", s.AdvancedSecurity.Status)
		a.B = st.End()
		o.B = a.End()
	}
	for _, rel := range []struct {
		name string
		repo *JSON
	}{{"parent", j.Parent}, {"source", j.Source}} {
		if rel.repo != nil {
			o.Key(rel.name)
			o.B = rel.repo.AppendJSON(o.B)
		}
	}
	return o.End()
}

func (p *Permissions) appendJSON(b []byte) []byte {
	o := wire.Begin(b)
	o.Bool("admin", p.Admin)
	o.Bool("maintain", p.Maintain)
	o.Bool("push", p.Push)
	o.Bool("triage", p.Triage)
	o.Bool("pull", p.Pull)
	return o.End()
}

// appendUpToHooks appends the fields of the repository object from id to
// hooks_url, the whole simple-repository object; full adds the clone
// addresses among them (git_url, ssh_url, clone_url, mirror_url), which
// only the full object has.
func (j *JSON) appendUpToHooks(o *wire.Object, full bool) {
	o.Int("id", j.ID)
	o.String("node_id", j.NodeID)
	o.String("name", j.Name)
	o.String("full_name", j.FullName)
	o.Key("owner")
	o.B = j.Owner.AppendJSON(o.B)
	o.Bool("private", j.Private)
	o.String("html_url", j.HTMLURL)
	o.StringPtr("description", j.Description)
	o.Bool("fork", j.Fork)
	for _, f := range [...]struct{ name, v string }{
		{"url", j.URL}, {"archive_url", j.ArchiveURL}, {"assignees_url", j.AssigneesURL},
		{"blobs_url", j.BlobsURL}, {"branches_url", j.BranchesURL}, {"collaborators_url", j.CollaboratorsURL},
		{"comments_url", j.CommentsURL}, {"commits_url", j.CommitsURL}, {"compare_url", j.CompareURL},
		{"contents_url", j.ContentsURL}, {"contributors_url", j.ContributorsURL},
		{"deployments_url", j.DeploymentsURL}, {"downloads_url", j.DownloadsURL}, {"events_url", j.EventsURL},
		{"forks_url", j.ForksURL}, {"git_commits_url", j.GitCommitsURL}, {"git_refs_url", j.GitRefsURL},
		{"git_tags_url", j.GitTagsURL}, {"git_url", j.GitURL}, {"issue_comment_url", j.IssueCommentURL},
		{"issue_events_url", j.IssueEventsURL}, {"issues_url", j.IssuesURL}, {"keys_url", j.KeysURL},
		{"labels_url", j.LabelsURL}, {"languages_url", j.LanguagesURL}, {"merges_url", j.MergesURL},
		{"milestones_url", j.MilestonesURL}, {"notifications_url", j.NotificationsURL},
		{"pulls_url", j.PullsURL}, {"releases_url", j.ReleasesURL}, {"ssh_url", j.SSHURL},
		{"stargazers_url", j.StargazersURL}, {"statuses_url", j.StatusesURL},
		{"subscribers_url", j.SubscribersURL}, {"subscription_url", j.SubscriptionURL}, {"tags_url", j.TagsURL},
		{"teams_url", j.TeamsURL}, {"trees_url", j.TreesURL}, {"clone_url", j.CloneURL},
	} {
		if full || !cloneAddress(f.name) {
			o.String(f.name, f.v)
		}
	}
	if full {
		o.StringPtr("mirror_url", j.MirrorURL)
	}
	o.String("hooks_url", j.HooksURL)
}

// cloneAddress reports whether a field of the repository object is one
// of the clone addresses the simple-repository object leaves out.
func cloneAddress(name string) bool {
	return name == "git_url" || name == "ssh_url" || name == "clone_url"
}

// AppendJSON appends the simple-repository object as encoding/json would
// render a struct of its fields (httpapi.WriteJSON uses it).
func (s SimpleJSON) AppendJSON(b []byte) []byte {
	o := wire.Begin(b)
	s.full.appendUpToHooks(&o, false)
	return o.End()
}

// MarshalJSON implements json.Marshaler with AppendJSON, for objects
// that hold simple repositories.
func (s SimpleJSON) MarshalJSON() ([]byte, error) { return s.AppendJSON(nil), nil }
