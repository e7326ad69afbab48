package rulesets

import (
	"regexp"
	"strings"

	"forgeapi/internal/git/githttp"
	"forgeapi/internal/repos"
)

// The special include patterns.
const (
	PatternAll           = "~ALL"
	PatternDefaultBranch = "~DEFAULT_BRANCH"
)

// glob turns an fnmatch pattern as the platform reads rulesets' patterns
// into a regular expression: `*` and `?` never cross a `/`, `**` does.
func glob(pattern string, foldCase bool) *regexp.Regexp {
	var b strings.Builder
	if foldCase {
		b.WriteString("(?i)")
	}
	b.WriteString("^")
	for i := 0; i < len(pattern); i++ {
		switch {
		case strings.HasPrefix(pattern[i:], "**"):
			b.WriteString(".*")
			i++
		case pattern[i] == '*':
			b.WriteString("[^/]*")
		case pattern[i] == '?':
			b.WriteString("[^/]")
		default:
			b.WriteString(regexp.QuoteMeta(pattern[i : i+1]))
		}
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

// Match reports whether name matches the fnmatch pattern.
func Match(pattern, name string) bool { return glob(pattern, false).MatchString(name) }

// matchesRepo reports whether the repository name conditions select the
// repository (case-insensitively, as repository names compare).
func (c Conditions) matchesRepo(name string) bool {
	p := c.RepositoryName
	if p == nil {
		return false
	}
	match := func(pattern string) bool { return pattern == PatternAll || glob(pattern, true).MatchString(name) }
	return anyOf(p.Include, match) && !anyOf(p.Exclude, match)
}

// matchesRef reports whether the reference name conditions select the
// full reference name ref of the repository, for a ruleset of target kind
// (refs/heads/ for branch, refs/tags/ for tag). A pattern without the
// refs/ prefix is read under the kind's prefix.
func (c Conditions) matchesRef(repo *repos.Repository, prefix, ref string) bool {
	p := c.RefName
	if p == nil || !strings.HasPrefix(ref, prefix) {
		return false
	}
	match := func(pattern string) bool {
		switch pattern {
		case PatternAll:
			return true
		case PatternDefaultBranch:
			return ref == "refs/heads/"+repo.DefaultBranch
		}
		if !strings.HasPrefix(pattern, "refs/") {
			pattern = prefix + pattern
		}
		return Match(pattern, ref)
	}
	return anyOf(p.Include, match) && !anyOf(p.Exclude, match)
}

func anyOf(patterns []string, match func(string) bool) bool {
	for _, p := range patterns {
		if match(p) {
			return true
		}
	}
	return false
}

// AppliesToRepo reports whether the ruleset selects the repository: a
// repository ruleset its own, an organization's those its conditions
// name.
func (rs *Ruleset) AppliesToRepo(repo *repos.Repository) bool {
	if rs.RepoID != 0 {
		return rs.RepoID == repo.ID
	}
	return rs.Conditions.matchesRepo(repo.Name)
}

// AppliesToRef reports whether the ruleset's rules apply to the update
// of a repository it selects: a push ruleset to every reference, a branch
// or tag ruleset to the branches or tags its ref_name conditions select.
func (rs *Ruleset) AppliesToRef(repo *repos.Repository, u githttp.RefUpdate) bool {
	switch rs.Target {
	case TargetPush:
		return true
	case TargetBranch:
		return rs.Conditions.matchesRef(repo, "refs/heads/", u.Ref)
	case TargetTag:
		return rs.Conditions.matchesRef(repo, "refs/tags/", u.Ref)
	}
	return false
}
