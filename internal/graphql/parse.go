package graphql

import (
	"encoding/json"
	"errors"
	"strconv"
	"unicode"
)

// operation is one parsed GraphQL operation: "query" or "mutation" and
// its root selection. Variable definitions are read and skipped: the
// request's variables are looked up by name when a field's argument uses
// them.
type operation struct {
	kind   string
	fields []field
}

// field is one selected field: its response key (the alias, else the
// name), name, arguments and sub-selection (nil for a leaf).
type field struct {
	key, name string
	args      map[string]value
	sel       []field
}

// value is an argument's value as written: a literal (string, int64,
// bool, nil, enum name as string, list, object) or a variable.
type value struct {
	variable string // set for $name
	literal  any    // string, int64, bool, nil, []value, map[string]value
}

// variables are the request's variables, by name, as sent.
type variables map[string]json.RawMessage

// resolve returns the argument's value with variables substituted,
// decoded as encoding/json decodes (string, float64, bool, nil, []any,
// map[string]any) so that literals and variables compare alike.
func (v value) resolve(vars variables) any {
	if v.variable != "" {
		var out any
		if raw, ok := vars[v.variable]; ok && json.Unmarshal(raw, &out) == nil {
			return out
		}
		return nil
	}
	switch l := v.literal.(type) {
	case int64:
		return float64(l)
	case []value:
		out := make([]any, len(l))
		for i, e := range l {
			out[i] = e.resolve(vars)
		}
		return out
	case map[string]value:
		out := make(map[string]any, len(l))
		for k, e := range l {
			out[k] = e.resolve(vars)
		}
		return out
	}
	return v.literal
}

// errSyntax is any query the parser does not read: forgeapi answers it
// with the "serves the REST API" error.
var errSyntax = errors.New("graphql: unsupported query")

// parse reads a document of exactly one operation without fragments or
// directives: `[query|mutation [Name] [($v: T ...)]] { selection }`.
func parse(q string) (*operation, error) {
	p := &parser{toks: tokens(q)}
	op := &operation{kind: "query"}
	if t := p.peek(); t.kind == tokName && (t.text == "query" || t.text == "mutation") {
		op.kind = p.next().text
		if p.peek().kind == tokName {
			p.next()
		}
		if p.peek().is("(") {
			if err := p.skipVariableDefinitions(); err != nil {
				return nil, err
			}
		}
	}
	fields, err := p.selection()
	if err != nil {
		return nil, err
	}
	if p.peek().kind != tokEOF {
		return nil, errSyntax
	}
	op.fields = fields
	return op, nil
}

// token kinds.
const (
	tokEOF = iota
	tokName
	tokPunct
	tokString
	tokInt
	tokVariable
)

type token struct {
	kind int
	text string
}

func (t token) is(punct string) bool { return t.kind == tokPunct && t.text == punct }

type parser struct {
	toks  []token
	pos   int
	depth int // of selections, lists and objects being read
}

// maxDepth bounds the nesting of selections, lists and objects: no
// operation forgeapi answers comes near it, and a deeper one is refused
// before it costs a deep recursion.
const maxDepth = 16

// enter counts one more level of nesting; errSyntax beyond maxDepth.
// The caller defers p.leave().
func (p *parser) enter() error {
	p.depth++
	if p.depth > maxDepth {
		return errSyntax
	}
	return nil
}

func (p *parser) leave() { p.depth-- }

func (p *parser) peek() token {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return token{kind: tokEOF}
}

func (p *parser) next() token {
	t := p.peek()
	if p.pos < len(p.toks) {
		p.pos++
	}
	return t
}

func (p *parser) expect(punct string) error {
	if !p.next().is(punct) {
		return errSyntax
	}
	return nil
}

// skipVariableDefinitions skips `( $v: Type! = default ... )`.
func (p *parser) skipVariableDefinitions() error {
	depth := 0
	for {
		t := p.next()
		switch {
		case t.kind == tokEOF:
			return errSyntax
		case t.is("(") || t.is("[") || t.is("{"):
			depth++
		case t.is(")") || t.is("]") || t.is("}"):
			depth--
			if depth == 0 {
				return nil
			}
		}
	}
}

// selection reads `{ field ... }`.
func (p *parser) selection() ([]field, error) {
	defer p.leave()
	if err := p.enter(); err != nil {
		return nil, err
	}
	if err := p.expect("{"); err != nil {
		return nil, err
	}
	var out []field
	for !p.peek().is("}") {
		f, err := p.field()
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	p.next()
	if len(out) == 0 {
		return nil, errSyntax
	}
	return out, nil
}

// field reads `[alias:] name [(args)] [{ selection }]`.
func (p *parser) field() (field, error) {
	t := p.next()
	if t.kind != tokName {
		return field{}, errSyntax
	}
	f := field{key: t.text, name: t.text}
	if p.peek().is(":") {
		p.next()
		n := p.next()
		if n.kind != tokName {
			return field{}, errSyntax
		}
		f.name = n.text
	}
	if p.peek().is("(") {
		p.next()
		f.args = map[string]value{}
		for !p.peek().is(")") {
			name, v, err := p.argument()
			if err != nil {
				return field{}, err
			}
			f.args[name] = v
		}
		p.next()
	}
	if p.peek().is("{") {
		sel, err := p.selection()
		if err != nil {
			return field{}, err
		}
		f.sel = sel
	}
	return f, nil
}

// argument reads `name: value` (of arguments and object fields).
func (p *parser) argument() (string, value, error) {
	n := p.next()
	if n.kind != tokName || !p.next().is(":") {
		return "", value{}, errSyntax
	}
	v, err := p.value()
	return n.text, v, err
}

// value reads a variable, string, integer, true/false/null, enum name,
// list or object.
func (p *parser) value() (value, error) {
	defer p.leave()
	if err := p.enter(); err != nil {
		return value{}, err
	}
	t := p.next()
	switch {
	case t.kind == tokVariable:
		return value{variable: t.text}, nil
	case t.kind == tokString:
		return value{literal: t.text}, nil
	case t.kind == tokInt:
		n, err := strconv.ParseInt(t.text, 10, 64)
		if err != nil {
			return value{}, errSyntax
		}
		return value{literal: n}, nil
	case t.kind == tokName:
		switch t.text {
		case "true":
			return value{literal: true}, nil
		case "false":
			return value{literal: false}, nil
		case "null":
			return value{literal: nil}, nil
		}
		return value{literal: t.text}, nil
	case t.is("["):
		var list []value
		for !p.peek().is("]") {
			v, err := p.value()
			if err != nil {
				return value{}, err
			}
			list = append(list, v)
		}
		p.next()
		return value{literal: list}, nil
	case t.is("{"):
		obj := map[string]value{}
		for !p.peek().is("}") {
			name, v, err := p.argument()
			if err != nil {
				return value{}, err
			}
			obj[name] = v
		}
		p.next()
		return value{literal: obj}, nil
	}
	return value{}, errSyntax
}

// tokens splits a query into names, $variables, strings, integers and
// punctuation, dropping commas, white space and comments. A string's
// escapes are decoded as JSON's (which GraphQL's match); an unterminated
// string or a float ends the tokens with an invalid one.
func tokens(q string) []token {
	var out []token
	for i := 0; i < len(q); {
		c := rune(q[i])
		switch {
		case c == '#':
			for i < len(q) && q[i] != '\n' {
				i++
			}
		case c == ',' || unicode.IsSpace(c):
			i++
		case c == '$' || isNameStart(c):
			j := i + 1
			for j < len(q) && isNameChar(rune(q[j])) {
				j++
			}
			if c == '$' && j == i+1 {
				out = append(out, token{tokPunct, "$"}) // no name: read by nothing
			} else if c == '$' {
				out = append(out, token{tokVariable, q[i+1 : j]})
			} else {
				out = append(out, token{tokName, q[i:j]})
			}
			i = j
		case c == '-' || unicode.IsDigit(c):
			j := i + 1
			for j < len(q) && unicode.IsDigit(rune(q[j])) {
				j++
			}
			out = append(out, token{tokInt, q[i:j]})
			i = j
		case c == '"':
			j := i + 1
			for j < len(q) && q[j] != '"' {
				if q[j] == '\\' {
					j++
				}
				j++
			}
			var s string
			if j >= len(q) || json.Unmarshal([]byte(q[i:j+1]), &s) != nil {
				return append(out, token{tokPunct, "\x00"})
			}
			out = append(out, token{tokString, s})
			i = j + 1
		default:
			out = append(out, token{tokPunct, string(c)})
			i++
		}
	}
	return out
}

func isNameStart(c rune) bool { return c == '_' || c < 128 && unicode.IsLetter(c) }
func isNameChar(c rune) bool  { return isNameStart(c) || c < 128 && unicode.IsDigit(c) }
