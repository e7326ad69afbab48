package search

import (
	"reflect"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	got := Parse(`crash "null pointer" is:pr -label:wontfix label:"good first issue" NOT flaky -draft repo:octo/hello`)
	want := Query{
		Terms: []Term{{Text: "crash"}, {Text: "null pointer"}, {Text: "flaky", Negated: true}, {Text: "draft", Negated: true}},
		Qualifiers: []Qualifier{{Key: "is", Value: "pr"}, {Key: "label", Value: "wontfix", Negated: true},
			{Key: "label", Value: "good first issue"}, {Key: "repo", Value: "octo/hello"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Parse:\n got %+v\nwant %+v", got, want)
	}
	if v := got.Values("label"); !reflect.DeepEqual(v, []string{"good first issue"}) {
		t.Fatalf("Values(label) = %v", v)
	}
	if q := Parse(`"a:b" http://x`).Known("repo"); len(q.Qualifiers) != 0 || len(q.Terms) != 2 || q.Terms[1].Text != "http://x" {
		t.Fatalf("a quoted colon and an unknown qualifier are terms: %+v", q)
	}
}

func TestRange(t *testing.T) {
	day := func(s string) time.Time { d, _ := time.Parse("2006-01-02", s); return d }
	for _, tc := range []struct {
		in       string
		from, to time.Time
	}{
		{"2026-01-02", day("2026-01-02"), day("2026-01-03")},
		{">2026-01-02", day("2026-01-03"), time.Time{}},
		{">=2026-01-02", day("2026-01-02"), time.Time{}},
		{"<2026-01-02", time.Time{}, day("2026-01-02")},
		{"<=2026-01-02", time.Time{}, day("2026-01-03")},
		{"2026-01-02..2026-01-04", day("2026-01-02"), day("2026-01-05")},
		{"2026-01-02..*", day("2026-01-02"), time.Time{}},
	} {
		from, to, ok := ParseRange(tc.in).DateBounds()
		if !ok || !from.Equal(tc.from) || !to.Equal(tc.to) {
			t.Errorf("%s: [%v, %v) %v, want [%v, %v)", tc.in, from, to, ok, tc.from, tc.to)
		}
	}
	if _, _, ok := ParseRange("yesterday").DateBounds(); ok {
		t.Error("a word is a date")
	}
}

func TestWhereNumbersPlaceholders(t *testing.T) {
	var w Where
	if w.String() != "1 = 1" {
		t.Errorf("empty: %q", w.String())
	}
	w.Add("a = ?", false, 1)
	w.Add("(b > ? AND c < ?)", true, 2, 3)
	w.Add("d IS NULL", false)
	if got, want := w.String(), "a = $1 AND NOT (b > $2 AND c < $3) AND d IS NULL"; got != want {
		t.Errorf("where = %q, want %q", got, want)
	}
	if len(w.Args) != 3 || w.Placeholder(0) != "$4" || w.Placeholder(1) != "$5" {
		t.Errorf("args %v, next %s", w.Args, w.Placeholder(0))
	}
}
