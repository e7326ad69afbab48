package githttp

import "strings"

// RefUpdate is one reference update of a push, as git's pre-receive and
// post-receive hooks receive it. OldSHA is all zeros for a created
// reference, NewSHA is all zeros for a deleted one.
type RefUpdate struct {
	Ref    string // full name, e.g. "refs/heads/main"
	OldSHA string
	NewSHA string
}

// IsCreate reports whether the update creates the reference.
func (u RefUpdate) IsCreate() bool { return isZeroSHA(u.OldSHA) }

// IsDelete reports whether the update deletes the reference.
func (u RefUpdate) IsDelete() bool { return isZeroSHA(u.NewSHA) }

// IsBranch reports whether the reference is a branch (refs/heads/...).
func (u RefUpdate) IsBranch() bool { return strings.HasPrefix(u.Ref, "refs/heads/") }

// IsTag reports whether the reference is a tag (refs/tags/...).
func (u RefUpdate) IsTag() bool { return strings.HasPrefix(u.Ref, "refs/tags/") }

// ShortName is the reference name without "refs/heads/" or "refs/tags/".
func (u RefUpdate) ShortName() string {
	for _, prefix := range []string{"refs/heads/", "refs/tags/"} {
		if name, ok := strings.CutPrefix(u.Ref, prefix); ok {
			return name
		}
	}
	return u.Ref
}

// isZeroSHA reports whether sha is git's null object name (any hash length).
func isZeroSHA(sha string) bool {
	return sha != "" && strings.Trim(sha, "0") == ""
}

// isSHA reports whether s looks like a full SHA-1 or SHA-256 object name.
func isSHA(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range []byte(s) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
