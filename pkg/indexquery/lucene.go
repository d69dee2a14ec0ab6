package indexquery

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/search"
)

// Node is a parsed Lucene query (the subset ParseLucene reads).
type Node struct {
	// Leaf: one word (may hold the wildcards * and ?) or a phrase.
	Words  []string
	Phrase bool
	// Boolean: clauses with their occurrence.
	Clauses []Clause
}

// Occur is how a clause takes part in a boolean query.
type Occur int

// Occurrences of a clause, as in Lucene's BooleanClause.
const (
	Should Occur = iota
	Must
	MustNot
)

// Clause is one part of a boolean Node.
type Clause struct {
	Occur Occur
	Node  *Node
}

// ParseLucene reads the classic Lucene syntax subset: words (lower-cased,
// split like indexdoc.Words), wildcards * and ?, "phrases", + and -,
// AND / OR / NOT (&&, ||, !), parentheses. A field prefix ("name:") is
// accepted and ignored: the caller picks the field. Plain clauses are
// required, or optional with useOr (Lucene's default operator).
func ParseLucene(q string, useOr bool) (*Node, error) {
	p := &luceneParser{toks: lexLucene(q), useOr: useOr}
	n, err := p.parse(0)
	if err != nil {
		return nil, err
	}
	if p.pos < len(p.toks) {
		return nil, fmt.Errorf("unexpected %q", p.toks[p.pos])
	}
	if len(n.Clauses) == 0 {
		return nil, errors.New("query has no terms")
	}
	return n, nil
}

// parseCapped parses q, the request field name, after checking it against
// MaxPhraseBytes, and refuses a query of more than MaxPhraseTerms words.
func parseCapped(name, q string, useOr bool) (*Node, error) {
	if err := checkPhrase(name, q); err != nil {
		return nil, err
	}
	n, err := ParseLucene(q, useOr)
	if err != nil {
		return nil, invalid("%s: %v", name, err)
	}
	if err := checkTerms(name, n.terms()); err != nil {
		return nil, err
	}
	return n, nil
}

// terms is the number of words in n's leaves.
func (n *Node) terms() int {
	t := len(n.Words)
	for _, c := range n.Clauses {
		t += c.Node.terms()
	}
	return t
}

func lexLucene(q string) []string {
	var toks []string
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '(' || c == ')' || c == '+' || c == '-' || c == '!':
			toks = append(toks, string(c))
			i++
		case strings.HasPrefix(q[i:], "&&") || strings.HasPrefix(q[i:], "||"):
			toks = append(toks, map[byte]string{'&': "AND", '|': "OR"}[c])
			i += 2
		case c == '"':
			j := strings.IndexByte(q[i+1:], '"')
			if j < 0 {
				toks = append(toks, q[i:])
				return toks
			}
			toks = append(toks, q[i:i+j+2])
			i += j + 2
		default:
			j := i
			for j < len(q) && !strings.ContainsRune(" \t\r\n()\"", rune(q[j])) {
				j++
			}
			toks = append(toks, q[i:j])
			i = j
		}
	}
	return toks
}

type luceneParser struct {
	toks  []string
	pos   int
	useOr bool
}

func (p *luceneParser) parse(depth int) (*Node, error) {
	if depth > 20 {
		return nil, errors.New("nested too deeply")
	}
	n := &Node{}
	def := Must
	if p.useOr {
		def = Should
	}
	pending := -1 // occurrence forced by AND/OR/NOT for the next clause
	for p.pos < len(p.toks) {
		t := p.toks[p.pos]
		switch t {
		case ")":
			if depth == 0 {
				return nil, errors.New("unbalanced )")
			}
			return n, nil
		case "AND":
			if len(n.Clauses) == 0 {
				return nil, errors.New("AND without a left side")
			}
			if last := &n.Clauses[len(n.Clauses)-1]; last.Occur != MustNot {
				last.Occur = Must
			}
			pending = int(Must)
			p.pos++
			continue
		case "OR":
			if len(n.Clauses) == 0 {
				return nil, errors.New("OR without a left side")
			}
			if last := &n.Clauses[len(n.Clauses)-1]; last.Occur == def && def == Must {
				last.Occur = Should
			}
			pending = int(Should)
			p.pos++
			continue
		case "NOT", "!", "-":
			pending = int(MustNot)
			p.pos++
			continue
		case "+":
			pending = int(Must)
			p.pos++
			continue
		}
		occ := def
		if pending >= 0 {
			occ = Occur(pending)
			pending = -1
		}
		var child *Node
		if t == "(" {
			p.pos++
			c, err := p.parse(depth + 1)
			if err != nil {
				return nil, err
			}
			if p.pos >= len(p.toks) || p.toks[p.pos] != ")" {
				return nil, errors.New("missing )")
			}
			p.pos++
			child = c
		} else {
			p.pos++
			leaf, err := parseLeaf(t)
			if err != nil {
				return nil, err
			}
			if leaf == nil {
				continue
			}
			child = leaf
		}
		n.Clauses = append(n.Clauses, Clause{Occur: occ, Node: child})
	}
	if depth > 0 {
		return nil, errors.New("missing )")
	}
	return n, nil
}

func parseLeaf(t string) (*Node, error) {
	if strings.HasPrefix(t, "\"") {
		if len(t) < 2 || !strings.HasSuffix(t, "\"") {
			return nil, errors.New("unterminated phrase")
		}
		w := indexdoc.Words(t[1 : len(t)-1])
		if len(w) == 0 {
			return nil, nil
		}
		return &Node{Words: w, Phrase: true}, nil
	}
	if i := strings.IndexByte(t, ':'); i > 0 {
		t = t[i+1:]
	}
	t = strings.ToLower(t)
	if strings.ContainsAny(t, "*?") {
		if strings.Trim(t, "*?") == "" && t != "*" {
			return nil, fmt.Errorf("wildcard %q has no letters", t)
		}
		return &Node{Words: []string{t}}, nil
	}
	w := indexdoc.Words(t)
	switch len(w) {
	case 0:
		return nil, nil
	case 1:
		return &Node{Words: w}, nil
	}
	return &Node{Words: w, Phrase: true}, nil
}

// Match reports whether the words of s satisfy n.
func (n *Node) Match(s string) bool { return n.match(indexdoc.Words(s)) }

func (n *Node) match(words []string) bool {
	if n.Clauses == nil {
		if !n.Phrase {
			return slices.ContainsFunc(words, func(w string) bool { return wildMatch(n.Words[0], w) })
		}
		for i := 0; i+len(n.Words) <= len(words); i++ {
			if slices.Equal(words[i:i+len(n.Words)], n.Words) {
				return true
			}
		}
		return false
	}
	hasMust, anyShould, shouldHit := false, false, false
	for _, c := range n.Clauses {
		m := c.Node.match(words)
		switch c.Occur {
		case Must:
			hasMust = true
			if !m {
				return false
			}
		case MustNot:
			if m {
				return false
			}
		case Should:
			anyShould = true
			shouldHit = shouldHit || m
		}
	}
	return hasMust || !anyShould || shouldHit
}

func wildMatch(pattern, w string) bool {
	if !strings.ContainsAny(pattern, "*?") {
		return pattern == w
	}
	return wildcardPlain(pattern, w)
}

// toQuery renders n on a text field. Phrases become "all words" matches
// (adjacency is not checked); only trailing '*' wildcards are supported,
// as prefixes. It stops when ctx ends.
func (n *Node) toQuery(ctx context.Context, field string) (search.Query, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if n.Clauses == nil {
		w := n.Words[0]
		if !n.Phrase && strings.ContainsAny(w, "*?") {
			if lit := strings.TrimRight(w, "*"); lit != "" && !strings.ContainsAny(lit, "*?") {
				return search.Prefix{Field: field, Value: lit}, nil
			}
			if lit := strings.FieldsFunc(w, func(r rune) bool { return r == '*' || r == '?' }); len(lit) > 0 {
				return search.Match{Field: field, Text: strings.Join(lit, " "), All: true}, nil
			}
			return search.Exists{Field: field}, nil
		}
		return search.Match{Field: field, Text: strings.Join(n.Words, " "), All: true}, nil
	}
	var must search.And
	var should search.Or
	for _, c := range n.Clauses {
		q, err := c.Node.toQuery(ctx, field)
		if err != nil {
			return nil, err
		}
		switch c.Occur {
		case Must:
			must = append(must, q)
		case MustNot:
			must = append(must, search.Not{Query: q})
		case Should:
			should = append(should, q)
		}
	}
	hasMust := slices.ContainsFunc(n.Clauses, func(c Clause) bool { return c.Occur == Must })
	if len(should) > 0 && !hasMust {
		must = append(must, should)
	}
	return must, nil
}
