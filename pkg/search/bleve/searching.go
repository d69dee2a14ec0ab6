package bleve

import (
	"context"
	"fmt"
	"math"
	"slices"

	blevesearch "github.com/blevesearch/bleve/v2"
	bsearch "github.com/blevesearch/bleve/v2/search"

	"github.com/cmsplatform/cms/pkg/search"
)

func (ix *index) search(ctx context.Context, req search.SearchRequest) (search.SearchResult, error) {
	req, err := search.NormalizeRequest(req, ix.mapping)
	if err != nil {
		return search.SearchResult{}, err
	}
	if ids, ok := req.Query.(search.IDs); ok && len(req.Sort) == 0 && len(req.Aggs) == 0 {
		return ix.searchIDs(ids, req.From, req.Size, req.Fields, req.Held)
	}
	if res, ok, err := ix.searchColumns(req); ok || err != nil {
		return res, err
	}
	return ix.searchBleveFiltered(ctx, req)
}

// searchBleveFiltered answers req with Bleve, which has no filtered
// facets: aggregations with a Filter are answered by one more search each
// (the query and the filter, no hits).
func (ix *index) searchBleveFiltered(ctx context.Context, req search.SearchRequest) (search.SearchResult, error) {
	var filtered []search.TermsAgg
	plain := req
	plain.Aggs = nil
	for _, a := range req.Aggs {
		if a.Filter != nil {
			filtered = append(filtered, a)
		} else {
			plain.Aggs = append(plain.Aggs, a)
		}
	}
	out, err := ix.searchBleve(ctx, plain)
	if err != nil || len(filtered) == 0 {
		return out, err
	}
	if out.Aggs == nil {
		out.Aggs = make(map[string]search.AggResult, len(filtered))
	}
	for _, a := range filtered {
		q, f := a.Filter, a
		f.Filter = nil
		res, err := ix.searchBleve(ctx, search.SearchRequest{Query: search.And{req.Query, q}, Aggs: []search.TermsAgg{f}})
		if err != nil {
			return out, err
		}
		out.Aggs[a.Key()] = res.Aggs[a.Key()]
	}
	return out, nil
}

// searchBleve answers a normalised request with a Bleve search.
func (ix *index) searchBleve(ctx context.Context, req search.SearchRequest) (search.SearchResult, error) {
	q, err := ix.translate(ctx, req.Query)
	if err != nil {
		return search.SearchResult{}, err
	}
	br := blevesearch.NewSearchRequestOptions(q, req.Size, req.From, false)
	// No stored fields: hits are loaded by id below, mostly from the
	// decoded-document cache.
	br.SortByCustom(ix.sortOrder(req.Sort))
	if unscored(req) {
		// Unscored, Bleve unions the postings of a disjunction (a range
		// of many terms, numberRange) as bitmaps.
		br.Score = "none"
	}
	for i, a := range req.Aggs {
		field := a.Field
		if shadowed(ix.kind(field)) {
			field = shadowPrefix + field
		}
		// Ask for every term: Bleve breaks count ties by term bytes, which
		// is not the typed key order, so the top Size are cut below.
		fr := blevesearch.NewFacetRequest(field, math.MaxInt32)
		if a.Prefix != "" {
			fr.SetPrefixFilter(a.Prefix)
			// With a prefix Bleve counts documents without a matching
			// value as missing; Missing means "without the field".
			br.AddFacet(facetName(i)+"m", blevesearch.NewFacetRequest(field, 0))
		}
		br.AddFacet(facetName(i), fr)
	}
	res, err := ix.bi.SearchInContext(ctx, br)
	if err != nil {
		return search.SearchResult{}, fmt.Errorf("bleve: search: %w", err)
	}
	out := search.SearchResult{Total: int64(res.Total), Hits: make([]search.Hit, 0, len(res.Hits))}
	if len(res.Hits) > 0 {
		r, err := ix.reader()
		if err != nil {
			return search.SearchResult{}, err
		}
		defer r.Close()
		ids := make([]string, len(res.Hits))
		for i, h := range res.Hits {
			ids[i] = h.ID
		}
		i := 0
		err = ix.loadEach(r, ids, req.Fields, req.Held, func(d search.Document, found bool) {
			score := res.Hits[i].Score
			i++
			if !found {
				// Deleted since the search matched it (the reader is a
				// newer snapshot than the search's).
				out.Total--
				return
			}
			out.Hits = append(out.Hits, search.Hit{ID: d.ID, Version: d.Version, Score: score, Fields: d.Fields})
		})
		if err != nil {
			return search.SearchResult{}, err
		}
	}
	if len(req.Aggs) > 0 {
		out.Aggs = make(map[string]search.AggResult, len(req.Aggs))
	}
	for i, a := range req.Aggs {
		ar, err := ix.aggResult(a, res.Facets[facetName(i)])
		if err != nil {
			return search.SearchResult{}, err
		}
		if m := res.Facets[facetName(i)+"m"]; m != nil {
			ar.Missing = int64(m.Missing)
		}
		ar.Docs = out.Total
		out.Aggs[a.Key()] = ar
	}
	return out, nil
}

// unscored reports whether no answer to req depends on scores: it returns
// no hits (a count, aggregations) or sorts them by fields only.
func unscored(req search.SearchRequest) bool {
	if req.Size == 0 {
		return true
	}
	return len(req.Sort) > 0 && !slices.ContainsFunc(req.Sort, func(s search.SortField) bool { return s.Field == search.ScoreField })
}

func facetName(i int) string { return fmt.Sprintf("a%d", i) }

// sortOrder is Bleve's order for fields. A field sorted on more than once
// (ascending by its smallest value, then descending by its largest) is
// read once: Bleve's collector visits a document's values once per field
// its sort order requires, and every visit also reaches the facets, which
// counted such a field's values twice (repeatedSortField).
func (ix *index) sortOrder(fields []search.SortField) bsearch.SortOrder {
	order := make(bsearch.SortOrder, 0, len(fields)+1)
	read := map[string]bool{}
	for _, s := range fields {
		if s.Field == search.ScoreField {
			order = append(order, &bsearch.SortScore{Desc: s.Desc})
			continue
		}
		sf := &bsearch.SortField{Field: s.Field, Desc: s.Desc, Missing: bsearch.SortFieldMissingLast, Mode: bsearch.SortFieldMin}
		if s.Desc {
			sf.Mode = bsearch.SortFieldMax // like Elasticsearch on multi-valued fields
		}
		switch ix.kind(s.Field) {
		case search.Long, search.Double:
			sf.Type = bsearch.SortFieldAsNumber
		case search.Date:
			sf.Type = bsearch.SortFieldAsDate
		default: // keyword; bool is indexed as "F"/"T", which sorts like false < true
			sf.Type = bsearch.SortFieldAsString
		}
		if read[s.Field] {
			order = append(order, repeatedSortField{sf})
			continue
		}
		read[s.Field] = true
		order = append(order, sf)
	}
	return append(order, &bsearch.SortDocID{})
}

// repeatedSortField sorts by a field an earlier entry of the sort order
// already requires: it asks for no field, and still receives the field's
// values, which the collector passes to every entry.
type repeatedSortField struct{ *bsearch.SortField }

func (repeatedSortField) RequiresFields() []string { return nil }

func (s repeatedSortField) Copy() bsearch.SearchSort {
	c := *s.SortField
	return repeatedSortField{&c}
}

func (ix *index) aggResult(a search.TermsAgg, fr *bsearch.FacetResult) (search.AggResult, error) {
	var out search.AggResult
	if fr == nil {
		return out, fmt.Errorf("bleve: facet for %q missing from result", a.Key())
	}
	out.Missing = int64(fr.Missing)
	kind := ix.kind(a.Field)
	var buckets []search.Bucket
	if fr.Terms != nil {
		for _, t := range fr.Terms.Terms() {
			key, err := search.ParseKey(kind, t.Term)
			if err != nil {
				return out, fmt.Errorf("bleve: facet term %q of %q: %w", t.Term, a.Field, err)
			}
			buckets = append(buckets, search.Bucket{Key: key, Count: int64(t.Count)})
		}
	}
	out.Buckets, out.Other = search.TopBuckets(buckets, a.Size)
	return out, nil
}
