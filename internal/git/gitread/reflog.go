package gitread

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// RefLogEntry is one entry of a reference's reflog: an update of the
// reference that git applied, as git wrote it.
type RefLogEntry struct {
	Old string // the reference's value before (the zero SHA for a creation)
	New string // the reference's value after
	// Email is the committer email of the entry: whoever git took as the
	// committer of the update (receive-pack takes GIT_COMMITTER_EMAIL).
	Email string
	// Time is when git wrote the entry (whole seconds; the zero time when
	// the line does not say).
	Time time.Time
	// Line is the entry as git wrote it, without the newline.
	Line string
}

// ErrInvalidRefName means a reference name that git would not accept.
var ErrInvalidRefName = errors.New("gitread: invalid reference name")

// RefLog returns the reflog of a full reference name ("refs/heads/main"),
// oldest entry first. A reference without a reflog has none: git writes
// reflogs only when core.logAllRefUpdates asks for them, and removes a
// reference's reflog when it deletes the reference. Malformed lines are
// skipped.
func (r *Repository) RefLog(name string) ([]RefLogEntry, error) {
	var out []RefLogEntry
	err := r.scanRefLog(name, func(e RefLogEntry) bool {
		out = append(out, e)
		return true
	})
	return out, err
}

// RefLogFirst returns the oldest entry of the reference's reflog, reading
// only that far, and false when the reference has no reflog.
func (r *Repository) RefLogFirst(name string) (RefLogEntry, bool, error) {
	var first RefLogEntry
	found := false
	err := r.scanRefLog(name, func(e RefLogEntry) bool {
		first, found = e, true
		return false
	})
	return first, found, err
}

// scanRefLog calls fn with the reflog entries of name, oldest first,
// until fn returns false.
func (r *Repository) scanRefLog(name string, fn func(RefLogEntry) bool) error {
	if !strings.HasPrefix(name, "refs/") || plumbing.ReferenceName(name).Validate() != nil {
		return fmt.Errorf("%w: %q", ErrInvalidRefName, name)
	}
	f, err := os.Open(filepath.Join(r.dir, "logs", filepath.FromSlash(name)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("gitread: reflog of %s: %w", name, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		e, ok := parseRefLogLine(sc.Text())
		if ok && !fn(e) {
			return nil
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("gitread: reflog of %s: %w", name, err)
	}
	return nil
}

// parseRefLogLine parses "<old> <new> <name> <<email>> <time> <zone>\t<message>".
func parseRefLogLine(line string) (RefLogEntry, bool) {
	head, _, _ := strings.Cut(line, "\t")
	old, rest, ok1 := strings.Cut(head, " ")
	newSHA, ident, ok2 := strings.Cut(rest, " ")
	open, closing := strings.IndexByte(ident, '<'), strings.LastIndexByte(ident, '>')
	if !ok1 || !ok2 || !isHex(old) || !isHex(newSHA) || open < 0 || closing < open {
		return RefLogEntry{}, false
	}
	e := RefLogEntry{Old: old, New: newSHA, Email: ident[open+1 : closing], Line: line}
	if secs, _, ok := strings.Cut(strings.TrimSpace(ident[closing+1:]), " "); ok {
		if unix, err := strconv.ParseInt(secs, 10, 64); err == nil {
			e.Time = time.Unix(unix, 0).UTC()
		}
	}
	return e, true
}
