package pulls

import (
	"context"
	"errors"
	"path"
	"slices"
	"strings"

	"forgeapi/internal/access"
	"forgeapi/internal/accounts"
	"forgeapi/internal/store"
	"forgeapi/internal/teams"
)

// codeownersPaths are where the platform looks for CODEOWNERS, in order.
var codeownersPaths = []string{".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS"}

// ownerRule is one line of CODEOWNERS: a pattern and its owners
// (@login, @org/team; email owners are not read).
type ownerRule struct {
	pattern string
	owners  []string
}

// parseCodeowners reads the rules of a CODEOWNERS file, in order.
func parseCodeowners(text string) []ownerRule {
	var rules []ownerRule
	for line := range strings.SplitSeq(text, "\n") {
		if i := strings.Index(line, "#"); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		r := ownerRule{pattern: f[0]}
		for _, o := range f[1:] {
			if strings.HasPrefix(o, "@") {
				r.owners = append(r.owners, o[1:])
			}
		}
		rules = append(rules, r)
	}
	return rules
}

// owners are the owners of the file: those of the last rule that
// matches it (none when that rule names none).
func owners(rules []ownerRule, file string) []string {
	for _, r := range slices.Backward(rules) {
		if matchOwnerPattern(r.pattern, file) {
			return r.owners
		}
	}
	return nil
}

// matchOwnerPattern matches a CODEOWNERS pattern (gitignore's rules): a
// leading slash anchors it at the root, a trailing slash or a directory
// name matches everything below, a pattern without a slash matches a
// name at any depth, * and ? within a segment, ** across segments.
func matchOwnerPattern(pattern, file string) bool {
	if pattern == "*" || pattern == "**" {
		return true
	}
	anchored := strings.HasPrefix(pattern, "/") || strings.Contains(strings.TrimSuffix(pattern, "/"), "/")
	pattern = strings.Trim(pattern, "/")
	parts := strings.Split(file, "/")
	if !anchored {
		for i := range parts {
			if matchSegments(strings.Split(pattern, "/"), parts[i:]) {
				return true
			}
		}
		return false
	}
	return matchSegments(strings.Split(pattern, "/"), parts)
}

// matchSegments matches pattern segments against a path's segments: a
// pattern that runs out first matches the directory's contents.
func matchSegments(pat, parts []string) bool {
	if len(pat) == 0 {
		return true
	}
	if pat[0] == "**" {
		for i := 0; i <= len(parts); i++ {
			if matchSegments(pat[1:], parts[i:]) {
				return true
			}
		}
		return false
	}
	if len(parts) == 0 {
		return false
	}
	ok, err := path.Match(pat[0], parts[0])
	return err == nil && ok && matchSegments(pat[1:], parts[1:])
}

// codeOwnerReason is the platform's complaint when a changed file's code
// owners have not approved: "Waiting on code owner review from @a." (the
// owners of the first such file); "" when each changed file with owners
// has an approval by one of them.
func (s *Service) codeOwnerReason(ctx context.Context, p *PullRequest, approvers []int64) (string, error) {
	git := gitDir(s.Repos.GitDir(p.Repo.ID))
	tip, ok, err := git.commit(ctx, "refs/heads/"+p.BaseRef)
	if err != nil || !ok {
		return "", err
	}
	var text string
	for _, f := range codeownersPaths {
		if out, err := git.run(ctx, nil, "", "show", tip+":"+f); err == nil {
			text = out
			break
		}
	}
	rules := parseCodeowners(text)
	if len(rules) == 0 {
		return "", nil
	}
	mb, err := git.run(ctx, nil, "", "merge-base", tip, p.HeadSHA)
	if err != nil {
		return "", nil // unrelated histories: no changed file to own
	}
	changed, err := git.run(ctx, nil, "", "diff", "--name-only", "--no-renames", mb, p.HeadSHA)
	if err != nil {
		return "", err
	}
	for file := range strings.SplitSeq(changed, "\n") {
		names := owners(rules, file)
		if file == "" || len(names) == 0 {
			continue
		}
		ok, err := s.ownerApproved(ctx, p, names, approvers)
		if err != nil {
			return "", err
		}
		if !ok {
			return "Waiting on code owner review from @" + strings.Join(names, ", @") + ".", nil
		}
	}
	return "", nil
}

// ownerApproved reports whether one of the approvers is one of the
// owners: the user of a login, a member of an org/team.
func (s *Service) ownerApproved(ctx context.Context, p *PullRequest, names []string, approvers []int64) (bool, error) {
	for _, id := range approvers {
		who, err := accounts.ByID(ctx, s.DB, id)
		if errors.Is(err, store.ErrNotFound) {
			continue
		} else if err != nil {
			return false, err
		}
		for _, n := range names {
			org, slug, isTeam := strings.Cut(n, "/")
			if !isTeam {
				if strings.EqualFold(n, who.Login) {
					return true, nil
				}
				continue
			}
			if !p.Repo.Owner.IsOrg() || !strings.EqualFold(org, p.Repo.Owner.Login) {
				continue
			}
			t, err := teams.BySlug(ctx, s.DB, p.Repo.Owner, slug)
			if errors.Is(err, store.ErrNotFound) {
				continue
			} else if err != nil {
				return false, err
			}
			if in, err := access.InTeam(ctx, s.DB, t.ID, who.ID); err != nil || in {
				return in, err
			}
		}
	}
	return false, nil
}
