// Package search reads the platform's search query syntax: words,
// "quoted phrases", qualifiers (key:value, with "quoted values"), and
// negation (-word, -key:value, NOT word). The areas that search (issues
// and pull requests, repositories, users) turn a Query into their own
// selection; this package knows no tables.
package search

import (
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Query is a search query read.
type Query struct {
	// Terms are the words and phrases, in order.
	Terms []Term
	// Qualifiers are the key:value pairs, in order; keys are lowercase.
	Qualifiers []Qualifier
}

// Term is a word or a quoted phrase; Negated for -word or NOT word.
type Term struct {
	Text    string
	Negated bool
}

// Qualifier is key:value; Negated for -key:value.
type Qualifier struct {
	Key, Value string
	Negated    bool
}

// MaxLength is the longest query the platform accepts, in characters.
const MaxLength = 256

// Parse reads a query. It never fails: what is not a qualifier is a
// term, as on the platform.
func Parse(text string) Query {
	var q Query
	negateNext := false
	for _, tok := range tokens(text) {
		if tok.text == "NOT" && !tok.quoted {
			negateNext = true
			continue
		}
		negated := negateNext
		negateNext = false
		raw := tok.text
		if !tok.quoted && strings.HasPrefix(raw, "-") && len(raw) > 1 {
			negated, raw = true, raw[1:]
		}
		if !tok.quoted {
			if key, value, ok := strings.Cut(raw, ":"); ok && key != "" && value != "" && isKey(key) {
				q.Qualifiers = append(q.Qualifiers, Qualifier{Key: strings.ToLower(key), Value: value, Negated: negated})
				continue
			}
		}
		q.Terms = append(q.Terms, Term{Text: raw, Negated: negated})
	}
	return q
}

// Known keeps the qualifiers whose keys known lists and turns the others
// into terms ("key:value" as text), as the platform reads a qualifier it
// does not know for the type searched.
func (q Query) Known(known ...string) Query {
	out := Query{Terms: q.Terms}
	for _, ql := range q.Qualifiers {
		if slices.Contains(known, ql.Key) {
			out.Qualifiers = append(out.Qualifiers, ql)
		} else {
			out.Terms = append(out.Terms, Term{Text: ql.Key + ":" + ql.Value, Negated: ql.Negated})
		}
	}
	return out
}

// Values returns the values of the qualifiers of key that are not
// negated, in order.
func (q Query) Values(key string) []string {
	var out []string
	for _, ql := range q.Qualifiers {
		if ql.Key == key && !ql.Negated {
			out = append(out, ql.Value)
		}
	}
	return out
}

// Value is the last value of key's qualifiers that are not negated, ""
// when none.
func (q Query) Value(key string) string {
	v := q.Values(key)
	if len(v) == 0 {
		return ""
	}
	return v[len(v)-1]
}

func isKey(s string) bool {
	for _, r := range s {
		if !unicode.IsLetter(r) && r != '-' && r != '_' {
			return false
		}
	}
	return true
}

type token struct {
	text   string
	quoted bool
}

// tokens splits text on spaces, keeping "quoted phrases" and
// key:"quoted values" whole (without their quotes); a token that starts
// with a quote is a phrase (quoted).
func tokens(text string) []token {
	var out []token
	var b strings.Builder
	inQuote, quoted := false, false
	flush := func() {
		if b.Len() > 0 {
			out = append(out, token{text: b.String(), quoted: quoted})
		}
		b.Reset()
		quoted = false
	}
	for _, r := range text {
		switch {
		case r == '"':
			if !inQuote && b.Len() == 0 {
				quoted = true
			}
			inQuote = !inQuote
		case unicode.IsSpace(r) && !inQuote:
			flush()
		default:
			b.WriteRune(r)
		}
	}
	flush()
	return out
}

// Range is a qualifier's range of numbers or dates: >n, >=n, <n, <=n,
// a..b, a..*, *..b, or one value (Min = Max).
type Range struct {
	Min, Max string // "" for unbounded
	// MinExclusive and MaxExclusive are set for > and <.
	MinExclusive, MaxExclusive bool
}

// ParseRange reads a range qualifier's value.
func ParseRange(v string) Range {
	switch {
	case strings.HasPrefix(v, ">="):
		return Range{Min: v[2:]}
	case strings.HasPrefix(v, ">"):
		return Range{Min: v[1:], MinExclusive: true}
	case strings.HasPrefix(v, "<="):
		return Range{Max: v[2:]}
	case strings.HasPrefix(v, "<"):
		return Range{Max: v[1:], MaxExclusive: true}
	}
	if lo, hi, ok := strings.Cut(v, ".."); ok {
		if lo == "*" {
			lo = ""
		}
		if hi == "*" {
			hi = ""
		}
		return Range{Min: lo, Max: hi}
	}
	return Range{Min: v, Max: v}
}

// DateBounds turns a date range (YYYY-MM-DD, or a date and time in ISO
// 8601) into the instants it covers: from is inclusive, to exclusive;
// zero for unbounded. ok is false for a value that is not a date.
func (r Range) DateBounds() (from, to time.Time, ok bool) {
	parse := func(s string) (time.Time, time.Duration, bool) {
		if t, err := time.Parse("2006-01-02", s); err == nil {
			return t, 24 * time.Hour, true
		}
		if t, err := time.Parse(time.RFC3339, s); err == nil {
			return t, time.Second, true
		}
		if t, err := time.Parse("2006-01-02T15:04:05", s); err == nil {
			return t, time.Second, true
		}
		return time.Time{}, 0, false
	}
	if r.Min != "" {
		t, step, valid := parse(r.Min)
		if !valid {
			return from, to, false
		}
		from = t
		if r.MinExclusive {
			from = t.Add(step)
		}
	}
	if r.Max != "" {
		t, step, valid := parse(r.Max)
		if !valid {
			return from, to, false
		}
		to = t.Add(step)
		if r.MaxExclusive {
			to = t
		}
	}
	return from, to, true
}

// IntCondition is the SQL condition of a numeric range qualifier's value
// on column, with ? for its arguments (column >= ?, column < ?, ...); ok
// is false for a value that is not a range of integers.
func IntCondition(column, value string) (cond string, args []any, ok bool) {
	rg := ParseRange(value)
	var conds []string
	for _, b := range []struct {
		v         string
		exclusive bool
		op, opEx  string
	}{{rg.Min, rg.MinExclusive, " >= ?", " > ?"}, {rg.Max, rg.MaxExclusive, " <= ?", " < ?"}} {
		if b.v == "" {
			continue
		}
		n, err := strconv.Atoi(b.v)
		if err != nil {
			return "", nil, false
		}
		op := b.op
		if b.exclusive {
			op = b.opEx
		}
		conds, args = append(conds, column+op), append(args, n)
	}
	if len(conds) == 0 {
		return "", nil, false
	}
	return "(" + strings.Join(conds, " AND ") + ")", args, true
}

// DateCondition is the SQL condition of a date range qualifier's value on
// column, with ? for its arguments; an unbounded range is column IS NOT
// NULL. ok is false for a value that is not a date range.
func DateCondition(column, value string) (cond string, args []any, ok bool) {
	from, to, ok := ParseRange(value).DateBounds()
	if !ok {
		return "", nil, false
	}
	var conds []string
	if !from.IsZero() {
		conds, args = append(conds, column+" >= ?"), append(args, from)
	}
	if !to.IsZero() {
		conds, args = append(conds, column+" < ?"), append(args, to)
	}
	if len(conds) == 0 {
		return column + " IS NOT NULL", nil, true
	}
	return "(" + strings.Join(conds, " AND ") + ")", args, true
}

// Like is the LIKE pattern (with ESCAPE '\') of text anywhere in a
// lowercased column.
func Like(text string) string {
	return "%" + strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`).Replace(strings.ToLower(text)) + "%"
}

// Where is a SQL WHERE clause under construction: conditions written
// with ? for their arguments, numbered $1, $2, ... as they are added.
type Where struct {
	conds []string
	// Args are the arguments of the conditions, in placeholder order.
	Args []any
}

// Add adds cond, its ?s bound to args in order; negated adds NOT cond.
func (w *Where) Add(cond string, negated bool, args ...any) {
	for _, a := range args {
		w.Args = append(w.Args, a)
		cond = strings.Replace(cond, "?", "$"+strconv.Itoa(len(w.Args)), 1)
	}
	if negated {
		cond = "NOT " + cond
	}
	w.conds = append(w.conds, cond)
}

// String is the conditions joined with AND ("1 = 1" when there are none).
func (w *Where) String() string {
	if len(w.conds) == 0 {
		return "1 = 1"
	}
	return strings.Join(w.conds, " AND ")
}

// Placeholder is the placeholder of the argument after the conditions'
// (and after n more): for LIMIT and OFFSET.
func (w *Where) Placeholder(n int) string { return "$" + strconv.Itoa(len(w.Args)+1+n) }
