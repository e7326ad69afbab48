package gitwrite

import (
	"net/url"
	"strings"
)

// CheckGitmodules refuses the content of a .gitmodules file (IsGitmodules)
// that git's fsck refuses, with the reason: a file that does not parse as
// git configuration (gitmodulesParse, which the server's push checks make
// an error too), and submodules whose name holds a ".." component
// (gitmodulesName), whose url or path starts with "-" or whose url holds a
// newline (gitmodulesUrl, gitmodulesPath), or whose update setting is a
// command (gitmodulesUpdate). It returns nil or a *Refusal.
func CheckGitmodules(content []byte) error {
	var refusal error
	ok := parseConfig(content, func(name, value string) {
		section, rest, _ := strings.Cut(name, ".")
		i := strings.LastIndexByte(rest, '.')
		if refusal != nil || section != "submodule" || i < 0 {
			return
		}
		sub, key := rest[:i], rest[i+1:]
		switch {
		case !validSubmoduleName(sub):
			refusal = refuse("disallowed submodule name: %s", sub)
		case key == "url" && (strings.HasPrefix(value, "-") || strings.Contains(decodedURL(value), "\n")):
			refusal = refuse("disallowed submodule url: %s", value)
		case key == "path" && strings.HasPrefix(value, "-"):
			refusal = refuse("disallowed submodule path: %s", value)
		case key == "update" && strings.HasPrefix(value, "!"):
			refusal = refuse("disallowed submodule update setting: %s", value)
		}
	})
	if !ok {
		return refuse(".gitmodules does not parse as git configuration")
	}
	return refusal
}

// validSubmoduleName reports whether git accepts a submodule's name: not
// empty, and no ".." component between '/' or '\' separators (git's
// check_submodule_name).
func validSubmoduleName(name string) bool {
	if name == "" {
		return false
	}
	for _, c := range strings.FieldsFunc(name, func(r rune) bool { return r == '/' || r == '\\' }) {
		if c == ".." {
			return false
		}
	}
	return true
}

// decodedURL is a url with its percent escapes undone, where they parse.
func decodedURL(v string) string {
	if d, err := url.PathUnescape(v); err == nil {
		return d
	}
	return v
}

// parseConfig reads data as git reads a configuration file (config.c,
// git_parse_source, git 2.39), calling fn with each variable's full name
// ("section.subsection.key", section and key in lower case) and value,
// and reports whether all of it parses.
func parseConfig(data []byte, fn func(name, value string)) bool {
	p := &configParser{data: data}
	if strings.HasPrefix(string(data), "\xef\xbb\xbf") {
		p.pos = 3 // a UTF-8 byte order mark
	}
	var stem string // "section." or "section.subsection."
	comment := false
	for {
		c := p.next()
		switch {
		case c == '\n':
			if p.eof {
				return true
			}
			comment = false
		case comment || isConfigSpace(c):
		case c == '#' || c == ';':
			comment = true
		case c == '[':
			section, ok := p.section()
			if !ok || section == "" {
				return false
			}
			stem = section + "."
		case isAlpha(c):
			name, value, ok := p.variable(stem + string(toLower(c)))
			if !ok {
				return false
			}
			fn(name, value)
		default:
			return false
		}
	}
}

// configParser is the position in a configuration file; at its end next
// returns '\n' with eof set, as git's get_next_char does.
type configParser struct {
	data []byte
	pos  int
	eof  bool
}

func (p *configParser) next() byte {
	if p.pos >= len(p.data) {
		p.eof = true
		return '\n'
	}
	c := p.data[p.pos]
	p.pos++
	if c == '\r' && p.pos < len(p.data) && p.data[p.pos] == '\n' {
		p.pos++
		return '\n'
	}
	return c
}

// section reads a section header after its '[': "name]" or
// `name "subsection"]` (git's get_base_var).
func (p *configParser) section() (string, bool) {
	var name []byte
	for {
		c := p.next()
		switch {
		case p.eof:
			return "", false
		case c == ']':
			return string(name), true
		case isConfigSpace(c):
			return p.subsection(string(name), c)
		case !isKeyChar(c) && c != '.':
			return "", false
		}
		name = append(name, toLower(c))
	}
}

// subsection reads `"subsection"]` after a section name and a space
// (git's get_extended_base_var).
func (p *configParser) subsection(name string, c byte) (string, bool) {
	for isConfigSpace(c) {
		if c == '\n' {
			return "", false
		}
		c = p.next()
	}
	if c != '"' {
		return "", false
	}
	sub := []byte(name + ".")
	for {
		c := p.next()
		if c == '\n' {
			return "", false
		}
		if c == '"' {
			break
		}
		if c == '\\' {
			if c = p.next(); c == '\n' {
				return "", false
			}
		}
		sub = append(sub, c)
	}
	return string(sub), p.next() == ']'
}

// variable reads the rest of a variable's name and its value, "" when it
// has none (git's get_value and parse_value).
func (p *configParser) variable(name string) (string, string, bool) {
	key := []byte(name)
	c := p.next()
	for !p.eof && isKeyChar(c) {
		key = append(key, toLower(c))
		c = p.next()
	}
	for c == ' ' || c == '\t' {
		c = p.next()
	}
	if c == '\n' {
		return string(key), "", true
	}
	if c != '=' {
		return "", "", false
	}
	var value []byte
	quote, comment, spaces := false, false, 0
	for {
		c := p.next()
		switch {
		case c == '\n':
			return string(key), string(value), !quote
		case comment:
		case isConfigSpace(c) && !quote:
			if len(value) > 0 {
				spaces++
			}
		case !quote && (c == ';' || c == '#'):
			comment = true
		default:
			for ; spaces > 0; spaces-- {
				value = append(value, ' ')
			}
			switch c {
			case '\\':
				switch c = p.next(); c {
				case '\n':
					continue
				case 't':
					c = '\t'
				case 'b':
					c = '\b'
				case 'n':
					c = '\n'
				case '\\', '"':
				default:
					return "", "", false
				}
				value = append(value, c)
			case '"':
				quote = !quote
			default:
				value = append(value, c)
			}
		}
	}
}

// isConfigSpace is git's isspace: space, tab, newline, carriage return.
func isConfigSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isAlpha(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// isKeyChar is git's iskeychar: a letter, a digit or '-'.
func isKeyChar(c byte) bool { return isAlpha(c) || '0' <= c && c <= '9' || c == '-' }
