package store

import "strings"

// positional returns the query with its parameters $1, $2, ... $n
// written as plain ? when each appears once and in that order, and the
// query unchanged otherwise. SQLite binds both the same way, but looks up
// the name of every named parameter ($N is one) in a list when binding,
// once per parameter: quadratic in the parameters, which a multi-row
// INSERT of a hundred parameters and more pays. Quoted strings, quoted identifiers and
// comments are left alone.
func positional(query string) string {
	if !strings.Contains(query, "$") {
		return query
	}
	var b strings.Builder
	next := 1 // the parameter expected next
	for i := 0; i < len(query); {
		c := query[i]
		switch {
		case c == '\'' || c == '"':
			end := strings.IndexByte(query[i+1:], c)
			if end < 0 {
				return query
			}
			b.WriteString(query[i : i+end+2])
			i += end + 2
		case c == '-' && strings.HasPrefix(query[i:], "--"):
			end := strings.IndexByte(query[i:], '\n')
			if end < 0 {
				end = len(query) - i
			}
			b.WriteString(query[i : i+end])
			i += end
		case c == '/' && strings.HasPrefix(query[i:], "/*"):
			end := strings.Index(query[i+2:], "*/")
			if end < 0 {
				return query
			}
			b.WriteString(query[i : i+end+4])
			i += end + 4
		case c == '?':
			return query
		case c == '$':
			j := i + 1
			n := 0
			for j < len(query) && query[j] >= '0' && query[j] <= '9' && n <= 1<<20 {
				n = n*10 + int(query[j]-'0')
				j++
			}
			if j == i+1 || n != next || query[i+1] == '0' {
				return query
			}
			b.WriteByte('?')
			next++
			i = j
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}
