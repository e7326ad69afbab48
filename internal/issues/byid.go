package issues

import (
	"context"

	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// The lookups by database id serve node ids (the node_id of the JSON
// objects): each returns the object with its repository, or
// store.ErrNotFound. Whether the caller may see the repository is the
// caller's to check.

// IssueByID is the issue (a pull request's issue row too) of id.
func (s *Service) IssueByID(ctx context.Context, id int64) (*Issue, *repos.Repository, error) {
	repo, err := s.repoOf(ctx, `SELECT repository_id FROM issues WHERE id = $1`, id)
	if err != nil {
		return nil, nil, err
	}
	is, err := scanIssue(s.DB.QueryRowContext(ctx, `SELECT `+issueColumns+` FROM issues i WHERE i.id = $1`, id))
	if err != nil {
		return nil, nil, store.Normalize(err)
	}
	return is, repo, newLoader(s.DB, repo).issues(ctx, []*Issue{is})
}

// LabelByID is the label of id.
func (s *Service) LabelByID(ctx context.Context, id int64) (*Label, *repos.Repository, error) {
	repo, err := s.repoOf(ctx, `SELECT repository_id FROM labels WHERE id = $1`, id)
	if err != nil {
		return nil, nil, err
	}
	lb, err := scanLabel(s.DB.QueryRowContext(ctx, `SELECT `+labelColumns+` FROM labels l WHERE l.id = $1`, id))
	return lb, repo, store.Normalize(err)
}

// MilestoneByID is the milestone of id with its counts.
func (s *Service) MilestoneByID(ctx context.Context, id int64) (*Milestone, *repos.Repository, error) {
	repo, err := s.repoOf(ctx, `SELECT repository_id FROM milestones WHERE id = $1`, id)
	if err != nil {
		return nil, nil, err
	}
	m, err := scanMilestone(s.DB.QueryRowContext(ctx, `SELECT `+milestoneColumns+` FROM milestones m WHERE m.id = $1`, id))
	if err != nil {
		return nil, nil, store.Normalize(err)
	}
	return m, repo, newLoader(s.DB, repo).completeMilestone(ctx, m)
}

// CommentByID is the issue comment of id.
func (s *Service) CommentByID(ctx context.Context, id int64) (*Comment, *repos.Repository, error) {
	repo, err := s.repoOf(ctx, `SELECT repository_id FROM issue_comments WHERE id = $1`, id)
	if err != nil {
		return nil, nil, err
	}
	c, err := commentByID(ctx, s.DB, repo, id)
	return c, repo, err
}

// repoOf is the repository whose id the query of id reads.
func (s *Service) repoOf(ctx context.Context, query string, id int64) (*repos.Repository, error) {
	var repoID int64
	if err := s.DB.QueryRowContext(ctx, query, id).Scan(&repoID); err != nil {
		return nil, store.Normalize(err)
	}
	return repos.ByID(ctx, s.DB, repoID)
}
