package indexquery

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/params"
	"github.com/cmsplatform/cms/pkg/search"
)

// Sort kinds (NovaDB ObjectSortByKind).
const (
	SortScore = iota
	SortObjID
	SortTypeRef
	SortDisplayName
	SortModified
	SortModifiedBy
	SortAttribute
)

// SortBy is one sort key; AttrKey is used by SortAttribute.
type SortBy struct {
	Kind    int
	AttrKey AttrKey
	Reverse bool
}

// Page is NovaDB's paging: Take <= 0 means all (up to
// search.MaxResultWindow, with More set when that cut anything).
type Page struct{ Skip, Take int }

// SearchRequest is ObjectSearchRequest.
type SearchRequest struct {
	Branch int64
	Filter Filter
	Sort   []SortBy
	Page   Page
	Freshness
}

// Item is ObjectItem.
type Item struct {
	ID, TypeRef    int64
	DisplayName    string
	HasDisplayName bool
	ModifiedBy     string
	Modified       time.Time
	Deleted        bool
}

// SearchResult is ObjectSearchResult.
type SearchResult struct {
	Version int64
	More    bool
	Items   []Item
}

// Search runs an object search. Without sort keys it sorts by score (with
// a search phrase) and then by object id. Ties always end in object id
// order, so paging is stable on both engines.
func (s *Service) Search(ctx context.Context, r SearchRequest) (SearchResult, error) {
	if err := checkFilterTexts(r.Filter); err != nil {
		return SearchResult{}, err
	}
	if err := validPage(r.Page); err != nil {
		return SearchResult{}, err
	}
	if err := params.Count("sortBy", len(r.Sort), params.MaxSortKeys); err != nil {
		return SearchResult{}, invalid("%v", err)
	}
	for i, sb := range r.Sort {
		if sb.Kind < SortScore || sb.Kind > SortAttribute {
			return SearchResult{}, invalid("sortBy[%d].sortBy %d (want 0..6)", i, sb.Kind)
		}
	}
	v, err := s.wait(ctx, r.Freshness)
	if err != nil {
		return SearchResult{}, err
	}
	q, err := s.query(ctx, r.Branch, r.Filter)
	if err != nil {
		return SearchResult{}, err
	}
	sorts := r.Sort
	if len(sorts) == 0 && r.Filter.SearchPhrase != nil && strings.TrimSpace(*r.Filter.SearchPhrase) != "" {
		sorts = []SortBy{{Kind: SortScore}}
	}
	lang := uiLang(r.Filter.UILanguage)
	from, size := r.Page.Skip, search.MaxResultWindow-r.Page.Skip
	if r.Page.Take > 0 {
		size = min(size, r.Page.Take)
	}
	inMemory := slices.ContainsFunc(sorts, func(sb SortBy) bool { return sb.Kind == SortAttribute })
	req := search.SearchRequest{Query: q, From: from, Size: size}
	if inMemory {
		// No per-attribute sort field exists: sort every match here.
		req.From, req.Size = 0, search.MaxResultWindow
	} else {
		for _, sb := range sorts {
			req.Sort = append(req.Sort, s.sortField(sb, lang))
		}
		req.Sort = append(req.Sort, search.SortField{Field: indexdoc.FieldID})
		// The engine sorts: a hit needs only what item reads, not every
		// value of its document (decoding Elasticsearch's _source of 20
		// hits was most of a search's CPU).
		req.Fields = itemFields(lang)
	}
	res, err := s.run(ctx, req)
	if err != nil {
		return SearchResult{}, err
	}
	hits := res.Hits
	if inMemory {
		if res.Total > search.MaxResultWindow {
			return SearchResult{}, invalid("sorting by attribute needs a filter matching at most %d objects (%d match)", search.MaxResultWindow, res.Total)
		}
		s.sortHits(hits, sorts, lang)
		hits = hits[min(from, len(hits)):min(from+size, len(hits))]
	}
	out := SearchResult{Version: v, More: int64(from+len(hits)) < res.Total, Items: make([]Item, 0, len(hits))}
	for _, h := range hits {
		out.Items = append(out.Items, item(h.Fields, lang))
	}
	return out, nil
}

// validPage checks page.skip by the shared rule (params.Skip); at most
// search.MaxResultWindow objects can be paged through. Take <= 0 is
// NovaDB's "all".
func validPage(p Page) error {
	if _, err := params.Skip("page.skip", int64(p.Skip), search.MaxResultWindow-1); err != nil {
		return invalid("%v", err)
	}
	return nil
}

func (s *Service) sortField(sb SortBy, lang int64) search.SortField {
	f := search.SortField{Desc: sb.Reverse}
	switch sb.Kind {
	case SortScore:
		f.Field, f.Desc = search.ScoreField, !sb.Reverse
	case SortObjID:
		f.Field = indexdoc.FieldID
	case SortTypeRef:
		f.Field = indexdoc.FieldTypeRef
	case SortDisplayName:
		f.Field = indexdoc.NameSortField(s.sortLang(lang))
	case SortModified:
		f.Field = indexdoc.FieldModified
	case SortModifiedBy:
		f.Field = indexdoc.FieldModifiedBy
	}
	return f
}

// sortLang: display names sort in lang when it has fields, else English.
func (s *Service) sortLang(lang int64) int64 {
	if s.hasLang(lang) {
		return lang
	}
	return DefaultLanguage
}

// sortHits sorts in memory (attribute sorts) with the search package's
// helpers: missing values sort last in both directions, like the engines
// do; ties end in object id order.
func (s *Service) sortHits(hits []search.Hit, sorts []SortBy, lang int64) {
	desc := make([]bool, len(sorts))
	for i, sb := range sorts {
		desc[i] = sb.Reverse != (sb.Kind == SortScore)
	}
	search.SortByKeys(hits, func(h search.Hit) []any {
		keys := make([]any, len(sorts))
		for i, sb := range sorts {
			keys[i] = s.hitKey(h, sb, lang)
		}
		return keys
	}, desc, func(a, b search.Hit) int {
		return cmp.Compare(int64Of(a.Fields[indexdoc.FieldID]), int64Of(b.Fields[indexdoc.FieldID]))
	})
}

// hitKey is the sort value of one key on a hit: int64, float64,
// time.Time or string; nil = missing.
func (s *Service) hitKey(h search.Hit, sb SortBy, lang int64) any {
	f := h.Fields
	num := func(v any) any {
		switch v.(type) {
		case int64, float64, time.Time:
			return v
		}
		return nil
	}
	str := func(v any) any {
		if x, ok := v.(string); ok {
			return x
		}
		return nil
	}
	switch sb.Kind {
	case SortScore:
		return h.Score
	case SortObjID:
		return num(f[indexdoc.FieldID])
	case SortTypeRef:
		return num(f[indexdoc.FieldTypeRef])
	case SortDisplayName:
		return str(f[indexdoc.NameSortField(s.sortLang(lang))])
	case SortModified:
		return num(f[indexdoc.FieldModified])
	case SortModifiedBy:
		return str(f[indexdoc.FieldModifiedBy])
	}
	return attrKey(f, sb.AttrKey, sb.Reverse)
}

// attrKey is the attribute's value on a hit: the numeric or date order
// encoding when it has one, else the lower-cased string, else the raw
// term (booleans, references). Multi-valued: the smallest (largest when
// descending), like the engines' sort modes.
func attrKey(f map[string]any, k AttrKey, desc bool) any {
	key := indexdoc.Key(k.Attr, k.Lang, k.Variant)
	for _, src := range [][2]string{
		{indexdoc.FieldOrdered, "n:" + key + "="}, {indexdoc.FieldOrdered, "d:" + key + "="},
		{indexdoc.FieldValuesLower, key + "="}, {indexdoc.FieldValues, key + "="},
	} {
		if vals := search.KeyedValues(f[src[0]], src[1]); len(vals) > 0 {
			anys := make([]any, len(vals))
			for i, v := range vals {
				anys[i] = v
			}
			return search.SortValue(anys, desc)
		}
	}
	return nil
}

func int64Of(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case float64:
		return int64(x)
	}
	return 0
}

// itemFields are the stored fields item reads for lang.
func itemFields(lang int64) []string {
	return []string{indexdoc.FieldID, indexdoc.FieldTypeRef, indexdoc.NameField(lang), indexdoc.FieldName,
		indexdoc.FieldHasDisplayName, indexdoc.FieldModifiedBy, indexdoc.FieldModified, indexdoc.FieldDeleted}
}

func item(f map[string]any, lang int64) Item {
	id := int64Of(f[indexdoc.FieldID])
	it := Item{ID: id, TypeRef: int64Of(f[indexdoc.FieldTypeRef])}
	it.DisplayName, it.HasDisplayName = displayName(f, lang, id)
	if hd, ok := f[indexdoc.FieldHasDisplayName].(bool); ok {
		it.HasDisplayName = hd
	}
	it.ModifiedBy, _ = f[indexdoc.FieldModifiedBy].(string)
	it.Modified, _ = f[indexdoc.FieldModified].(time.Time)
	it.Deleted, _ = f[indexdoc.FieldDeleted].(bool)
	return it
}

// CountRequest is ObjectCountRequest.
type CountRequest struct {
	Branch int64
	Filter Filter
	Freshness
}

// CountResult is ObjectCountResult.
type CountResult struct {
	Version int64
	Count   int64
}

// Count counts the objects matching the filter.
func (s *Service) Count(ctx context.Context, r CountRequest) (CountResult, error) {
	if err := checkFilterTexts(r.Filter); err != nil {
		return CountResult{}, err
	}
	v, err := s.wait(ctx, r.Freshness)
	if err != nil {
		return CountResult{}, err
	}
	q, err := s.query(ctx, r.Branch, r.Filter)
	if err != nil {
		return CountResult{}, err
	}
	n, err := s.count(ctx, q)
	return CountResult{Version: v, Count: n}, err
}
