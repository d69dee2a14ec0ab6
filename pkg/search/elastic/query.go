package elastic

import (
	"fmt"
	"strings"

	"github.com/cmsplatform/cms/pkg/search"
)

type obj = map[string]any

var matchNone = obj{"match_none": obj{}}

// translate turns a normalised search.Query into the query DSL.
func translate(q search.Query, m search.Mapping) (obj, error) {
	switch q := q.(type) {
	case search.MatchAll:
		return obj{"match_all": obj{}}, nil
	case search.IDs:
		if len(q) == 0 {
			return matchNone, nil
		}
		return obj{"ids": obj{"values": []string(q)}}, nil
	case search.Term:
		return obj{"term": obj{q.Field: obj{"value": q.Value}}}, nil
	case search.Terms:
		if len(q.Values) == 0 {
			return matchNone, nil
		}
		return obj{"terms": obj{q.Field: q.Values}}, nil
	case search.Range:
		r := obj{}
		for op, v := range map[string]any{"gt": q.Gt, "gte": q.Gte, "lt": q.Lt, "lte": q.Lte} {
			if v != nil {
				r[op] = v
			}
		}
		return obj{"range": obj{q.Field: r}}, nil
	case search.Match:
		op := "or"
		if q.All {
			op = "and"
		}
		if q.Field == "" {
			// best_fields with "and": all tokens must occur in one field,
			// like the Bleve engine's disjunction of per-field matches.
			return obj{"multi_match": obj{"query": q.Text, "fields": m.TextFields(), "type": "best_fields", "operator": op}}, nil
		}
		return obj{"match": obj{q.Field: obj{"query": q.Text, "operator": op}}}, nil
	case search.Prefix:
		return obj{"prefix": obj{q.Field: obj{"value": q.Value}}}, nil
	case search.Exists:
		return obj{"exists": obj{"field": q.Field}}, nil
	case search.And:
		if len(q) == 0 {
			return obj{"match_all": obj{}}, nil
		}
		subs, err := translateAll(q, m)
		return obj{"bool": obj{"must": subs}}, err
	case search.Or:
		if len(q) == 0 {
			return matchNone, nil
		}
		subs, err := translateAll(q, m)
		return obj{"bool": obj{"should": subs, "minimum_should_match": 1}}, err
	case search.Not:
		sub, err := translate(q.Query, m)
		return obj{"bool": obj{"must": obj{"match_all": obj{}}, "must_not": sub}}, err
	}
	return nil, fmt.Errorf("%w: unknown query node %T", search.ErrInvalidQuery, q)
}

func translateAll(qs []search.Query, m search.Mapping) ([]obj, error) {
	out := make([]obj, len(qs))
	for i, q := range qs {
		t, err := translate(q, m)
		if err != nil {
			return nil, err
		}
		out[i] = t
	}
	return out, nil
}

// sortClause orders by the requested fields, then by id.
func sortClause(fields []search.SortField, m search.Mapping) []obj {
	out := make([]obj, 0, len(fields)+1)
	for _, s := range fields {
		order, mode := "asc", "min"
		if s.Desc {
			order, mode = "desc", "max"
		}
		if s.Field == search.ScoreField {
			out = append(out, obj{"_score": obj{"order": order}})
			continue
		}
		o := obj{"order": order, "missing": "_last", "mode": mode}
		if m.Prefixed(s.Field) {
			// No document may have the field yet: it is then unmapped.
			o["unmapped_type"] = "keyword"
		}
		out = append(out, obj{s.Field: o})
	}
	return append(out, obj{fieldID: obj{"order": "asc"}})
}

// regexpQuote escapes Lucene regular expression syntax.
func regexpQuote(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`.?+*|{}[]()"\#@&<>~`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
