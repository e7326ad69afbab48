package gitwrite

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
