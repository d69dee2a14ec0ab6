// Package query parses the Delivery group's query language: the `filter`
// expression (conditions joined by && and ||), the `sort` list and paging
// bounds.
// It produces syntax trees only; translating them to the search engine is
// the Delivery domain's job. Errors carry the byte position of the fault so
// the API can answer 400 naming it.
package query

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Op is a comparison operator of a filter condition.
type Op string

// Operators, as written in the filter language.
const (
	OpEq       Op = "="
	OpNotEq    Op = "!="
	OpLess     Op = "<"
	OpLessEq   Op = "<="
	OpGreater  Op = ">"
	OpGreatEq  Op = ">="
	OpContains Op = ":" // case-insensitive text match
)

// Cond is one condition: <field><op><value>.
type Cond struct {
	// Field is the attribute's ApiIdentifier, or the metadata field name
	// when Meta is set ("meta.type" → Field "type", Meta true).
	Field string
	Meta  bool
	Op    Op
	// Value is the unquoted value; Quoted tells whether it was written in
	// double quotes (a quoted value is always a string).
	Value  string
	Quoted bool
	// Pos is the byte offset of the condition in the expression.
	Pos int
}

// Filter is the syntax tree of a filter expression. && binds tighter
// than || and the language has no parentheses, so the tree has two
// levels, which is the whole grammar:
//
//	filter = [ conj { "||" conj } ]
//	conj   = cond { "&&" cond }
//	cond   = field op value
//
// An empty filter (no Or) matches everything.
type Filter struct {
	// Or are the alternatives joined with ||; a filter without || has one.
	Or []Conj
}

// Conj is one alternative: conditions joined with &&.
type Conj struct {
	Conds []Cond
	// OrPos is the byte offset of the || before this alternative; -1 for
	// the first one.
	OrPos int
}

// Conds returns every condition of f in written order.
func (f Filter) Conds() []Cond {
	var out []Cond
	for _, c := range f.Or {
		out = append(out, c.Conds...)
	}
	return out
}

// HasOr reports whether f joins alternatives with ||; the position is
// the byte offset of the first ||.
func (f Filter) HasOr() (int, bool) {
	if len(f.Or) > 1 {
		return f.Or[1].OrPos, true
	}
	return 0, false
}

// String renders f in canonical form (values always quoted); parsing it
// again yields the same tree up to positions and Quoted.
func (f Filter) String() string {
	var b strings.Builder
	for i, conj := range f.Or {
		if i > 0 {
			b.WriteString(" || ")
		}
		for j, c := range conj.Conds {
			if j > 0 {
				b.WriteString(" && ")
			}
			b.WriteString(c.String())
		}
	}
	return b.String()
}

// String renders c as <field><op>"<value>".
func (c Cond) String() string {
	field := c.Field
	if c.Meta {
		field = "meta." + field
	}
	v := strings.ReplaceAll(strings.ReplaceAll(c.Value, `\`, `\\`), `"`, `\"`)
	return field + string(c.Op) + `"` + v + `"`
}

// SyntaxError is a parse error at a byte offset.
type SyntaxError struct {
	Pos int
	Msg string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("filter: %s at position %d", e.Msg, e.Pos+1)
}

// ErrSyntax is matched by every *SyntaxError (errors.Is).
var ErrSyntax = errors.New("syntax error")

// Is makes errors.Is(err, ErrSyntax) true for syntax errors.
func (e *SyntaxError) Is(target error) bool { return target == ErrSyntax }

// MaxFilterLen bounds the expression so parsing cost stays trivial.
const MaxFilterLen = 4096

// ParseFilter parses `a=1 && meta.type="page" || title:"x y"`. Whitespace
// around tokens is ignored. A bare (unquoted) value runs to the next && or
// || or the end and is trimmed; inside double quotes \" and \\ are
// escapes, and && and || are plain text.
func ParseFilter(s string) (Filter, error) {
	if len(s) > MaxFilterLen {
		return Filter{}, &SyntaxError{Pos: MaxFilterLen, Msg: fmt.Sprintf("expression longer than %d bytes", MaxFilterLen)}
	}
	if !utf8.ValidString(s) {
		return Filter{}, &SyntaxError{Pos: 0, Msg: "expression is not valid UTF-8"}
	}
	p := &parser{s: s}
	var f Filter
	p.space()
	if p.eof() {
		return f, nil
	}
	conj := Conj{OrPos: -1}
	for {
		c, err := p.cond()
		if err != nil {
			return Filter{}, err
		}
		conj.Conds = append(conj.Conds, c)
		p.space()
		if p.eof() {
			f.Or = append(f.Or, conj)
			return f, nil
		}
		var op string
		switch {
		case strings.HasPrefix(p.s[p.i:], "&&"):
			op = "&&"
		case strings.HasPrefix(p.s[p.i:], "||"):
			op = "||"
			f.Or = append(f.Or, conj)
			conj = Conj{OrPos: p.i}
		default:
			return Filter{}, p.errf("expected && or || between conditions, found %q", p.peekRune())
		}
		p.i += 2
		p.space()
		if p.eof() {
			return Filter{}, p.errf("condition expected after %s", op)
		}
	}
}

type parser struct {
	s string
	i int
}

func (p *parser) eof() bool { return p.i >= len(p.s) }

func (p *parser) peekRune() rune {
	r, _ := utf8.DecodeRuneInString(p.s[p.i:])
	return r
}

func (p *parser) errf(format string, args ...any) error {
	return &SyntaxError{Pos: p.i, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) space() {
	for !p.eof() {
		r, n := utf8.DecodeRuneInString(p.s[p.i:])
		if !unicode.IsSpace(r) {
			return
		}
		p.i += n
	}
}

func isIdentRune(r rune, first bool) bool {
	if r == '_' || unicode.IsLetter(r) {
		return true
	}
	return !first && unicode.IsDigit(r)
}

func (p *parser) ident() (string, error) {
	start := p.i
	for !p.eof() {
		r, n := utf8.DecodeRuneInString(p.s[p.i:])
		if !isIdentRune(r, p.i == start) {
			break
		}
		p.i += n
	}
	if p.i == start {
		if p.eof() {
			return "", p.errf("field name expected")
		}
		return "", p.errf("field name expected, found %q", p.peekRune())
	}
	return p.s[start:p.i], nil
}

func (p *parser) cond() (Cond, error) {
	c := Cond{Pos: p.i}
	name, err := p.ident()
	if err != nil {
		return c, err
	}
	if !p.eof() && p.s[p.i] == '.' {
		if name != "meta" {
			return c, p.errf("only meta.<field> may contain a dot, not %s.", name)
		}
		p.i++
		if name, err = p.ident(); err != nil {
			return c, err
		}
		c.Meta = true
	}
	c.Field = name
	p.space()
	if c.Op, err = p.op(); err != nil {
		return c, err
	}
	p.space()
	c.Value, c.Quoted, err = p.value()
	return c, err
}

func (p *parser) op() (Op, error) {
	for _, op := range []Op{OpNotEq, OpLessEq, OpGreatEq, OpEq, OpLess, OpGreater, OpContains} {
		if strings.HasPrefix(p.s[p.i:], string(op)) {
			p.i += len(op)
			return op, nil
		}
	}
	if p.eof() {
		return "", p.errf("operator expected (= != < > <= >= :)")
	}
	return "", p.errf("operator expected (= != < > <= >= :), found %q", p.peekRune())
}

func (p *parser) value() (string, bool, error) {
	if p.eof() || strings.HasPrefix(p.s[p.i:], "&&") || strings.HasPrefix(p.s[p.i:], "||") {
		return "", false, p.errf("value expected")
	}
	if p.s[p.i] != '"' {
		// A bare value runs to the next && or ||.
		start := p.i
		end := len(p.s) - p.i
		for _, sep := range []string{"&&", "||"} {
			if k := strings.Index(p.s[p.i:], sep); k >= 0 && k < end {
				end = k
			}
		}
		p.i += end
		v := strings.TrimSpace(p.s[start:p.i])
		if strings.ContainsRune(v, '"') {
			return "", false, &SyntaxError{Pos: start + strings.IndexRune(p.s[start:], '"'), Msg: "a quote inside an unquoted value"}
		}
		return v, false, nil
	}
	open := p.i
	p.i++
	var b strings.Builder
	for !p.eof() {
		ch := p.s[p.i]
		switch ch {
		case '\\':
			if p.i+1 >= len(p.s) || (p.s[p.i+1] != '"' && p.s[p.i+1] != '\\') {
				return "", false, p.errf(`only \" and \\ may be escaped`)
			}
			b.WriteByte(p.s[p.i+1])
			p.i += 2
		case '"':
			p.i++
			return b.String(), true, nil
		default:
			b.WriteByte(ch)
			p.i++
		}
	}
	return "", false, &SyntaxError{Pos: open, Msg: "unterminated quoted value"}
}
