// Package gitref holds the one rule for reference names that every area
// taking a reference or branch name from a client applies before the name
// reaches git: the names `git check-ref-format` accepts, narrowed to those
// git's files backend and go-git can store and read on any file system.
// A name outside the rule names nothing: reads answer "not found", writes
// refuse it.
package gitref

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Length limits. A reference is a file (and its reflog another) under the
// repository: git writes "<component>.lock" beside it, which must fit a
// file name of 255 bytes, and the whole path must stay well under the
// system's path limit.
const (
	MaxComponentLength = 250  // bytes of one slash-separated component
	MaxNameLength      = 1024 // bytes of the full name
)

// ValidName reports whether name is a full reference name ("refs/heads/main",
// "refs/tags/v1.0") that the server accepts. These are git's rules
// (check-ref-format without options, git 2.39):
//
//   - at least two slash-separated components, none empty: no leading or
//     trailing '/', no "//";
//   - no component starts with '.' or ends with ".lock";
//   - no "..", no "@{", no control character (below 0x20, or 0x7f), none
//     of space ~ ^ : ? * [ \;
//   - the name does not end with '.' and is not "@";
//
// and the server's, where go-git, case-insensitive or Unicode-folding
// file systems, or file name limits would read the name differently:
//
//   - it starts with "refs/" and is valid UTF-8;
//   - no invisible formatting code point (Unicode category Cf: zero-width
//     joiners, direction marks and overrides, ...), which HFS+ drops from
//     file names and which make one name look like another;
//   - no component is "@";
//   - a branch or tag name ("refs/heads/x", "refs/tags/x") does not start
//     with '-' (`git check-ref-format --branch` refuses it: it would read
//     as an option);
//   - components of at most MaxComponentLength bytes, the name at most
//     MaxNameLength.
func ValidName(name string) bool {
	if len(name) > MaxNameLength || !strings.HasPrefix(name, "refs/") || !utf8.ValidString(name) ||
		strings.HasSuffix(name, ".") || strings.Contains(name, "..") || strings.Contains(name, "@{") {
		return false
	}
	for i := range len(name) {
		if c := name[i]; c < 0x20 || c == 0x7f || strings.IndexByte(" ~^:?*[\\", c) >= 0 {
			return false
		}
	}
	if strings.ContainsFunc(name, func(r rune) bool { return unicode.Is(unicode.Cf, r) }) {
		return false
	}
	components := strings.Split(name, "/")
	if len(components) < 2 {
		return false
	}
	shortName := components[1] == "heads" || components[1] == "tags"
	for i, c := range components {
		if c == "" || c == "@" || len(c) > MaxComponentLength || strings.HasSuffix(c, ".lock") ||
			strings.HasPrefix(c, ".") || shortName && i == 2 && strings.HasPrefix(c, "-") {
			return false
		}
	}
	return true
}

// ValidBranch reports whether branch, a short name ("main",
// "feature/x"), names a branch the server accepts: "refs/heads/"+branch
// is a ValidName and branch is not "HEAD" (`git check-ref-format
// --branch`).
func ValidBranch(branch string) bool {
	return branch != "HEAD" && ValidName("refs/heads/"+branch)
}
