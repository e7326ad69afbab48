package gitdiff

import (
	"strconv"
	"strings"
)

// Spot is where a comment sits in a file's unified patch: its line and
// side (RIGHT: the new file's numbering, LEFT: the old one's), its
// position (lines below the file's first hunk header, the platform's
// "position") and the diff hunk up to it.
type Spot struct {
	Line     int
	Side     string
	Position int
	Hunk     string
}

// Locate finds a spot in a file's patch (as gitread's Diff gives it,
// hunks only): by line and side (side "" is RIGHT), or by position when
// line is 0. ok is false when the patch does not show it. Review comments
// and commit comments place themselves with it.
func Locate(patch string, line int, side string, position int) (Spot, bool) {
	if side == "" {
		side = "RIGHT"
	}
	lines := strings.Split(strings.TrimSuffix(patch, "\n"), "\n")
	oldN, newN, hunkStart, pos := 0, 0, 0, -1
	for i, l := range lines {
		pos++
		if strings.HasPrefix(l, "@@") {
			oldN, newN = hunkStarts(l)
			hunkStart = i
			continue
		}
		if pos == 0 {
			continue // no hunk header yet
		}
		var atOld, atNew int
		switch {
		case strings.HasPrefix(l, "+"):
			atNew, newN = newN, newN+1
		case strings.HasPrefix(l, "-"):
			atOld, oldN = oldN, oldN+1
		case strings.HasPrefix(l, `\`):
			continue
		default:
			atOld, atNew, oldN, newN = oldN, newN, oldN+1, newN+1
		}
		hit := false
		if line == 0 {
			hit = pos == position
			if hit && atNew == 0 {
				side, line = "LEFT", atOld
			} else if hit {
				side, line = "RIGHT", atNew
			}
		} else if side == "RIGHT" {
			hit = atNew == line
		} else {
			hit = atOld == line
		}
		if hit {
			return Spot{Line: line, Side: side, Position: pos, Hunk: strings.Join(lines[hunkStart:i+1], "\n")}, true
		}
	}
	return Spot{}, false
}

// hunkStarts reads "@@ -a,b +c,d @@": the first old and new line numbers.
func hunkStarts(header string) (int, int) {
	f := strings.Fields(header)
	if len(f) < 3 {
		return 0, 0
	}
	start := func(s string) int {
		s, _, _ = strings.Cut(s[1:], ",")
		n, _ := strconv.Atoi(s)
		return n
	}
	return start(f[1]), start(f[2])
}
