package indexquery

import (
	"context"
	"slices"
	"strings"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/search"
)

// Occurrence is one value and the number of matching objects having it.
// Value is a string, an int64 or a bool.
type Occurrence struct {
	Value any
	Count int64
}

// Occurrences is NovaDB's Occurrences record.
type Occurrences struct {
	Null, NotNull int64
	// ValueType is "string", "number" or "boolean".
	ValueType string
	More      bool
	// Values are sorted by value.
	Values []Occurrence
}

// OccurrencesRequest is ObjectOccurrencesRequest.
type OccurrencesRequest struct {
	Branch int64
	Filter Filter
	Page   Page
	Freshness
	ModifiedBy, Type, Deleted bool
}

// OccurrencesResult is ObjectOccurrencesResult; unrequested records are nil.
type OccurrencesResult struct {
	Version                   int64
	ModifiedBy, Type, Deleted *Occurrences
}

// Occurrences counts the values of the modifying user, type and deleted
// flag among the objects matching the filter. Values are sorted by value
// and cut after Page.Skip + Page.Take (Take <= 0: all), More telling that
// something was cut.
func (s *Service) Occurrences(ctx context.Context, r OccurrencesRequest) (OccurrencesResult, error) {
	if err := checkFilterTexts(r.Filter); err != nil {
		return OccurrencesResult{}, err
	}
	if err := validPage(r.Page); err != nil {
		return OccurrencesResult{}, err
	}
	v, err := s.wait(ctx, r.Freshness)
	if err != nil {
		return OccurrencesResult{}, err
	}
	out := OccurrencesResult{Version: v}
	if !r.ModifiedBy && !r.Type && !r.Deleted {
		return out, nil
	}
	q, err := s.query(ctx, r.Branch, r.Filter)
	if err != nil {
		return out, err
	}
	err = countFields(ctx, s.run, search.SearchRequest{Query: q}, r.Page, []occurrenceField{
		{r.ModifiedBy, indexdoc.FieldModifiedBy, "string", &out.ModifiedBy},
		{r.Type, indexdoc.FieldTypeRef, "number", &out.Type},
		{r.Deleted, indexdoc.FieldDeleted, "boolean", &out.Deleted},
	})
	return out, err
}

// occurrenceField is one record an occurrences request may ask for: the
// field counted, its value type and where the record goes.
type occurrenceField struct {
	on    bool
	field string
	typ   string
	dst   **Occurrences
}

// countFields runs req (with run) with a terms aggregation per requested
// field and fills their records, cut by p; with none requested it runs
// nothing.
func countFields(ctx context.Context, run func(context.Context, search.SearchRequest) (search.SearchResult, error),
	req search.SearchRequest, p Page, fields []occurrenceField) error {
	for _, f := range fields {
		if f.on {
			req.Aggs = append(req.Aggs, search.TermsAgg{Field: f.field, Size: search.MaxResultWindow})
		}
	}
	if len(req.Aggs) == 0 {
		return nil
	}
	res, err := run(ctx, req)
	if err != nil {
		return err
	}
	for _, f := range fields {
		if f.on {
			o := occurrences(res.Aggs[f.field], res.Total, f.typ, p)
			*f.dst = &o
		}
	}
	return nil
}

// occurrences turns one aggregation into an Occurrences record.
func occurrences(a search.AggResult, total int64, typ string, p Page) Occurrences {
	o := Occurrences{Null: a.Missing, NotNull: total - a.Missing, ValueType: typ, More: a.Other > 0}
	for _, b := range a.Buckets {
		o.Values = append(o.Values, Occurrence{Value: b.Key, Count: b.Count})
	}
	slices.SortFunc(o.Values, func(x, y Occurrence) int { return search.CompareValues(x.Value, y.Value) })
	if p.Skip > 0 {
		o.Values = o.Values[min(p.Skip, len(o.Values)):]
	}
	if p.Take > 0 && len(o.Values) > p.Take {
		o.Values, o.More = o.Values[:p.Take], true
	}
	if o.Values == nil {
		o.Values = []Occurrence{}
	}
	return o
}

// WorkItemRequest is WorkItemOccurrencesRequest.
type WorkItemRequest struct {
	Page Page
	Freshness
	// Caller, when set, is who counts: only the branches it may read are
	// counted (pkg/auth.Principal.ReadableBranches over Options.Branches),
	// as part of the engine query, so totals and paging stay correct. Nil
	// (a trusted internal read) and administrators count every branch.
	Caller *auth.Principal
}

// WorkItemResult is WorkItemOccurrencesResult.
type WorkItemResult struct {
	Version  int64
	Branches Occurrences
}

// WorkItemOccurrences counts work items per branch: the live objects
// changed on a work branch, i.e. documents with local values on any branch
// but the default branch, soft-deleted ones left out (inferred: NovaDB
// does not document the definition, and the request has no deleted
// filter).
func (s *Service) WorkItemOccurrences(ctx context.Context, r WorkItemRequest) (WorkItemResult, error) {
	if err := validPage(r.Page); err != nil {
		return WorkItemResult{}, err
	}
	v, err := s.wait(ctx, r.Freshness)
	if err != nil {
		return WorkItemResult{}, err
	}
	q := search.And{
		search.Term{Field: indexdoc.FieldHasLocalValues, Value: true},
		search.Not{Query: search.Term{Field: indexdoc.FieldBranch, Value: int64(content.BranchDefault)}},
		search.Not{Query: search.Term{Field: indexdoc.FieldDeleted, Value: true}},
	}
	if r.Caller != nil && !r.Caller.Admin {
		var chains map[int64][]int64
		if s.branches != nil {
			if chains, err = s.branches.AllBranchChains(ctx); err != nil {
				return WorkItemResult{}, err
			}
		}
		readable := r.Caller.ReadableBranches(chains)
		branches := make([]any, len(readable))
		for i, b := range readable {
			branches[i] = b
		}
		q = append(q, search.Terms{Field: indexdoc.FieldBranch, Values: branches})
	}
	res, err := s.run(ctx, search.SearchRequest{Query: q, Aggs: []search.TermsAgg{{Field: indexdoc.FieldBranch, Size: search.MaxResultWindow}}})
	if err != nil {
		return WorkItemResult{}, err
	}
	return WorkItemResult{Version: v, Branches: occurrences(res.Aggs[indexdoc.FieldBranch], res.Total, "number", r.Page)}, nil
}

// wildcardQuery matches string values of k against a pattern with * and ?
// (case-insensitive, whole value). A pattern whose only wildcard is a
// trailing * is a prefix query; others are expanded against the values
// indexed on the branch (at most search.MaxResultWindow distinct values
// starting with the pattern's literal prefix).
func (s *Service) wildcardQuery(ctx context.Context, branch int64, k AttrKey, pattern string) (search.Query, error) {
	pattern = strings.ToLower(pattern)
	base := strings.ToLower(indexdoc.Key(k.Attr, k.Lang, k.Variant)) + "="
	lit := pattern
	if i := strings.IndexAny(pattern, "*?"); i >= 0 {
		lit = pattern[:i]
	}
	if lit == pattern {
		return search.Term{Field: indexdoc.FieldValuesLower, Value: base + pattern}, nil
	}
	if lit+"*" == pattern && lit != "" {
		return search.Prefix{Field: indexdoc.FieldValuesLower, Value: base + lit}, nil
	}
	if lit+"*" == pattern {
		return search.Term{Field: indexdoc.FieldKeys, Value: indexdoc.Key(k.Attr, k.Lang, k.Variant)}, nil
	}
	res, err := s.run(ctx, search.SearchRequest{
		Query: search.And{search.Term{Field: indexdoc.FieldBranch, Value: branch}, search.Prefix{Field: indexdoc.FieldValuesLower, Value: base + lit}},
		Aggs:  []search.TermsAgg{{Field: indexdoc.FieldValuesLower, Size: search.MaxResultWindow, Prefix: base + lit}},
	})
	if err != nil {
		return nil, err
	}
	agg := res.Aggs[indexdoc.FieldValuesLower]
	if agg.Other > 0 {
		return nil, invalid("wildcard %q matches too many values; give a longer literal prefix", pattern)
	}
	var vals []any
	for _, b := range agg.Buckets {
		term, _ := b.Key.(string)
		if wildcardPlain(pattern, strings.TrimPrefix(term, base)) {
			vals = append(vals, term)
		}
	}
	return search.Terms{Field: indexdoc.FieldValuesLower, Values: vals}, nil
}

// wildcardPlain reports whether s matches p, where * is any run of
// characters and ? any one character; nothing else is special.
func wildcardPlain(p, s string) bool {
	pr, sr := []rune(p), []rune(s)
	var star, match = -1, 0
	i, j := 0, 0
	for j < len(sr) {
		switch {
		case i < len(pr) && (pr[i] == '?' || pr[i] == sr[j]):
			i++
			j++
		case i < len(pr) && pr[i] == '*':
			star, match = i, j
			i++
		case star >= 0:
			i = star + 1
			match++
			j = match
		default:
			return false
		}
	}
	for i < len(pr) && pr[i] == '*' {
		i++
	}
	return i == len(pr)
}
