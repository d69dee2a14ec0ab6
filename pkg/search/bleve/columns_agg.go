package bleve

import (
	"math/bits"
	"slices"
	"strings"

	"github.com/cmsplatform/cms/pkg/search"
)

// colPlan is what a search needs from the column index.
type colPlan struct {
	fields []string
}

// planColumns reports whether the column index can answer req (no full
// text, no score sort, aggregations on keyword fields only) and the
// fields it reads.
func (ix *index) planColumns(req search.SearchRequest) (colPlan, bool) {
	p := colPlan{fields: []string{colID}}
	for _, a := range req.Aggs {
		if ix.kind(a.Field) != search.Keyword {
			return colPlan{}, false
		}
		p.fields = append(p.fields, a.Field)
		if a.Filter != nil && !ix.queryFields(a.Filter, &p.fields) {
			return colPlan{}, false
		}
	}
	for _, s := range req.Sort {
		if s.Field == search.ScoreField {
			return colPlan{}, false
		}
		p.fields = append(p.fields, s.Field)
	}
	if !ix.queryFields(req.Query, &p.fields) {
		return colPlan{}, false
	}
	slices.Sort(p.fields)
	p.fields = slices.Compact(p.fields)
	return p, true
}

// queryFields adds the fields q reads to fields; false if the column
// index cannot answer q.
func (ix *index) queryFields(q search.Query, fields *[]string) bool {
	switch q := q.(type) {
	case search.MatchAll, search.IDs:
		return true
	case search.Term:
		*fields = append(*fields, q.Field)
	case search.Terms:
		*fields = append(*fields, q.Field)
	case search.Range:
		*fields = append(*fields, q.Field)
	case search.Prefix:
		if ix.kind(q.Field) != search.Keyword {
			return false
		}
		*fields = append(*fields, q.Field)
	case search.Exists:
		*fields = append(*fields, colPresent)
	case search.And:
		for _, s := range q {
			if !ix.queryFields(s, fields) {
				return false
			}
		}
	case search.Or:
		for _, s := range q {
			if !ix.queryFields(s, fields) {
				return false
			}
		}
	case search.Not:
		return ix.queryFields(q.Query, fields)
	default:
		return false
	}
	return true
}

// aggregate answers the terms aggregations of req over the slots m
// matches (c.mu held, columns ready): each aggregation's filter narrows
// m, then the field's postings in the prefix's range of codes are walked
// once, counting the slots in the set; a bucket is a code's postings.
// Every slot has distinct keys (colKeys), so a document counts once per
// value, as in Bleve's facets.
func (c *columns) aggregate(ix *index, req search.SearchRequest, m bitset) map[string]search.AggResult {
	if len(req.Aggs) == 0 {
		return nil
	}
	out := make(map[string]search.AggResult, len(req.Aggs))
	for _, a := range req.Aggs {
		set := m
		if a.Filter != nil {
			set = slices.Clone(m)
			set.and(c.eval(ix, a.Filter))
		}
		col := c.fields[a.Field]
		ar := search.AggResult{Docs: int64(set.count()), Missing: int64(missing(col, set))}
		var buckets []search.Bucket
		lo := col.lower(a.Prefix, false)
		for k, end := lo, col.prefixEnd(lo, a.Prefix); k < end; k++ {
			var n int64
			if d := col.denseSet(k); d != nil {
				n = int64(set.andCount(d))
			} else {
				for _, s := range col.postings(k, k+1) {
					if set.has(int32(s)) {
						n++
					}
				}
			}
			if n > 0 { // a copy: the key is part of the column's
				buckets = append(buckets, search.Bucket{Key: strings.Clone(col.key(k)), Count: n})
			}
		}
		ar.Buckets, ar.Other = search.TopBuckets(buckets, a.Size)
		out[a.Key()] = ar
	}
	return out
}

// missing counts the slots of set without a value in col.
func missing(col *column, set bitset) int {
	if col.present != nil {
		return set.count() - set.andCount(col.present)
	}
	n := 0
	for i, w := range set {
		for w != 0 {
			s := int32(i*64 + bits.TrailingZeros64(w))
			w &= w - 1
			if col.empty(s) {
				n++
			}
		}
	}
	return n
}
