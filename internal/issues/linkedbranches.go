package issues

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"

	"forgeapi/internal/events"
	"forgeapi/internal/store"
)

// LinkedBranchIntent is the kind of the githost push intent of a server
// push that creates a branch linked to an issue (GraphQL's
// createLinkedBranch): its subject is the issue's id, and its handler
// (RecordLinkedBranch, registered at start) records the link in the
// transaction that records the push, so that a created branch and its
// link are made together, or, after a crash, by the push recovery.
const LinkedBranchIntent = "issues.linked_branch"

// LinkedBranch is a branch linked to an issue: the branch named Branch
// (without refs/heads/) of the repository RepoID, which may be another
// repository than the issue's.
type LinkedBranch struct {
	ID        int64
	IssueID   int64
	RepoID    int64
	Branch    string
	CreatedAt time.Time
}

// linkedBranchColumns are the columns scanLinkedBranch reads.
const linkedBranchColumns = `id, issue_id, repository_id, branch, created_at`

func scanLinkedBranch(row interface{ Scan(...any) error }) (*LinkedBranch, error) {
	var b LinkedBranch
	if err := row.Scan(&b.ID, &b.IssueID, &b.RepoID, &b.Branch, &b.CreatedAt); err != nil {
		return nil, store.Normalize(err)
	}
	b.CreatedAt = b.CreatedAt.UTC()
	return &b, nil
}

// RecordLinkedBranch links the branch (a full refs/heads/ name) of the
// repository repoID to the issue whose id is subject, in tx: the
// LinkedBranchIntent's work. A link that exists already stays as it is;
// an issue deleted meanwhile links nothing.
func RecordLinkedBranch(ctx context.Context, tx *store.Tx, repoID int64, ref, subject string) error {
	issueID, err := strconv.ParseInt(subject, 10, 64)
	if err != nil {
		return fmt.Errorf("linked branch intent %q: not an issue id", subject)
	}
	branch, ok := strings.CutPrefix(ref, "refs/heads/")
	if !ok {
		return fmt.Errorf("linked branch intent: %s is not a branch", ref)
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO issue_linked_branches (issue_id, repository_id, branch, created_at)
		SELECT id, $2, $3, $4 FROM issues WHERE id = $1
		ON CONFLICT (issue_id, repository_id, branch) DO NOTHING`, issueID, repoID, branch, tx.Now())
	return store.Normalize(err)
}

// RenameLinkedBranches moves the links of the repository's branch from to
// its new name to, in tx (the transaction that records the rename), so
// that a renamed branch stays linked.
func RenameLinkedBranches(ctx context.Context, tx *store.Tx, repoID int64, from, to string) error {
	_, err := tx.ExecContext(ctx, `UPDATE issue_linked_branches SET branch = $3 WHERE repository_id = $1 AND branch = $2`,
		repoID, from, to)
	return store.Normalize(err)
}

// LinkedBranches are the branches linked to the issue of id, first
// linked first.
func (s *Service) LinkedBranches(ctx context.Context, issueID int64) ([]*LinkedBranch, error) {
	rows, err := s.DB.QueryContext(ctx, `SELECT `+linkedBranchColumns+` FROM issue_linked_branches WHERE issue_id = $1 ORDER BY id`, issueID)
	if err != nil {
		return nil, store.Normalize(err)
	}
	defer rows.Close()
	var out []*LinkedBranch
	for rows.Next() {
		b, err := scanLinkedBranch(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, store.Normalize(rows.Err())
}

// LinkedBranchByID is the link of id; store.ErrNotFound when there is
// none.
func (s *Service) LinkedBranchByID(ctx context.Context, id int64) (*LinkedBranch, error) {
	return scanLinkedBranch(s.DB.QueryRowContext(ctx, `SELECT `+linkedBranchColumns+` FROM issue_linked_branches WHERE id = $1`, id))
}

// LinkedBranchOf is the link of the issue to the repository's branch;
// store.ErrNotFound when there is none.
func (s *Service) LinkedBranchOf(ctx context.Context, issueID, repoID int64, branch string) (*LinkedBranch, error) {
	return scanLinkedBranch(s.DB.QueryRowContext(ctx, `SELECT `+linkedBranchColumns+` FROM issue_linked_branches
		WHERE issue_id = $1 AND repository_id = $2 AND branch = $3`, issueID, repoID, branch))
}

// UnlinkBranch deletes the link of id, leaving its branch as it is;
// store.ErrNotFound when there is none. The caller checks access.
func (s *Service) UnlinkBranch(ctx context.Context, id int64) error {
	res, err := s.DB.ExecContext(ctx, `DELETE FROM issue_linked_branches WHERE id = $1`, id)
	if err != nil {
		return store.Normalize(err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return store.ErrNotFound
	}
	return nil
}

// LinkedBranchName is the name the platform gives the branch linked to
// an issue when none is asked: the issue's number and its title in
// lower case, each run of other characters than ASCII letters and
// digits one hyphen ("12-fix-the-login-page").
func LinkedBranchName(number int64, title string) string {
	var b strings.Builder
	b.WriteString(strconv.FormatInt(number, 10))
	hyphen := true
	for _, r := range strings.ToLower(title) {
		if r <= unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			if hyphen {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			hyphen = false
		} else {
			hyphen = true
		}
	}
	return b.String()
}

// LinkedBranchSink is the events sink that unlinks a deleted branch: a
// DeleteEvent of a branch (a git push or the API's deletion, in the
// push's transaction) drops the links to it.
type LinkedBranchSink struct{}

// HandleEvent handles delete events of branches and ignores the others.
func (LinkedBranchSink) HandleEvent(ctx context.Context, tx *store.Tx, e *events.Event) error {
	if e.HookEvent != "delete" || e.Repo == nil || e.HookPayload["ref_type"] != "branch" {
		return nil
	}
	branch, _ := e.HookPayload["ref"].(string)
	_, err := tx.ExecContext(ctx, `DELETE FROM issue_linked_branches WHERE repository_id = $1 AND branch = $2`, e.Repo.ID, branch)
	return store.Normalize(err)
}
