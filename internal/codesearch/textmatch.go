package codesearch

import (
	"strings"
	"unicode/utf8"

	"forgeapi/internal/search"
)

// maxFragment is the longest fragment of a text match, in bytes around
// the match, as the platform's short fragments.
const maxFragment = 200

// textMatches is one element of the text-match media type's
// text_matches: a fragment of a property of the object found and where
// the words matched in it.
type textMatches struct {
	ObjectURL  string      `json:"object_url"`
	ObjectType string      `json:"object_type"`
	Property   string      `json:"property"`
	Fragment   string      `json:"fragment"`
	Matches    []textMatch `json:"matches"`
}

// textMatch is a word matched in a fragment: its text and its [start,
// end) offsets in the fragment, in characters.
type textMatch struct {
	Text    string `json:"text"`
	Indices []int  `json:"indices"`
}

// codeTextMatches are the fragments of a file's content (and path) that
// hold the query's words.
func codeTextMatches(objectURL string, q search.Query, c codeHit) []textMatches {
	out := []textMatches{}
	for _, prop := range []struct{ name, text string }{{"content", c.content}, {"path", c.path}} {
		if m, ok := fragmentOf(prop.text, q); ok {
			m.ObjectURL, m.ObjectType, m.Property = objectURL, "FileContent", prop.name
			out = append(out, m)
		}
	}
	return out
}

// fragmentOf cuts text around the first word of q it holds
// (case-insensitively) and lists the words found in that fragment.
func fragmentOf(text string, q search.Query) (textMatches, bool) {
	lower := strings.ToLower(text)
	if len(lower) != len(text) {
		return textMatches{}, false // case folding moved bytes: no offsets to trust
	}
	first := -1
	for _, t := range q.Terms {
		if i := strings.Index(lower, strings.ToLower(t.Text)); !t.Negated && t.Text != "" && i >= 0 && (first < 0 || i < first) {
			first = i
		}
	}
	if first < 0 {
		return textMatches{}, false
	}
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
	frag := text[start:end]
	m := textMatches{Fragment: frag, Matches: []textMatch{}}
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
			m.Matches = append(m.Matches, textMatch{Text: frag[at : at+len(word)],
				Indices: []int{runeAt, runeAt + utf8.RuneCountInString(word)}})
			from = at + len(word)
		}
	}
	return m, true
}
