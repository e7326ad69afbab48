package repostats

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"forgeapi/internal/git/gitcmd"
)

// day is a whole number of days since the Unix epoch (UTC).
type day = int64

const secondsPerDay = 86400

// dayOf is the UTC day of a time.
func dayOf(t time.Time) day {
	s := t.Unix()
	if s < 0 {
		return (s+1)/secondsPerDay - 1
	}
	return s / secondsPerDay
}

// weekOf is the first day (a Sunday) of the week of d: 1970-01-01 was a
// Thursday, the fourth day of its week.
func weekOf(d day) day {
	return d - ((d%7 + 7 + 4) % 7)
}

// History is what the statistics are made from: the commits of the
// default branch's history, aggregated per author email, week and day.
// It is what the cache keeps (as JSON) for one head.
type History struct {
	Authors []*Author `json:"authors"`
	// Punch counts commits by weekday (0 Sunday) and hour, in each
	// commit's own time zone.
	Punch [7][24]int `json:"punch"`
}

// Author is one author email's share of the history.
type Author struct {
	Email string `json:"email"` // as git recorded it (the first spelling seen)
	Name  string `json:"name"`  // the name of the author's newest commit
	// Commits counts every commit, merges included.
	Commits int `json:"commits"`
	// Weeks are the author's commits other than merges by week:
	// [week's first day, commits, additions, deletions].
	Weeks [][4]int64 `json:"weeks"`
	// Days are the author's commits (merges included) by day: [day, commits].
	Days [][2]int64 `json:"days"`
}

// Empty reports whether the history has no commits.
func (h *History) Empty() bool { return len(h.Authors) == 0 }

// commitRecord is one commit as git log shows it.
type commitRecord struct {
	email, name   string
	merge         bool
	when          time.Time
	weekday, hour int
	added, erased int64
}

// The commit header line of the log format, after a NUL: hash, parents,
// author email, author name, author time (Unix), and the author's
// weekday and hour in their own zone.
const logFormat = "--format=%x00%P%x1f%ae%x1f%an%x1f%at%x1f%ad"

// ReadHistory walks the history of head in the bare repository gitDir
// with one git log (numstat: lines added and deleted per file; binary
// files count none) and aggregates it.
func ReadHistory(ctx context.Context, gitDir, head string) (*History, error) {
	cmd := gitcmd.In(gitDir).Command(ctx, "log", "--no-renames", "--numstat", "--no-color",
		"--date=format:%w %H", logFormat, head, "--")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	agg := newAggregator()
	perr := parseLog(out, agg.add)
	if perr != nil {
		_, _ = io.Copy(io.Discard, out)
	}
	if err := cmd.Wait(); err != nil {
		return nil, fmt.Errorf("git log: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	if perr != nil {
		return nil, perr
	}
	return agg.history(), nil
}

// parseLog reads git log's output (see logFormat) and calls add once per
// commit.
func parseLog(r io.Reader, add func(commitRecord)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	var cur *commitRecord
	flush := func() {
		if cur != nil {
			add(*cur)
		}
	}
	for sc.Scan() {
		line := sc.Text()
		if header, ok := strings.CutPrefix(line, "\x00"); ok {
			flush()
			c, err := parseHeader(header)
			if err != nil {
				return err
			}
			cur = &c
			continue
		}
		if line == "" || cur == nil {
			continue
		}
		a, d, ok := numstat(line)
		if ok {
			cur.added += a
			cur.erased += d
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	flush()
	return nil
}

// parseHeader reads a commit's header line.
func parseHeader(s string) (commitRecord, error) {
	f := strings.Split(s, "\x1f")
	if len(f) != 5 {
		return commitRecord{}, errors.New("repostats: unexpected git log header " + strconv.Quote(s))
	}
	unix, err := strconv.ParseInt(f[3], 10, 64)
	if err != nil {
		return commitRecord{}, fmt.Errorf("repostats: author time %q: %w", f[3], err)
	}
	c := commitRecord{merge: len(strings.Fields(f[0])) > 1, email: f[1], name: f[2], when: time.Unix(unix, 0).UTC()}
	if wd, hr, ok := strings.Cut(f[4], " "); ok {
		c.weekday, _ = strconv.Atoi(wd)
		c.hour, _ = strconv.Atoi(hr)
	}
	if c.weekday < 0 || c.weekday > 6 || c.hour < 0 || c.hour > 23 {
		c.weekday, c.hour = 0, 0
	}
	return c, nil
}

// numstat reads a --numstat line "ADDED\tDELETED\tPATH"; a binary file's
// "-\t-\tPATH" counts nothing.
func numstat(line string) (added, deleted int64, ok bool) {
	a, rest, ok1 := strings.Cut(line, "\t")
	d, _, ok2 := strings.Cut(rest, "\t")
	if !ok1 || !ok2 {
		return 0, 0, false
	}
	x, err1 := strconv.ParseInt(a, 10, 64)
	y, err2 := strconv.ParseInt(d, 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return x, y, true
}

// aggregator sums commits per author (by lower-cased email).
type aggregator struct {
	order   []string
	authors map[string]*authorSums
	punch   [7][24]int
}

type authorSums struct {
	email, name string
	commits     int
	weeks       map[day]*[3]int64
	days        map[day]int64
}

func newAggregator() *aggregator { return &aggregator{authors: map[string]*authorSums{}} }

// add counts one commit (git log gives them newest first, so the first
// name seen is the newest).
func (g *aggregator) add(c commitRecord) {
	key := strings.ToLower(c.email)
	s := g.authors[key]
	if s == nil {
		s = &authorSums{email: c.email, name: c.name, weeks: map[day]*[3]int64{}, days: map[day]int64{}}
		g.authors[key] = s
		g.order = append(g.order, key)
	}
	s.commits++
	d := dayOf(c.when)
	s.days[d]++
	g.punch[c.weekday][c.hour]++
	if c.merge {
		return
	}
	w := s.weeks[weekOf(d)]
	if w == nil {
		w = &[3]int64{}
		s.weeks[weekOf(d)] = w
	}
	w[0]++
	w[1] += c.added
	w[2] += c.erased
}

// history is the aggregate in its kept form, authors in the order their
// newest commits came.
func (g *aggregator) history() *History {
	h := &History{Punch: g.punch, Authors: make([]*Author, 0, len(g.order))}
	for _, key := range g.order {
		s := g.authors[key]
		a := &Author{Email: s.email, Name: s.name, Commits: s.commits}
		for w, v := range s.weeks {
			a.Weeks = append(a.Weeks, [4]int64{w, v[0], v[1], v[2]})
		}
		for d, n := range s.days {
			a.Days = append(a.Days, [2]int64{d, n})
		}
		sortPairs(a)
		h.Authors = append(h.Authors, a)
	}
	return h
}
