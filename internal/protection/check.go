package protection

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"forgeapi/internal/access"
	"forgeapi/internal/accounts"
	"forgeapi/internal/apps"
	"forgeapi/internal/auth"
	"forgeapi/internal/checks"
	"forgeapi/internal/git/githttp"
	"forgeapi/internal/githost"
	"forgeapi/internal/repos"
	"forgeapi/internal/sigverify"
	"forgeapi/internal/store"
)

// MergeIntent is the kind of the githost.PushIntent that a pull
// request's merge carries (pulls.MergeIntent): the merge checked the
// reviews and status checks the base's protection requires (MergeBlock),
// so its push is not refused for them.
const MergeIntent = "pulls.merge"

// The reasons of a refusal, as the platform prints them after the GH006
// line.
const (
	reasonPullRequest = "Changes must be made through a pull request."
	reasonForcePush   = "Cannot force-push to this branch"
	reasonDeletion    = "Cannot delete this protected branch"
	reasonLocked      = "Cannot change this locked branch"
	reasonLinear      = "This branch must not contain merge commits."
	reasonSignatures  = "Commits must have verified signatures."
	reasonRestricted  = "You're not authorized to push to this branch. Visit https://docs.github.com/articles/about-protected-branches/ for more information."
)

// BranchRenameIntent is the intent of the server push that renames a
// branch (POST .../branches/{branch}/rename): CheckPush lets it through,
// its handler having checked the admin rights that renaming a protected
// branch needs, and the protection moving to the new name with it.
const BranchRenameIntent = "branch_rename"

// CheckPush is the githost.PushCheck of branch protection: each update of
// a protected branch is checked against its protection, and the first
// that breaks it refuses the whole push with the platform's lines
// ("GH006: Protected branch update failed for refs/heads/main." then one
// line per reason); an API write (a server push) gets a 409 with the
// reasons. Force pushes and deletions are refused unless allowed, for
// everyone; the rest (the lock, push restrictions, linear history,
// required reviews, which refuse direct pushes, and required status
// checks, which the pushed commit must pass) binds administrators only
// with enforce_admins. A pull request's merge (MergeIntent) is not
// refused for reviews and status checks: the merge checked them. A push
// that updates no protected branch costs one indexed query per branch.
func (s *Service) CheckPush(ctx context.Context, push *githost.Push) error {
	if push.Intent.Kind == BranchRenameIntent {
		return nil // its admin rights were checked, and its protection moves with it
	}
	for _, u := range push.Updates {
		if !u.IsBranch() {
			continue
		}
		p, err := Of(ctx, s.DB, push.Repo.ID, u.ShortName())
		if errors.Is(err, ErrNotProtected) {
			continue
		} else if err != nil {
			return err
		}
		reasons, err := s.refusals(ctx, push, u, p)
		if err != nil {
			return err
		}
		if len(reasons) > 0 {
			return refusal(u.Ref, reasons)
		}
	}
	return nil
}

// refusal is the push's refusal for the reasons, in the platform's
// current form: the GH006 line, then each reason after an empty line as
// "- reason".
func refusal(ref string, reasons []string) error {
	lines := []string{"error: GH006: Protected branch update failed for " + ref + "."}
	for _, r := range reasons {
		lines = append(lines, "", "- "+r)
	}
	return &githttp.RefusalError{Message: strings.Join(lines, "\n"), APIMessage: strings.Join(reasons, "\n")}
}

// refusals are the reasons the protection refuses the update.
func (s *Service) refusals(ctx context.Context, push *githost.Push, u githttp.RefUpdate, p *Protection) ([]string, error) {
	st := p.Settings
	if u.IsDelete() {
		if !st.Deletions {
			return []string{reasonDeletion}, nil
		}
		return nil, nil
	}
	var out []string
	if !u.IsCreate() && !st.ForcePushes {
		ff, err := push.Inspect.IsAncestor(ctx, u.OldSHA, u.NewSHA)
		if err != nil {
			return nil, err
		}
		if !ff {
			out = append(out, reasonForcePush)
		}
	}
	bound, err := s.binds(ctx, p, push.Repo, push.Pusher)
	if err != nil || !bound {
		return out, err
	}
	more, err := s.boundRefusals(ctx, push, u, p)
	return append(out, more...), err
}

// binds reports whether the protection binds the account: everyone but
// the repository's administrators, and them too with enforce_admins.
func (s *Service) binds(ctx context.Context, p *Protection, repo *repos.Repository, who *accounts.Account) (bool, error) {
	if p.Settings.EnforceAdmins {
		return true, nil
	}
	admin, err := IsAdmin(ctx, s.DB, repo, who)
	return !admin, err
}

// IsAdmin reports whether the account administers the repository.
func IsAdmin(ctx context.Context, q store.Q, repo *repos.Repository, who *accounts.Account) (bool, error) {
	p := &auth.Principal{Account: &auth.Account{ID: who.ID, Login: who.Login, Type: who.Type}}
	role, err := access.RepoRole(ctx, q, p, repo)
	return role >= auth.RoleAdmin, err
}

// boundRefusals are the reasons of the rules that administrators bypass
// without enforce_admins.
func (s *Service) boundRefusals(ctx context.Context, push *githost.Push, u githttp.RefUpdate, p *Protection) ([]string, error) {
	st := p.Settings
	var out []string
	if st.LockBranch {
		out = append(out, reasonLocked)
	}
	if st.Restrictions != nil && (!u.IsCreate() || st.BlockCreations) {
		ok, err := isAmong(ctx, s.DB, st.Restrictions, push.Pusher)
		if err != nil {
			return nil, err
		}
		if !ok {
			out = append(out, reasonRestricted)
		}
	}
	if st.LinearHistory && !u.IsCreate() {
		merges, err := push.Inspect.MergeCommits(ctx, u)
		if err != nil {
			return nil, err
		}
		if len(merges) > 0 {
			out = append(out, reasonLinear)
		}
	}
	if push.Intent.Kind == MergeIntent {
		return out, nil
	}
	if st.Signatures && !push.ByServer {
		ok, err := allVerified(ctx, s.DB, push.Inspect, u)
		if err != nil {
			return nil, err
		}
		if !ok {
			out = append(out, reasonSignatures)
		}
	}
	if st.Reviews != nil {
		bypass, err := isAmong(ctx, s.DB, st.Reviews.Bypass, push.Pusher)
		if err != nil {
			return nil, err
		}
		if !bypass {
			out = append(out, reasonPullRequest)
		}
	}
	if st.StatusChecks != nil {
		outcomes, err := s.OutcomesOf(ctx, s.DB, push.Repo.ID, u.NewSHA)
		if err != nil {
			return nil, err
		}
		out = append(out, CheckReasons(st.StatusChecks, outcomes)...)
	}
	return out, nil
}

// CheckReasons are the required checks' complaints about the outcomes:
// `Required status check "ci" is expected.` for a check not reported (or
// reported by another app than the one required), and when several are
// not, "2 of 3 required status checks are expected." in their place;
// "is failing." for one that failed, "is in progress." for one still
// pending.
func CheckReasons(c *StatusChecks, outcomes map[string]Outcome) []string {
	var out, expected []string
	for _, ch := range c.Checks {
		o, ok := outcomes[ch.Context]
		if ok && ch.AppID != nil && *ch.AppID > 0 && o.AppID != *ch.AppID {
			ok = false
		}
		switch {
		case !ok:
			expected = append(expected, fmt.Sprintf("Required status check %q is expected.", ch.Context))
		case o.State == checks.OutcomeFailure:
			out = append(out, fmt.Sprintf("Required status check %q is failing.", ch.Context))
		case o.State != checks.OutcomeSuccess:
			out = append(out, fmt.Sprintf("Required status check %q is in progress.", ch.Context))
		}
	}
	if len(expected) > 1 {
		expected = []string{fmt.Sprintf("%d of %d required status checks are expected.", len(expected), len(c.Checks))}
	}
	return append(expected, out...)
}

// MayDismiss reports whether the account may dismiss reviews of pull
// requests into the branch: anyone with push access unless the
// protection restricts dismissals, then its administrators and the
// dismissal actors.
func MayDismiss(ctx context.Context, q store.Q, repo *repos.Repository, branch string, who *accounts.Account) (bool, error) {
	p, err := Of(ctx, q, repo.ID, branch)
	if errors.Is(err, ErrNotProtected) || (err == nil && (p.Settings.Reviews == nil || p.Settings.Reviews.Dismissal == nil)) {
		return true, nil
	} else if err != nil {
		return false, err
	}
	if admin, err := IsAdmin(ctx, q, repo, who); err != nil || admin {
		return admin, err
	}
	return isAmong(ctx, q, p.Settings.Reviews.Dismissal, who)
}

// isAmong reports whether the account is one of the actors: one of the
// users, a member of one of the teams, or the bot of one of the apps.
func isAmong(ctx context.Context, q store.Q, a *Actors, who *accounts.Account) (bool, error) {
	if a == nil {
		return false, nil
	}
	if slices.Contains(a.Users, who.ID) {
		return true, nil
	}
	for _, t := range a.Teams {
		if ok, err := access.InTeam(ctx, q, t, who.ID); err != nil || ok {
			return ok, err
		}
	}
	for _, id := range a.Apps {
		app, err := apps.ByID(ctx, q, id)
		if errors.Is(err, store.ErrNotFound) {
			continue
		} else if err != nil {
			return false, err
		}
		if app.BotID == who.ID {
			return true, nil
		}
	}
	return false, nil
}

// allVerified reports whether every commit the update brings has a
// verified signature.
func allVerified(ctx context.Context, q store.Q, inspect githttp.Inspector, u githttp.RefUpdate) (bool, error) {
	commits, err := inspect.NewCommitSignatures(ctx, u)
	if err != nil {
		return false, err
	}
	for _, c := range commits {
		res, err := sigverify.Verify(ctx, q, c.Signature, c.Payload, c.CommitterEmail)
		if err != nil || !res.Verified {
			return false, err
		}
	}
	return true, nil
}
