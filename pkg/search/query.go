package search

import (
	"fmt"
	"slices"
	"strings"
)

// Query is a node of the query AST. The set of node types is closed; an
// implementation translates each one to its native query.
type Query interface{ isQuery() }

// MatchAll matches every document.
type MatchAll struct{}

// IDs matches documents by id.
type IDs []string

// Term matches documents whose non-text field has exactly Value.
type Term struct {
	Field string
	Value any
}

// Terms matches documents whose non-text field has any of Values (none:
// matches nothing).
type Terms struct {
	Field  string
	Values []any
}

// Range matches documents whose keyword, long, double or date field lies in
// the bounds. At most one lower (Gt or Gte) and one upper (Lt or Lte) bound,
// and at least one bound, may be set.
type Range struct {
	Field            string
	Gt, Gte, Lt, Lte any
}

// Match is a full-text query over a text field, or over every text field when
// Field is empty (a document matches when one field matches). The text is
// analysed like the field; with All every token must occur in the field,
// otherwise any one suffices.
type Match struct {
	Field string
	Text  string
	All   bool
}

// Prefix matches keyword values (case-sensitive) or text tokens (the prefix is
// lower-cased, as tokens are) starting with Value.
type Prefix struct {
	Field string
	Value string
}

// Exists matches documents that have at least one value for Field.
type Exists struct{ Field string }

// And matches documents matching all queries (none: all documents).
type And []Query

// Or matches documents matching any query (none: no documents).
type Or []Query

// Not matches documents not matching Query.
type Not struct{ Query Query }

func (MatchAll) isQuery() {}
func (IDs) isQuery()      {}
func (Term) isQuery()     {}
func (Terms) isQuery()    {}
func (Range) isQuery()    {}
func (Match) isQuery()    {}
func (Prefix) isQuery()   {}
func (Exists) isQuery()   {}
func (And) isQuery()      {}
func (Or) isQuery()       {}
func (Not) isQuery()      {}

// NormalizeQuery checks q against the mapping and returns a copy whose values
// are canonical (see Mapping.Normalize) and whose text prefixes are lower
// case. A nil q becomes MatchAll. Errors wrap ErrInvalidQuery.
func NormalizeQuery(q Query, m Mapping) (Query, error) {
	switch q := q.(type) {
	case nil:
		return MatchAll{}, nil
	case MatchAll, IDs:
		return q, nil
	case Term:
		k, err := nonText(m, q.Field, "term")
		if err != nil {
			return nil, err
		}
		v, err := queryValue(k, q.Field, q.Value)
		return Term{Field: q.Field, Value: v}, err
	case Terms:
		k, err := nonText(m, q.Field, "terms")
		if err != nil {
			return nil, err
		}
		out := Terms{Field: q.Field, Values: make([]any, 0, len(q.Values))}
		for _, v := range q.Values {
			nv, err := queryValue(k, q.Field, v)
			if err != nil {
				return nil, err
			}
			out.Values = append(out.Values, nv)
		}
		return out, nil
	case Range:
		return normalizeRange(q, m)
	case Match:
		if strings.TrimSpace(q.Text) == "" {
			return nil, fmt.Errorf("%w: match: empty text", ErrInvalidQuery)
		}
		if q.Field == "" {
			if len(m.TextFields()) == 0 {
				return nil, fmt.Errorf("%w: match: index has no text fields", ErrInvalidQuery)
			}
			return q, nil
		}
		k, err := m.Kind(q.Field)
		if err != nil {
			return nil, err
		}
		if k != Text {
			return nil, fmt.Errorf("%w: match on %s field %q (want text)", ErrInvalidQuery, k, q.Field)
		}
		return q, nil
	case Prefix:
		k, err := m.Kind(q.Field)
		if err != nil {
			return nil, err
		}
		if q.Value == "" {
			return nil, fmt.Errorf("%w: prefix: empty value", ErrInvalidQuery)
		}
		switch k {
		case Keyword:
			return q, nil
		case Text:
			return Prefix{Field: q.Field, Value: strings.ToLower(q.Value)}, nil
		}
		return nil, fmt.Errorf("%w: prefix on %s field %q", ErrInvalidQuery, k, q.Field)
	case Exists:
		_, err := indexed(m, q.Field, "exists")
		return q, err
	case And:
		out := make(And, len(q))
		for i, c := range q {
			nc, err := NormalizeQuery(c, m)
			if err != nil {
				return nil, err
			}
			out[i] = nc
		}
		return out, nil
	case Or:
		out := make(Or, len(q))
		for i, c := range q {
			nc, err := NormalizeQuery(c, m)
			if err != nil {
				return nil, err
			}
			out[i] = nc
		}
		return out, nil
	case Not:
		if q.Query == nil {
			return nil, fmt.Errorf("%w: not: nil query", ErrInvalidQuery)
		}
		nc, err := NormalizeQuery(q.Query, m)
		return Not{Query: nc}, err
	}
	return nil, fmt.Errorf("%w: unknown query node %T", ErrInvalidQuery, q)
}

func normalizeRange(q Range, m Mapping) (Query, error) {
	k, err := indexed(m, q.Field, "range")
	if err != nil {
		return nil, err
	}
	if k == Text || k == Bool {
		return nil, fmt.Errorf("%w: range on %s field %q", ErrInvalidQuery, k, q.Field)
	}
	if q.Gt != nil && q.Gte != nil || q.Lt != nil && q.Lte != nil {
		return nil, fmt.Errorf("%w: range on %q: two lower or two upper bounds", ErrInvalidQuery, q.Field)
	}
	if q.Gt == nil && q.Gte == nil && q.Lt == nil && q.Lte == nil {
		return nil, fmt.Errorf("%w: range on %q: no bounds", ErrInvalidQuery, q.Field)
	}
	out := Range{Field: q.Field}
	for _, b := range []struct {
		in  any
		out *any
	}{{q.Gt, &out.Gt}, {q.Gte, &out.Gte}, {q.Lt, &out.Lt}, {q.Lte, &out.Lte}} {
		if b.in == nil {
			continue
		}
		v, err := queryValue(k, q.Field, b.in)
		if err != nil {
			return nil, err
		}
		*b.out = v
	}
	return out, nil
}

// indexed returns the kind of field, refusing unmapped and Stored fields.
func indexed(m Mapping, field, op string) (Kind, error) {
	k, err := m.Kind(field)
	if err != nil {
		return "", err
	}
	if k == Stored {
		return "", fmt.Errorf("%w: %s on stored (not indexed) field %q", ErrInvalidQuery, op, field)
	}
	return k, nil
}

func nonText(m Mapping, field, op string) (Kind, error) {
	k, err := indexed(m, field, op)
	if err != nil {
		return "", err
	}
	if k == Text {
		return "", fmt.Errorf("%w: %s on text field %q (use Match or Prefix)", ErrInvalidQuery, op, field)
	}
	return k, nil
}

func queryValue(k Kind, field string, v any) (any, error) {
	nv, err := NormalizeValue(k, v)
	if err != nil {
		return nil, fmt.Errorf("%w: field %q: %v", ErrInvalidQuery, field, err)
	}
	return nv, nil
}

// NormalizeRequest checks paging, sorting and aggregations against the
// mapping and normalises the query (see NormalizeQuery).
func NormalizeRequest(req SearchRequest, m Mapping) (SearchRequest, error) {
	if req.From < 0 || req.Size < 0 || req.From+req.Size > MaxResultWindow {
		return req, fmt.Errorf("%w: from %d, size %d (want >= 0, from+size <= %d)", ErrInvalidQuery, req.From, req.Size, MaxResultWindow)
	}
	q, err := NormalizeQuery(req.Query, m)
	if err != nil {
		return req, err
	}
	req.Query = q
	for _, s := range req.Sort {
		if s.Field == ScoreField {
			continue
		}
		if _, err := nonText(m, s.Field, "sort"); err != nil {
			return req, err
		}
	}
	seen := map[string]bool{}
	if len(req.Aggs) > 0 {
		req.Aggs = slices.Clone(req.Aggs)
	}
	for i, a := range req.Aggs {
		if a.Filter != nil {
			if req.Aggs[i].Filter, err = NormalizeQuery(a.Filter, m); err != nil {
				return req, err
			}
		}
		k, err := nonText(m, a.Field, "terms aggregation")
		if err != nil {
			return req, err
		}
		if a.Size < 1 || a.Size > MaxResultWindow {
			return req, fmt.Errorf("%w: aggregation %q: size %d", ErrInvalidQuery, a.Key(), a.Size)
		}
		if a.Prefix != "" && k != Keyword {
			return req, fmt.Errorf("%w: aggregation %q: prefix on %s field", ErrInvalidQuery, a.Key(), k)
		}
		if seen[a.Key()] {
			return req, fmt.Errorf("%w: duplicate aggregation name %q", ErrInvalidQuery, a.Key())
		}
		seen[a.Key()] = true
	}
	return req, nil
}
