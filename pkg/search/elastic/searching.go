package elastic

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/cmsplatform/cms/pkg/search"
)

type searchResponse struct {
	Hits struct {
		Total struct {
			Value int64 `json:"value"`
		} `json:"total"`
		Hits []struct {
			ID      string          `json:"_id"`
			Version int64           `json:"_version"`
			Score   *float64        `json:"_score"`
			Source  json.RawMessage `json:"_source"`
		} `json:"hits"`
	} `json:"hits"`
	Aggregations map[string]esAgg `json:"aggregations"`
}

// esAgg is one aggregation of a response: terms, missing, or filter
// (with the terms and missing aggregations inside).
type esAgg struct {
	SumOther int64 `json:"sum_other_doc_count"`
	DocCount int64 `json:"doc_count"` // missing and filter aggregations
	Buckets  []struct {
		Key         any    `json:"key"`
		KeyAsString string `json:"key_as_string"`
		DocCount    int64  `json:"doc_count"`
	} `json:"buckets"`
	Terms   *esAgg `json:"t"`
	Missing *esAgg `json:"m"`
}

// Search implements search.Engine.
func (e *Engine) Search(ctx context.Context, req search.SearchRequest) (search.SearchResult, error) {
	m, err := e.mapping(ctx, req.Index)
	if err != nil {
		return search.SearchResult{}, err
	}
	req, err = search.NormalizeRequest(req, m)
	if err != nil {
		return search.SearchResult{}, err
	}
	q, err := translate(req.Query, m)
	if err != nil {
		return search.SearchResult{}, err
	}
	body := obj{
		"query":            q,
		"from":             req.From,
		"size":             req.Size,
		"sort":             sortClause(req.Sort, m),
		"track_total_hits": true,
		"track_scores":     true,
		"version":          true,
	}
	switch {
	case req.Fields == nil:
	case len(req.Fields) == 0:
		body["_source"] = false
	default:
		body["_source"] = obj{"includes": req.Fields}
	}
	if len(req.Aggs) > 0 {
		aggs := obj{}
		for i, a := range req.Aggs {
			terms := obj{"field": a.Field, "size": a.Size, "order": []obj{{"_count": "desc"}, {"_key": "asc"}}}
			if a.Prefix != "" {
				terms["include"] = regexpQuote(a.Prefix) + ".*"
			}
			if a.Filter == nil {
				aggs[aggName(i, "t")] = obj{"terms": terms}
				aggs[aggName(i, "m")] = obj{"missing": obj{"field": a.Field}}
				continue
			}
			f, err := translate(a.Filter, m)
			if err != nil {
				return search.SearchResult{}, err
			}
			aggs[aggName(i, "f")] = obj{"filter": f, "aggs": obj{
				"t": obj{"terms": terms}, "m": obj{"missing": obj{"field": a.Field}}}}
		}
		body["aggs"] = aggs
	}
	var res searchResponse
	if err := e.doJSON(ctx, http.MethodPost, "/"+e.full(req.Index)+"/_search", body, &res); err != nil {
		return search.SearchResult{}, notFound(err, req.Index)
	}
	out := search.SearchResult{Total: res.Hits.Total.Value, Hits: make([]search.Hit, 0, len(res.Hits.Hits))}
	for _, h := range res.Hits.Hits {
		fields := map[string]any{}
		if req.Fields == nil || len(req.Fields) > 0 { // absent with "_source": false
			if fields, err = m.DecodeSource(h.Source); err != nil {
				return search.SearchResult{}, err
			}
		}
		hit := search.Hit{ID: h.ID, Version: h.Version, Fields: fields}
		if h.Score != nil {
			hit.Score = *h.Score
		}
		out.Hits = append(out.Hits, hit)
	}
	if len(req.Aggs) > 0 {
		out.Aggs = make(map[string]search.AggResult, len(req.Aggs))
	}
	for i, a := range req.Aggs {
		t, ok := res.Aggregations[aggName(i, "t")]
		miss, docs := res.Aggregations[aggName(i, "m")], out.Total
		if a.Filter != nil {
			f := res.Aggregations[aggName(i, "f")]
			ok = f.Terms != nil && f.Missing != nil
			if ok {
				t, miss, docs = *f.Terms, *f.Missing, f.DocCount
			}
		}
		if !ok {
			return search.SearchResult{}, fmt.Errorf("elastic: aggregation %q missing from response", a.Key())
		}
		kind, _ := m.Field(a.Field)
		ar := search.AggResult{Other: t.SumOther, Missing: miss.DocCount, Docs: docs}
		for _, b := range t.Buckets {
			key, err := bucketKey(kind, b.Key, b.KeyAsString)
			if err != nil {
				return search.SearchResult{}, fmt.Errorf("elastic: aggregation %q: %w", a.Key(), err)
			}
			ar.Buckets = append(ar.Buckets, search.Bucket{Key: key, Count: b.DocCount})
		}
		// Elasticsearch orders numeric ties by key already; sort anyway so
		// both engines share one definition.
		search.SortBuckets(ar.Buckets)
		out.Aggs[a.Key()] = ar
	}
	return out, nil
}

func aggName(i int, kind string) string { return kind + strconv.Itoa(i) }

// bucketKey converts a terms bucket key to its canonical value: booleans come
// as 1/0 with key_as_string, dates as epoch milliseconds.
func bucketKey(k search.Kind, key any, keyAsString string) (any, error) {
	switch k {
	case search.Bool:
		return strconv.ParseBool(keyAsString)
	case search.Keyword:
		s, ok := key.(string)
		if !ok {
			return nil, fmt.Errorf("key %v is not a string", key)
		}
		return s, nil
	}
	n, ok := key.(json.Number)
	if !ok {
		return nil, fmt.Errorf("key %v is not a number", key)
	}
	return search.ParseKey(k, n.String()) // long, double, date (epoch ms)
}

// Count implements search.Engine.
func (e *Engine) Count(ctx context.Context, name string, q search.Query) (int64, error) {
	m, err := e.mapping(ctx, name)
	if err != nil {
		return 0, err
	}
	nq, err := search.NormalizeQuery(q, m)
	if err != nil {
		return 0, err
	}
	dsl, err := translate(nq, m)
	if err != nil {
		return 0, err
	}
	var out struct {
		Count int64 `json:"count"`
	}
	if err := e.doJSON(ctx, http.MethodPost, "/"+e.full(name)+"/_count", obj{"query": dsl}, &out); err != nil {
		return 0, notFound(err, name)
	}
	return out.Count, nil
}
