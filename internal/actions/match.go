package actions

import (
	"regexp"
	"strings"

	"forgeapi/internal/actions/engine"
)

// globRegexp compiles a workflow filter pattern: * matches any run of
// characters but /, ** any run at all, ? one character, + one or more of
// the character before it, [...] a class, as the platform's filter
// patterns.
func globRegexp(pattern string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		switch {
		case c == '*' && i+1 < len(pattern) && pattern[i+1] == '*':
			b.WriteString(".*")
			i++
		case c == '*':
			b.WriteString("[^/]*")
		case c == '?':
			b.WriteString(".")
		case c == '+':
			b.WriteString("+")
		case c == '[':
			end := strings.IndexByte(pattern[i:], ']')
			if end < 0 {
				b.WriteString(regexp.QuoteMeta(pattern[i:]))
				i = len(pattern)
				continue
			}
			b.WriteString(pattern[i : i+end+1])
			i += end
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return regexp.MustCompile("^" + regexp.QuoteMeta(pattern) + "$")
	}
	return re
}

// matches applies a list of patterns and !negations in order: the last
// pattern that matches decides; with none, false.
func matches(patterns []string, s string) bool {
	ok := false
	for _, p := range patterns {
		neg := strings.HasPrefix(p, "!")
		if globRegexp(strings.TrimPrefix(p, "!")).MatchString(s) {
			ok = !neg
		}
	}
	return ok
}

// refMatches applies include and ignore patterns to a branch or tag name.
func refMatches(include, ignore []string, name string) bool {
	if len(include) > 0 {
		return matches(include, name)
	}
	if len(ignore) > 0 {
		return !matches(ignore, name)
	}
	return true
}

// pathsMatch applies paths and paths-ignore to the changed files; nil
// files (unknown) match.
func pathsMatch(f engine.Filter, files []string) bool {
	if files == nil || (len(f.Paths) == 0 && len(f.PathsIgnore) == 0) {
		return true
	}
	for _, file := range files {
		if len(f.Paths) > 0 && matches(f.Paths, file) {
			return true
		}
		if len(f.Paths) == 0 && !matches(f.PathsIgnore, file) {
			return true
		}
	}
	return false
}

// pushMatches says whether a push to ref (refs/heads/... or
// refs/tags/...) changing files runs a workflow with filter f: a filter
// of branches only ignores tags and the other way round.
func pushMatches(f engine.Filter, ref string, files []string) bool {
	branchFilter := len(f.Branches) > 0 || len(f.BranchesIgnore) > 0
	tagFilter := len(f.Tags) > 0 || len(f.TagsIgnore) > 0
	if branch, ok := strings.CutPrefix(ref, "refs/heads/"); ok {
		if !branchFilter && tagFilter {
			return false
		}
		return refMatches(f.Branches, f.BranchesIgnore, branch) && pathsMatch(f, files)
	}
	if tag, ok := strings.CutPrefix(ref, "refs/tags/"); ok {
		if !tagFilter && branchFilter {
			return false
		}
		return refMatches(f.Tags, f.TagsIgnore, tag)
	}
	return false
}

// pullRequestMatches says whether a pull_request action against base
// runs a workflow with filter f (types default to opened, synchronize
// and reopened).
func pullRequestMatches(f engine.Filter, action, base string, files []string) bool {
	types := f.Types
	if len(types) == 0 {
		types = []string{"opened", "synchronize", "reopened"}
	}
	found := false
	for _, t := range types {
		found = found || t == action
	}
	return found && refMatches(f.Branches, f.BranchesIgnore, base) && pathsMatch(f, files)
}

// workflowRunMatches says whether a workflow_run trigger's filters take a
// run of the workflow named source, on the branch, with the action
// (requested, in_progress, completed): workflows lists source, types
// lists the action (none: requested and completed, as the platform's
// default), branches and branches-ignore take the branch.
func workflowRunMatches(f engine.Filter, action, source, branch string) bool {
	if !contains(f.Workflows, source) {
		return false
	}
	if len(f.Types) == 0 && action != "requested" && action != "completed" ||
		len(f.Types) > 0 && !contains(f.Types, action) {
		return false
	}
	if len(f.Branches) > 0 && !matches(f.Branches, branch) {
		return false
	}
	return len(f.BranchesIgnore) == 0 || !matches(f.BranchesIgnore, branch)
}
