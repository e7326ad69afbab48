package gitwrite

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The identity lines and the commit buffer are built as git commit-tree
// builds them (ident.c fmt_ident, date.c parse_date, commit.c
// commit_tree_extended, git 2.39) from GIT_AUTHOR_NAME, GIT_AUTHOR_EMAIL,
// GIT_AUTHOR_DATE and the committer's, which the writer used to set to
// an Identity's fields and gitDate(When).

// Dates git accepts in the raw "seconds zone" form given to it: it takes
// a number of more than 8 digits as seconds since the epoch, and converts
// dates from 1970 to 2099 only.
const (
	minGitSeconds = 100000000  // 1973-03-03T09:46:40Z
	endGitSeconds = 4102444800 // 2100-01-01T00:00:00Z
)

// crud reports whether git strips c from both ends of a name or an email.
func crud(c byte) bool {
	return c <= 32 || c == '.' || c == ',' || c == ':' || c == ';' || c == '<' || c == '>' ||
		c == '"' || c == '\\' || c == '\''
}

// withoutCrud is s without crud at either end, and without '\n', '<' and
// '>' inside.
func withoutCrud(s string) string {
	i, j := 0, len(s)
	for i < j && crud(s[i]) {
		i++
	}
	for j > i && crud(s[j-1]) {
		j--
	}
	s = s[i:j]
	if !strings.ContainsAny(s, "\n<>") {
		return s
	}
	var b strings.Builder
	for k := range len(s) {
		if c := s[k]; c != '\n' && c != '<' && c != '>' {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// identLine is the "Name <email> seconds zone" of an author or
// committer line; what git refuses is an error.
func identLine(id Identity) (string, error) {
	if strings.IndexByte(id.Name, 0) >= 0 || strings.IndexByte(id.Email, 0) >= 0 {
		return "", refuse("a NUL byte in a name or an email")
	}
	if id.Name == "" {
		return "", refuse("empty ident name (for <%s>) not allowed", id.Email)
	}
	hasNonCrud := false
	for i := range len(id.Name) {
		if !crud(id.Name[i]) {
			hasNonCrud = true
			break
		}
	}
	if !hasNonCrud {
		return "", refuse("name consists only of disallowed characters: %s", id.Name)
	}
	date, err := parseGitDate(gitDate(id.When))
	if err != nil {
		return "", err
	}
	return withoutCrud(id.Name) + " <" + withoutCrud(id.Email) + "> " + date, nil
}

// gitDate renders a time as git's raw date: seconds and zone.
func gitDate(t time.Time) string {
	if t.IsZero() {
		t = time.Now()
	}
	return fmt.Sprintf("%d %s", t.Unix(), t.Format("-0700"))
}

// parseGitDate is what git writes for a gitDate: the seconds when git
// reads them as seconds (more than 8 digits, before 2100) and the zone
// when it reads it as one (hours below 24, minutes below 60; otherwise
// the zone of the host, /etc/localtime, at that time, as git's mktime
// gives it); any other date git refuses.
func parseGitDate(s string) (string, error) {
	secText, zone, ok := strings.Cut(s, " ")
	secs, err := strconv.ParseInt(secText, 10, 64)
	if !ok || err != nil || secs < minGitSeconds || secs >= endGitSeconds {
		return "", refuse("invalid date format: %s", s)
	}
	offset, ok := zoneMinutes(zone)
	if !ok {
		offset = localOffset(secs)
	}
	sign := byte('+')
	if offset < 0 {
		sign, offset = '-', -offset
	}
	return fmt.Sprintf("%d %c%02d%02d", secs, sign, offset/60, offset%60), nil
}

// zoneMinutes reads a "+hhmm" or "-hhmm" zone as git's match_tz does.
func zoneMinutes(zone string) (int, bool) {
	if len(zone) != 5 || zone[0] != '+' && zone[0] != '-' {
		return 0, false
	}
	n, err := strconv.Atoi(zone[1:])
	if err != nil || zone[1] < '0' || zone[1] > '9' {
		return 0, false
	}
	hours, minutes := n/100, n%100
	if hours >= 24 || minutes >= 60 {
		return 0, false
	}
	offset := hours*60 + minutes
	if zone[0] == '-' {
		offset = -offset
	}
	return offset, true
}

var hostZone = sync.OnceValue(func() *time.Location {
	data, err := os.ReadFile("/etc/localtime")
	if err != nil {
		return time.UTC
	}
	loc, err := time.LoadLocationFromTZData("localtime", data)
	if err != nil {
		return time.UTC
	}
	return loc
})

// localOffset is the offset in minutes git computes for a date without a
// zone it accepts: the UTC wall clock of secs read as local time in the
// host's zone (git runs without TZ).
func localOffset(secs int64) int {
	u := time.Unix(secs, 0).UTC()
	local := time.Date(u.Year(), u.Month(), u.Day(), u.Hour(), u.Minute(), u.Second(), 0, hostZone())
	return int((secs - local.Unix()) / 60)
}

// verifyUTF8 is the commit buffer as git writes it when i18n.commitEncoding
// is UTF-8 (the default): every byte that does not start a valid UTF-8
// sequence (git also refuses surrogates and the noncharacters U+FDD0 to
// U+FDEF and U+xxFFFE, U+xxFFFF) is taken as Latin-1 and re-encoded.
func verifyUTF8(buf []byte) []byte {
	bad := findInvalidUTF8(buf)
	if bad < 0 {
		return buf
	}
	// git rewrites the byte in place and scans on after it: one pass.
	out := make([]byte, 0, len(buf)+16)
	for bad >= 0 {
		c := buf[bad]
		out = append(out, buf[:bad]...)
		out = append(out, 0xc0+(c>>6), 0x80+(c&0x3f))
		buf = buf[bad+1:]
		bad = findInvalidUTF8(buf)
	}
	return append(out, buf...)
}

// findInvalidUTF8 is the offset of the first byte of buf that does not
// start a sequence git takes as UTF-8, or -1.
func findInvalidUTF8(buf []byte) int {
	maxCodepoint := [...]uint32{0x7f, 0x7ff, 0xffff, 0x10ffff}
	for i := 0; i < len(buf); {
		c := buf[i]
		bad := i
		i++
		if c < 0x80 {
			continue
		}
		bytes := 0
		for c&0x40 != 0 {
			c <<= 1
			bytes++
		}
		if bytes < 1 || bytes > 3 || len(buf)-i < bytes {
			return bad
		}
		codepoint := uint32(c&0x7f) >> bytes
		minVal, maxVal := maxCodepoint[bytes-1]+1, maxCodepoint[bytes]
		for ; bytes > 0; bytes-- {
			codepoint = codepoint<<6 | uint32(buf[i]&0x3f)
			if buf[i]&0xc0 != 0x80 {
				return bad
			}
			i++
		}
		switch {
		case codepoint < minVal || codepoint > maxVal,
			codepoint&0x1ff800 == 0xd800,
			codepoint&0xfffe == 0xfffe,
			codepoint >= 0xfdd0 && codepoint <= 0xfdef:
			return bad
		}
	}
	return -1
}
