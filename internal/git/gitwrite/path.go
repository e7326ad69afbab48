package gitwrite

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// The rules below are git's own (read-cache.c verify_path and path.c
// is_ntfs_dotgit, is_ntfs_dotgitmodules, git 2.39) as they apply on Linux
// with git's defaults there: core.protectNTFS on, core.protectHFS off, '/'
// the only directory separator. git refuses to put a path they reject in an
// index: update-index --cacheinfo fails on it, and read-tree fails on a tree
// holding one anywhere.

// File modes as git stores them in trees and indexes.
const (
	modeDir     = 0o040000
	modeFile    = 0o100644
	modeExec    = 0o100755
	modeSymlink = 0o120000
	modeGitlink = 0o160000
	modeTypes   = 0o170000
)

func isDirMode(m uint32) bool  { return m&modeTypes == modeDir }
func isLinkMode(m uint32) bool { return m&modeTypes == modeSymlink }

// byteAt is s[i], or 0 past its end (C's terminating NUL).
func byteAt(s string, i int) byte {
	if i < len(s) {
		return s[i]
	}
	return 0
}

// toLower is C's tolower in the C locale: ASCII only.
func toLower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// hasPrefixFold reports whether s starts with prefix, ASCII letters
// compared without case (strncasecmp).
func hasPrefixFold(s, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for i := range len(prefix) {
		if toLower(s[i]) != toLower(prefix[i]) {
			return false
		}
	}
	return true
}

// verifyPath reports whether git accepts path, with the given mode, as an
// index entry (verify_path). path has no NUL byte.
func verifyPath(path string, mode uint32) bool {
	i := 0
	for {
		// i is at the start of a component.
		if isNTFSDotGit(path[i:]) || isLinkMode(mode) && isNTFSDotGitmodules(path[i:]) {
			return false
		}
		c := byteAt(path, i)
		i++
		if c == '.' && !verifyDotfile(path[min(i, len(path)):], mode) || c == '/' {
			return false
		}
		if c == 0 {
			return isDirMode(mode) // "a/": only a directory entry
		}
		for {
			c = byteAt(path, i)
			i++
			if c == 0 {
				return true
			}
			if c == '/' {
				break
			}
			if c == '\\' && (isNTFSDotGit(path[i:]) || isLinkMode(mode) && isNTFSDotGitmodules(path[i:])) {
				return false
			}
		}
	}
}

// verifyDotfile checks what follows a component's leading '.': not "." or
// "..", never ".git" (any case), and for a symbolic link never
// ".gitmodules".
func verifyDotfile(rest string, mode uint32) bool {
	switch c := byteAt(rest, 0); c {
	case 0, '/':
		return false
	case 'g', 'G':
		if toLower(byteAt(rest, 1)) != 'i' || toLower(byteAt(rest, 2)) != 't' {
			break
		}
		if c := byteAt(rest, 3); c == 0 || c == '/' {
			return false
		}
		if isLinkMode(mode) && hasPrefixFold(rest[3:], "modules") {
			if c := byteAt(rest, 10); c == 0 || c == '/' {
				return false
			}
		}
	case '.':
		if c := byteAt(rest, 1); c == 0 || c == '/' {
			return false
		}
	}
	return true
}

// isNTFSDotGit reports whether name starts with a name NTFS takes for
// ".git": ".git" or "git~1" (any case) followed by dots and spaces up to
// the end, a separator or ':'.
func isNTFSDotGit(name string) bool {
	i := 0
	switch c := byteAt(name, 0); {
	case c == '.':
		if !hasPrefixFold(name[1:], "git") {
			return false
		}
		i = 4
	case c == 'g' || c == 'G':
		if len(name) < 5 || toLower(name[1]) != 'i' || toLower(name[2]) != 't' || name[3] != '~' || name[4] != '1' {
			return false
		}
		i = 5
	default:
		return false
	}
	for ; ; i++ {
		c := byteAt(name, i)
		if c == 0 || c == '/' || c == '\\' || c == ':' {
			return true
		}
		if c != '.' && c != ' ' {
			return false
		}
	}
}

// isNTFSDotGitmodules reports whether name starts with a name NTFS takes
// for ".gitmodules", its short names included (is_ntfs_dot_generic).
func isNTFSDotGitmodules(name string) bool {
	const long, short = "gitmodules", "gi7eba"
	spacesAndPeriods := func(i int) bool {
		for ; ; i++ {
			c := byteAt(name, i)
			if c == 0 || c == ':' {
				return true
			}
			if c != ' ' && c != '.' {
				return false
			}
		}
	}
	if byteAt(name, 0) == '.' && hasPrefixFold(name[1:], long) {
		return spacesAndPeriods(len(long) + 1)
	}
	if hasPrefixFold(name, long[:6]) && byteAt(name, 6) == '~' && '1' <= byteAt(name, 7) && byteAt(name, 7) <= '4' {
		return spacesAndPeriods(8)
	}
	sawTilde := false
	i := 0
	for ; i < 8; i++ {
		c := byteAt(name, i)
		switch {
		case c == 0:
			return false
		case sawTilde:
			if c < '0' || c > '9' {
				return false
			}
		case c == '~':
			i++
			if c := byteAt(name, i); c < '1' || c > '9' {
				return false
			}
			sawTilde = true
		case i >= 6:
			return false
		case c&0x80 != 0:
			return false
		case toLower(c) != short[i]:
			return false
		}
	}
	return spacesAndPeriods(i)
}

// CheckPath refuses a path that the server does not let a client write
// into a repository (the contents API), with the reason. On top of what
// git refuses in an index (verifyPath: ".git" in any case, its NTFS
// spellings "git~1", ".git.", ".git " and alternate streams, "." and ".."
// components, empty components), it refuses what git's fsck refuses in a
// tree and what would escape or alias on Windows and macOS checkouts:
//
//   - invalid UTF-8, and control characters (C0, DEL, C1: NUL, CR, LF,
//     tab, ...);
//   - backslashes, which Windows reads as separators ("..\..\x", "C:\x");
//   - components that Windows or HFS+ read as "." or "..": dots and
//     spaces only ("...", ". ."), or with code points HFS+ ignores;
//   - components HFS+ reads as ".git" (".g\u200cit"), as git's fsck
//     does (is_hfs_dotgit).
//
// It returns nil or a *Refusal.
func CheckPath(p string) error {
	switch {
	case p == "" || strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") || strings.Contains(p, "//"):
		return refuse("path contains a malformed path component")
	case !utf8.ValidString(p):
		return refuse("path is not valid UTF-8")
	case strings.ContainsFunc(p, unicode.IsControl):
		return refuse("path contains a control character")
	case strings.Contains(p, `\`):
		return refuse("path contains a backslash")
	}
	for _, c := range strings.Split(p, "/") {
		if isDotSpelling(c) {
			return refuse("path contains a malformed path component")
		}
		if isHFSDot(c, "git") {
			return refuse("path contains a component that names .git")
		}
	}
	if !verifyPath(p, modeFile) {
		return refuse("path contains a component that names .git")
	}
	return nil
}

// IsGitmodules reports whether name, a path's last component, is a
// .gitmodules file as git's fsck finds one: in any case, in its NTFS
// spellings and with code points HFS+ ignores.
func IsGitmodules(name string) bool {
	return isHFSDot(name, "gitmodules") || isNTFSDotGitmodules(name)
}

// isDotSpelling reports whether the component c reads as "." or ".." on
// Windows (which drops trailing dots and spaces) or HFS+ (which drops
// the code points hfsIgnorable names): it holds a dot and nothing but
// dots, spaces and such code points.
func isDotSpelling(c string) bool {
	return strings.Contains(c, ".") && strings.Trim(strings.Map(func(r rune) rune {
		if hfsIgnorable(r) {
			return -1
		}
		return r
	}, c), ". ") == ""
}

// isHFSDot reports whether HFS+ reads the component c as "." followed
// by needle (lower-case ASCII): c is that in any ASCII case, with code
// points HFS+ ignores anywhere (git's is_hfs_dot_generic).
func isHFSDot(c, needle string) bool {
	want := "." + needle
	i := 0
	for _, r := range c {
		if hfsIgnorable(r) {
			continue
		}
		if i == len(want) || r > 127 || toLower(byte(r)) != want[i] {
			return false
		}
		i++
	}
	return i == len(want)
}

// hfsIgnorable reports whether HFS+ drops r from file names when it
// compares them (git's utf8.c next_hfs_char).
func hfsIgnorable(r rune) bool {
	switch r {
	case 0x200c, 0x200d, 0x200e, 0x200f, // zero-width non-joiner, joiner; left-to-right, right-to-left marks
		0x202a, 0x202b, 0x202c, 0x202d, 0x202e, // directional embeddings and overrides
		0x206a, 0x206b, 0x206c, 0x206d, 0x206e, 0x206f, // deprecated format characters
		0xfeff: // zero-width no-break space
		return true
	}
	return false
}
