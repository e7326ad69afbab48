package search

import (
	"net/http"
	"strings"
	"unicode/utf8"
)

// maxFragment is the longest fragment of a text match, in bytes around
// the match, as the platform's short fragments.
const maxFragment = 200

// TextMatches is one element of the text-match media type's
// text_matches: a fragment of a property of the object found and where
// the words matched in it.
type TextMatches struct {
	ObjectURL  string  `json:"object_url"`
	ObjectType string  `json:"object_type"`
	Property   string  `json:"property"`
	Fragment   string  `json:"fragment"`
	Matches    []Match `json:"matches"`
}

// Match is a word matched in a fragment: its text and its [start,
// end) offsets in the fragment, in characters.
type Match struct {
	Text    string `json:"text"`
	Indices []int  `json:"indices"`
}

// Property is a text property of a found object (title, body, content,
// path…) that text matches are cut from.
type Property struct{ Name, Text string }

// WantsTextMatches reports whether the request asks for the text-match
// media type (application/vnd.github.text-match+json).
func WantsTextMatches(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "text-match")
}

// TextMatchesOf are the fragments of the object's properties that hold
// q's words, one a property that holds any, in the order given; never
// nil.
func TextMatchesOf(objectURL, objectType string, q Query, props ...Property) []TextMatches {
	out := []TextMatches{}
	for _, p := range props {
		if m, ok := FragmentOf(p.Text, q); ok {
			m.ObjectURL, m.ObjectType, m.Property = objectURL, objectType, p.Name
			out = append(out, m)
		}
	}
	return out
}

// FragmentOf cuts text around the first word of q it holds
// (case-insensitively), within its line and maxFragment bytes, and lists
// the words found in that fragment; ok is false when text holds none.
func FragmentOf(text string, q Query) (m TextMatches, ok bool) {
	lower := strings.ToLower(text)
	if len(lower) != len(text) {
		return TextMatches{}, false // case folding moved bytes: no offsets to trust
	}
	first := firstWord(lower, q)
	if first < 0 {
		return TextMatches{}, false
	}
	start, end := fragmentBounds(text, first)
	frag := text[start:end]
	m = TextMatches{Fragment: frag, Matches: []Match{}}
	lowerFrag := lower[start:end]
	for _, t := range q.Terms {
		word := strings.ToLower(t.Text)
		if t.Negated || word == "" {
			continue
		}
		for from := 0; ; {
			i := strings.Index(lowerFrag[from:], word)
			if i < 0 {
				break
			}
			at := from + i
			runeAt := utf8.RuneCountInString(frag[:at])
			m.Matches = append(m.Matches, Match{Text: frag[at : at+len(word)],
				Indices: []int{runeAt, runeAt + utf8.RuneCountInString(word)}})
			from = at + len(word)
		}
	}
	return m, true
}

// firstWord is the offset in lower of the first word of q it holds, or -1.
func firstWord(lower string, q Query) int {
	first := -1
	for _, t := range q.Terms {
		if t.Negated || t.Text == "" {
			continue
		}
		if i := strings.Index(lower, strings.ToLower(t.Text)); i >= 0 && (first < 0 || i < first) {
			first = i
		}
	}
	return first
}

// fragmentBounds are the [start, end) byte offsets of the fragment of
// text around the match at first: from its line's start (or half a
// fragment before) to its line's end or maxFragment bytes, on character
// boundaries.
func fragmentBounds(text string, first int) (int, int) {
	start := strings.LastIndexByte(text[:first], '\n') + 1
	if first-start > maxFragment/2 {
		start = first - maxFragment/2
	}
	end := start + maxFragment
	if nl := strings.IndexByte(text[first:], '\n'); nl >= 0 && first+nl < end {
		end = first + nl
	}
	end = min(end, len(text))
	for start > 0 && !utf8.RuneStart(text[start]) {
		start--
	}
	for end < len(text) && !utf8.RuneStart(text[end]) {
		end++
	}
	return start, end
}
