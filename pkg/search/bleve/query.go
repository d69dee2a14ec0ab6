package bleve

import (
	"context"
	"fmt"
	"time"

	"github.com/blevesearch/bleve/v2/numeric"
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/cmsplatform/cms/pkg/search"
)

// translate turns a normalised search.Query into a Bleve query. It stops
// when ctx ends: the engine deadline covers building the query too.
func (ix *index) translate(ctx context.Context, q search.Query) (query.Query, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	switch q := q.(type) {
	case search.MatchAll:
		return query.NewMatchAllQuery(), nil
	case search.IDs:
		if len(q) == 0 {
			return query.NewMatchNoneQuery(), nil
		}
		return query.NewDocIDQuery(q), nil
	case search.Term:
		return ix.term(q.Field, q.Value), nil
	case search.Terms:
		if len(q.Values) == 0 {
			return query.NewMatchNoneQuery(), nil
		}
		d := query.NewDisjunctionQuery(nil)
		for _, v := range q.Values {
			d.AddQuery(ix.term(q.Field, v))
		}
		return d, nil
	case search.Range:
		return ix.rangeQuery(q)
	case search.Match:
		fields := []string{q.Field}
		if q.Field == "" {
			fields = ix.mapping.TextFields()
		}
		d := query.NewDisjunctionQuery(nil)
		for _, f := range fields {
			m := query.NewMatchQuery(q.Text)
			m.SetField(f)
			if q.All {
				m.SetOperator(query.MatchQueryOperatorAnd)
			}
			d.AddQuery(m)
		}
		return d, nil
	case search.Prefix:
		p := query.NewPrefixQuery(q.Value)
		p.SetField(q.Field)
		return p, nil
	case search.Exists:
		t := query.NewTermQuery(q.Field)
		t.SetField(fieldPresent)
		return t, nil
	case search.And:
		if len(q) == 0 {
			return query.NewMatchAllQuery(), nil
		}
		c := query.NewConjunctionQuery(nil)
		for _, sub := range q {
			bq, err := ix.translate(ctx, sub)
			if err != nil {
				return nil, err
			}
			c.AddQuery(bq)
		}
		return c, nil
	case search.Or:
		if len(q) == 0 {
			return query.NewMatchNoneQuery(), nil
		}
		d := query.NewDisjunctionQuery(nil)
		for _, sub := range q {
			bq, err := ix.translate(ctx, sub)
			if err != nil {
				return nil, err
			}
			d.AddQuery(bq)
		}
		return d, nil
	case search.Not:
		inner, err := ix.translate(ctx, q.Query)
		if err != nil {
			return nil, err
		}
		return query.NewBooleanQuery([]query.Query{query.NewMatchAllQuery()}, nil, []query.Query{inner}), nil
	}
	return nil, fmt.Errorf("%w: unknown query node %T", search.ErrInvalidQuery, q)
}

// term matches one canonical value of a non-text field.
func (ix *index) term(field string, v any) query.Query {
	switch x := v.(type) {
	case bool:
		q := query.NewBoolFieldQuery(x)
		q.SetField(field)
		return q
	case int64, float64, time.Time:
		if n, ok := numberKey(x); ok { // the term of the full value
			q := query.NewTermQuery(string(numeric.MustNewPrefixCodedInt64(n, 0)))
			q.SetField(field)
			return q
		}
	}
	q := query.NewTermQuery(fmt.Sprint(v))
	q.SetField(field)
	return q
}

// rangeBounds returns the lower and upper bound of r (nil: none) and
// whether each is inclusive.
func rangeBounds(r search.Range) (lo any, loIncl bool, hi any, hiIncl bool) {
	lo, hi = r.Gt, r.Lt
	if r.Gte != nil {
		lo, loIncl = r.Gte, true
	}
	if r.Lte != nil {
		hi, hiIncl = r.Lte, true
	}
	return lo, loIncl, hi, hiIncl
}

func (ix *index) rangeQuery(r search.Range) (query.Query, error) {
	lo, loIncl, hi, hiIncl := rangeBounds(r)
	switch ix.kind(r.Field) {
	case search.Keyword:
		s := func(v any) string {
			if v == nil {
				return ""
			}
			return v.(string)
		}
		if lo == nil && hi != nil && s(hi) == "" && !hiIncl {
			return query.NewMatchNoneQuery(), nil // < "" matches nothing
		}
		q := query.NewTermRangeInclusiveQuery(s(lo), s(hi), &loIncl, &hiIncl)
		q.SetField(r.Field)
		return q, nil
	case search.Long, search.Double, search.Date:
		// A zero time leaves that end open.
		key := func(v any) *int64 {
			if n, ok := numberKey(v); ok {
				return &n
			}
			return nil
		}
		return newNumberRange(r.Field, key(lo), key(hi), loIncl, hiIncl), nil
	}
	return nil, fmt.Errorf("%w: range on field %q", search.ErrInvalidQuery, r.Field)
}
