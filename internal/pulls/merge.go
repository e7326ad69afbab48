package pulls

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/git/githttp"
	"forgeapi/internal/githost"
	"forgeapi/internal/issues"
	"forgeapi/internal/protection"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// The merge methods.
const (
	MethodMerge  = "merge"
	MethodSquash = "squash"
	MethodRebase = "rebase"
)

// MergeRequest is what merging asks for: Method (default merge), the
// commit's title and message (defaults as on the platform), and SHA, when
// set, the head commit the caller reviewed.
type MergeRequest struct {
	Method, Title, Message, SHA string
	HasTitle, HasMessage        bool // whether Title and Message were given
}

// Merged is the answer of a merge.
type Merged struct {
	SHA string
}

// notMergeable is the platform's 405 of a pull request that cannot be
// merged.
func notMergeable(msg string) error { return apierr.New(http.StatusMethodNotAllowed, "%s", msg) }

// MergeIntent is the kind of the githost.PushIntent of a merge: the
// server push that moves the base branch to the merge carries it, its
// subject the pull request's number, so that whoever records the push
// (the request, or the push recovery after a crash) records the pull
// request merged (RecordMerge) in the push's transaction.
const MergeIntent = protection.MergeIntent

// Merge merges an open pull request into its base branch with real git:
// a merge commit (parents base and head), a squash (one commit, parent
// base, by the pull request's author) or a rebase (each commit replayed
// on the base keeping its author), committed by merger. The base branch
// moves through githost.ServerPushWith (push events, rulesets and
// migration locks apply) with a MergeIntent: the transaction that records
// the push also marks the pull request merged and closed with its own
// merge commit and emits pull_request closed (merged true), so that
// after a crash the merge is either not visible at all or visible whole
// (the push recovery records it). 405 when it is closed or conflicts,
// when the base moved meanwhile ("Base branch was modified") and while an
// earlier merge of it is unrecorded ("Merge already in progress": under
// way, or cut short by a crash and waiting for the push recovery; see
// checkNotMerging); 409 when SHA is not the head.
func (s *Service) Merge(ctx context.Context, repo *repos.Repository, merger *accounts.Account, who person, number int64, m MergeRequest) (*Merged, error) {
	p, err := byNumber(ctx, s.DB, repo, number)
	if err != nil {
		return nil, err
	}
	if !p.Open() || p.MergedAt != nil {
		return nil, notMergeable("Pull Request is not mergeable")
	}
	git := gitDir(s.Repos.GitDir(repo.ID))
	baseTip, ok, err := git.commit(ctx, "refs/heads/"+p.BaseRef)
	if err != nil {
		return nil, err
	} else if !ok {
		return nil, notMergeable("Base branch was deleted")
	}
	intent := githost.PushIntent{Kind: MergeIntent, Subject: strconv.FormatInt(number, 10)}
	if err := s.checkNotMerging(ctx, repo, number, intent); err != nil {
		return nil, err
	}
	if m.SHA != "" && m.SHA != p.HeadSHA {
		return nil, apierr.New(http.StatusConflict, "Head branch was modified. Review and try the merge again.")
	}
	headRef := pullRef(number, "head")
	if sha, ok, err := git.commit(ctx, headRef); err != nil {
		return nil, err
	} else if !ok || sha != p.HeadSHA {
		return nil, apierr.New(http.StatusConflict, "Head branch was modified. Review and try the merge again.")
	}
	if err := s.checkProtection(ctx, repo, merger, p, m.Method); err != nil {
		return nil, err
	}
	sha, err := s.mergeCommit(ctx, git, p, baseTip, merger, who, m)
	if errors.Is(err, errConflict) {
		return nil, notMergeable("Pull Request is not mergeable")
	} else if err != nil {
		return nil, err
	}
	update := githttp.RefUpdate{Ref: "refs/heads/" + p.BaseRef, OldSHA: baseTip, NewSHA: sha}
	err = s.Git.ServerPushWith(ctx, repo, merger, []githttp.RefUpdate{update}, intent)
	if errors.Is(err, githost.ErrRefMoved) {
		return nil, notMergeable("Base branch was modified. Review and try the merge again.")
	} else if err != nil {
		return nil, err
	}
	return &Merged{SHA: sha}, nil
}

// checkNotMerging refuses to merge a pull request that another merge
// merged or is merging, called once the base's tip was read: another
// merge that moved the base before that read logged its push before the
// move and deletes that entry in the transaction that records the pull
// request merged, so it is seen here either pending ("Merge already in
// progress") or done ("not mergeable"), in that order; one that moves the
// base later makes this merge's push fail ("Base branch was modified").
// So a pull request's commits never land on the base twice.
func (s *Service) checkNotMerging(ctx context.Context, repo *repos.Repository, number int64, intent githost.PushIntent) error {
	if pending, err := s.Git.IntentPending(ctx, repo.ID, intent); err != nil {
		return err
	} else if pending {
		return notMergeable("Merge already in progress")
	}
	p, err := byNumber(ctx, s.DB, repo, number)
	if err != nil {
		return err
	}
	if !p.Open() || p.MergedAt != nil {
		return notMergeable("Pull Request is not mergeable")
	}
	return nil
}

// RecordMerge is the githost.IntentHandler of MergeIntent: it marks the
// pull request whose number is subject merged by the pusher at the
// push's new commit into the base commit the push moved from, in the
// push's transaction (see markMerged). A pull request that is gone is
// left alone: the push is recorded all the same.
func (s *Service) RecordMerge(ctx context.Context, tx *store.Tx, push *githost.Push, subject string) error {
	number, err := strconv.ParseInt(subject, 10, 64)
	if err != nil || len(push.Updates) != 1 {
		return fmt.Errorf("merge intent %q of %d updates: not a merge", subject, len(push.Updates))
	}
	u := push.Updates[0]
	return s.markMerged(ctx, tx, push.Repo, push.Pusher, number, u.NewSHA, u.OldSHA)
}

// markMerged marks the pull request merged by merger at sha into the
// base commit baseTip (which its commits and files are read against from
// then on), closes it and emits pull_request closed, in tx, with the
// merged and closed events of the pull request's history; nothing when
// the pull request is merged already, or gone.
func (s *Service) markMerged(ctx context.Context, tx *store.Tx, repo *repos.Repository, merger *accounts.Account, number int64, sha, baseTip string) error {
	p, err := byNumber(ctx, tx, repo, number)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil || p.MergedAt != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE pull_requests SET merged_at = $1, merged_by_id = $2, merge_commit_sha = $3,
		base_sha = $4, mergeable = NULL, mergeable_state = 'unknown', check_due = FALSE, lease_owner = NULL, lease_until = NULL
		WHERE id = $5`, tx.Now(), merger.ID, sha, baseTip, p.ID); err != nil {
		return store.Normalize(err)
	}
	if err := issues.MarkMerged(ctx, tx, p.Issue, merger, sha); err != nil {
		return err
	}
	closed := issues.StateClosed
	if _, _, err := issues.SetFields(ctx, tx, repo, merger, number, issues.Changes{State: &closed}); err != nil {
		return err
	}
	if err := issues.RecordEvent(ctx, tx, p.Issue, merger, issues.EventRecord{Event: "closed", CommitID: sha}); err != nil {
		return err
	}
	if p, err = byNumber(ctx, tx, repo, number); err != nil {
		return err
	}
	return s.emit(ctx, tx, merger, "closed", p, nil)
}

// mergeCommit writes the commit the base branch moves to.
func (s *Service) mergeCommit(ctx context.Context, git gitDir, p *PullRequest, baseTip string, merger *accounts.Account, who person, m MergeRequest) (string, error) {
	who.When = time.Now()
	switch m.Method {
	case MethodSquash:
		tree, err := git.mergeTree(ctx, baseTip, p.HeadSHA)
		if err != nil {
			return "", err
		}
		title, message, err := s.squashMessage(ctx, git, p, baseTip, m)
		if err != nil {
			return "", err
		}
		author := who
		if p.Issue.User != nil {
			author = person{Name: nameOf(p.Issue.User), Email: noreply(p.Issue.User), When: who.When}
		}
		return git.commitTree(ctx, tree, []string{baseTip}, joinMessage(title, message), author, who, s.webFlow())
	case MethodRebase:
		return s.rebase(ctx, git, p, baseTip, who)
	default:
		tree, err := git.mergeTree(ctx, baseTip, p.HeadSHA)
		if err != nil {
			return "", err
		}
		title := "Merge pull request #" + itoa(p.Number()) + " from " + headLabel(p, "/")
		message := p.Issue.Title
		if m.HasTitle {
			title = m.Title
		}
		if m.HasMessage {
			message = m.Message
		}
		return git.commitTree(ctx, tree, []string{baseTip, p.HeadSHA}, joinMessage(title, message), who, who, s.webFlow())
	}
}

// squashMessage is the title (the pull request's title and number) and
// message (the commits' messages) of a squash, unless given.
func (s *Service) squashMessage(ctx context.Context, git gitDir, p *PullRequest, baseTip string, m MergeRequest) (string, string, error) {
	title := p.Issue.Title + " (#" + itoa(p.Number()) + ")"
	if m.HasTitle {
		title = m.Title
	}
	if m.HasMessage {
		return title, m.Message, nil
	}
	list, err := git.between(ctx, baseTip, p.HeadSHA)
	if err != nil {
		return "", "", err
	}
	var b strings.Builder
	for _, sha := range list {
		c, err := git.readCommit(ctx, sha)
		if err != nil {
			return "", "", err
		}
		fmt.Fprintf(&b, "* %s\n", strings.TrimSpace(c.Message))
	}
	return title, strings.TrimSpace(b.String()), nil
}

// rebase replays the pull request's commits on baseTip, oldest first,
// each keeping its author and message, committed by who. Each commit is
// merged with its parent as the merge base: ours is a commit of the
// current tip's tree whose only parent is the replayed commit's parent
// (git 2.39's merge-tree has no --merge-base). A merge commit among them
// cannot be rebased (405).
func (s *Service) rebase(ctx context.Context, git gitDir, p *PullRequest, baseTip string, who person) (string, error) {
	list, err := git.between(ctx, baseTip, p.HeadSHA)
	if err != nil {
		return "", err
	}
	tip := baseTip
	for _, sha := range list {
		c, err := git.readCommit(ctx, sha)
		if err != nil {
			return "", err
		}
		if len(c.Parents) != 1 {
			return "", notMergeable("This branch can't be rebased")
		}
		tree := c.Tree
		if c.Parents[0] != tip {
			tipTree, err := git.run(ctx, nil, "", "rev-parse", tip+"^{tree}")
			if err != nil {
				return "", err
			}
			ours, err := git.commitTree(ctx, tipTree, c.Parents, "rebase", who, who, nil) // a step of the rebase, never on a branch
			if err != nil {
				return "", err
			}
			if tree, err = git.mergeTree(ctx, ours, sha); err != nil {
				return "", err
			}
		}
		if tip, err = git.commitTree(ctx, tree, []string{tip}, c.Message, c.Author, who, s.webFlow()); err != nil {
			return "", err
		}
	}
	return tip, nil
}

func joinMessage(title, message string) string {
	if message == "" {
		return title + "\n"
	}
	return title + "\n\n" + message + "\n"
}

// headLabel is OWNER{sep}BRANCH of the head.
func headLabel(p *PullRequest, sep string) string {
	owner := "unknown"
	if p.HeadRepo != nil {
		owner = p.HeadRepo.Owner.Login
	}
	return owner + sep + p.HeadRef
}

func nameOf(a *accounts.Account) string {
	if a.Name != "" {
		return a.Name
	}
	return a.Login
}

func noreply(a *accounts.Account) string { return a.Login + "@users.noreply.forgeapi.local" }

// Identity is the account as a merge's committer: its name (the login
// when it has none) and primary email address (the noreply address when
// none).
func Identity(ctx context.Context, q store.Q, a *accounts.Account) (person, error) {
	id := person{Name: nameOf(a), Email: noreply(a)}
	emails, err := accounts.Emails(ctx, q, a.ID, false)
	if err != nil {
		return id, err
	}
	if len(emails) > 0 {
		id.Email = emails[0].Address
	}
	return id, nil
}
