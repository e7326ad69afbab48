package repostats

import (
	"sort"
	"strings"
	"time"

	"forgeapi/internal/accounts"
)

// weeksInYear is the length of the yearly statistics.
const weeksInYear = 52

// maxContributorStats is how many contributors stats/contributors shows
// (those with the most commits).
const maxContributorStats = 100

// WeekJSON is one week of a contributor's activity.
type WeekJSON struct {
	W int64 `json:"w"` // the week's first day (Sunday 00:00 UTC), Unix seconds
	A int64 `json:"a"` // additions
	D int64 `json:"d"` // deletions
	C int64 `json:"c"` // commits
}

// ContributorActivityJSON is the platform's contributor-activity object.
type ContributorActivityJSON struct {
	Author *accounts.SimpleUser `json:"author"`
	Total  int64                `json:"total"`
	Weeks  []WeekJSON           `json:"weeks"`
}

// CommitActivityJSON is the platform's commit-activity object.
type CommitActivityJSON struct {
	Days  []int64 `json:"days"`
	Total int64   `json:"total"`
	Week  int64   `json:"week"`
}

// ParticipationJSON is the platform's participation-stats object.
type ParticipationJSON struct {
	All   []int64 `json:"all"`
	Owner []int64 `json:"owner"`
}

// weekRange is the first days of the weeks from the history's first
// commit's week to the week of now (or of the last commit, if later).
func (h *History) weekRange(now time.Time) []day {
	first, last := weekOf(dayOf(now)), weekOf(dayOf(now))
	for _, a := range h.Authors {
		for _, w := range a.Weeks {
			first, last = min(first, w[0]), max(last, w[0])
		}
	}
	var out []day
	for w := first; w <= last; w += 7 {
		out = append(out, w)
	}
	return out
}

// ContributorActivity is stats/contributors: per account (an account's
// emails together), its commits other than merges, additions and
// deletions per week, over every week of the history; the
// maxContributorStats accounts with the most commits, fewest first.
// Authors not matched to an account are left out.
func ContributorActivity(base string, h *History, linked map[string]*accounts.Account, now time.Time) []ContributorActivityJSON {
	weeks := h.weekRange(now)
	index := make(map[day]int, len(weeks))
	for i, w := range weeks {
		index[w] = i
	}
	byAccount := map[int64]*ContributorActivityJSON{}
	var order []int64
	for _, a := range h.Authors {
		acc := linked[strings.ToLower(a.Email)]
		if acc == nil || len(a.Weeks) == 0 {
			continue
		}
		c := byAccount[acc.ID]
		if c == nil {
			su := accounts.ToSimpleUser(base, acc)
			c = &ContributorActivityJSON{Author: &su, Weeks: make([]WeekJSON, len(weeks))}
			for i, w := range weeks {
				c.Weeks[i].W = w * secondsPerDay
			}
			byAccount[acc.ID] = c
			order = append(order, acc.ID)
		}
		for _, w := range a.Weeks {
			x := &c.Weeks[index[w[0]]]
			x.C += w[1]
			x.A += w[2]
			x.D += w[3]
			c.Total += w[1]
		}
	}
	out := make([]ContributorActivityJSON, 0, len(order))
	for _, id := range order {
		out = append(out, *byAccount[id])
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Total > out[j].Total })
	if len(out) > maxContributorStats {
		out = out[:maxContributorStats]
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Total < out[j].Total })
	return out
}

// CodeFrequency is stats/code_frequency: [week, additions, -deletions]
// for every week of the history (merges left out).
func CodeFrequency(h *History, now time.Time) [][]int64 {
	sums := map[day][2]int64{}
	for _, a := range h.Authors {
		for _, w := range a.Weeks {
			s := sums[w[0]]
			s[0] += w[2]
			s[1] += w[3]
			sums[w[0]] = s
		}
	}
	weeks := h.weekRange(now)
	out := make([][]int64, 0, len(weeks))
	for _, w := range weeks {
		s := sums[w]
		out = append(out, []int64{w * secondsPerDay, s[0], -s[1]})
	}
	return out
}

// CommitActivity is stats/commit_activity: the commits of each day of the
// last 52 weeks (Sunday first, UTC), the current week last.
func CommitActivity(h *History, now time.Time) []CommitActivityJSON {
	perDay := map[day]int64{}
	for _, a := range h.Authors {
		for _, d := range a.Days {
			perDay[d[0]] += d[1]
		}
	}
	last := weekOf(dayOf(now))
	out := make([]CommitActivityJSON, weeksInYear)
	for i := range out {
		w := last - int64(weeksInYear-1-i)*7
		c := CommitActivityJSON{Week: w * secondsPerDay, Days: make([]int64, 7)}
		for k := range c.Days {
			c.Days[k] = perDay[w+int64(k)]
			c.Total += c.Days[k]
		}
		out[i] = c
	}
	return out
}

// Participation is stats/participation: the commits of each of the last
// 52 weeks, oldest first, all of them and the owner's (the authors
// matched to ownerID). The last week ends at today's UTC midnight.
func Participation(h *History, linked map[string]*accounts.Account, ownerID int64, now time.Time) ParticipationJSON {
	end := dayOf(now) // exclusive
	start := end - weeksInYear*7
	p := ParticipationJSON{All: make([]int64, weeksInYear), Owner: make([]int64, weeksInYear)}
	for _, a := range h.Authors {
		acc := linked[strings.ToLower(a.Email)]
		owner := acc != nil && acc.ID == ownerID
		for _, d := range a.Days {
			if d[0] < start || d[0] >= end {
				continue
			}
			i := (d[0] - start) / 7
			p.All[i] += d[1]
			if owner {
				p.Owner[i] += d[1]
			}
		}
	}
	return p
}

// PunchCard is stats/punch_card: [weekday, hour, commits] for every hour
// of the week, Sunday 0:00 first, in each commit's own time zone.
func PunchCard(h *History) [][]int {
	out := make([][]int, 0, 7*24)
	for d := range 7 {
		for hr := range 24 {
			out = append(out, []int{d, hr, h.Punch[d][hr]})
		}
	}
	return out
}
