package delivery

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/indexing"
	"github.com/cmsplatform/cms/pkg/search"
)

// ErrUnsupported: a valid option this implementation does not provide
// (fuzzy suggestions).
var ErrUnsupported = errors.New("delivery: not supported")

// Default and maximum number of values per field or suggestions.
const (
	DefaultFacetTake = 100
	MaxFacetTake     = 1000
)

// Occurrences are the values of one field among the matching objects.
type Occurrences struct {
	Null, NotNull int64
	// ValueType is "string", "number" or "boolean".
	ValueType string
	More      bool
	Values    []ValueCount // sorted by value
}

// ValueCount is one value and the number of objects carrying it.
type ValueCount struct {
	Value any // string, int64, float64 or bool
	Count int64
}

// fieldKey is the value key counted for a field: the request's language
// for language-dependent attributes, else language-independent; variant
// of the request (first) or none.
func (sc *scope) fieldKey(name string) (*attribute, string, error) {
	a := sc.m.attribute(name)
	if strings.EqualFold(name, "displayName") {
		a = sc.m.attrs[content.AttrName]
	}
	if a == nil {
		return nil, "", invalidf("unknown field %q", name)
	}
	var lang int64
	if a.langDep || a.id == content.AttrName {
		lang = sc.view.langs[0]
	}
	return a, indexing.Key(a.id, lang, sc.view.variants[0]), nil
}

func facetTake(take int32) (int, error) {
	if take == 0 {
		return DefaultFacetTake, nil
	}
	if take < 1 || take > MaxFacetTake {
		return 0, invalidf("take must be between 1 and %d, got %d", MaxFacetTake, take)
	}
	return int(take), nil
}

func splitFields(fields string) []string {
	var out []string
	for f := range strings.SplitSeq(fields, ",") {
		if f = strings.TrimSpace(f); f != "" && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// Occurrences counts the values of fields (attribute ApiIdentifiers, or
// displayName) over the objects the filter matches.
func (s *Service) Occurrences(ctx context.Context, r Request, fields string, take int32) (map[string]Occurrences, error) {
	sc, err := s.scope(ctx, r)
	if err != nil {
		return nil, err
	}
	size, err := facetTake(take)
	if err != nil {
		return nil, err
	}
	names := splitFields(fields)
	if len(names) == 0 {
		return nil, invalidf("fields is required")
	}
	q, err := sc.filterQuery(r.Filter, r.Deleted)
	if err != nil {
		return nil, err
	}
	out := map[string]Occurrences{}
	for _, name := range names {
		a, key, err := sc.fieldKey(name)
		if err != nil {
			return nil, err
		}
		res, err := s.eng.Search(ctx, search.SearchRequest{Index: s.objects,
			Query: search.And{q, search.Term{Field: indexing.FieldKeys, Value: key}},
			Aggs:  []search.TermsAgg{{Field: indexing.FieldValues, Size: size, Prefix: key + "="}}})
		if err != nil {
			return nil, s.searchErr(err)
		}
		total, err := s.eng.Count(ctx, s.objects, q)
		if err != nil {
			return nil, s.searchErr(err)
		}
		agg := res.Aggs[indexing.FieldValues]
		o := Occurrences{NotNull: res.Total, Null: total - res.Total, ValueType: valueType(a.dataType), More: agg.Other > 0}
		for _, b := range agg.Buckets {
			raw, _ := b.Key.(string)
			o.Values = append(o.Values, ValueCount{Value: typedValue(o.ValueType, strings.TrimPrefix(raw, key+"=")), Count: b.Count})
		}
		slices.SortFunc(o.Values, func(x, y ValueCount) int { return compareValues(x.Value, y.Value) })
		out[name] = o
	}
	return out, nil
}

func valueType(dt string) string {
	switch {
	case dt == "Integer" || dt == "Decimal" || dt == "Float" || dt == "ObjRef" || strings.HasPrefix(dt, "BinRef"):
		return "number"
	case dt == "Boolean":
		return "boolean"
	}
	return "string"
}

func typedValue(kind, s string) any {
	switch kind {
	case "number":
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f
		}
	case "boolean":
		if b, err := strconv.ParseBool(s); err == nil {
			return b
		}
	}
	return s
}

func compareValues(a, b any) int {
	toF := func(v any) (float64, bool) {
		switch x := v.(type) {
		case int64:
			return float64(x), true
		case float64:
			return x, true
		}
		return 0, false
	}
	if fa, ok := toF(a); ok {
		if fb, ok := toF(b); ok {
			return cmp.Compare(fa, fb)
		}
	}
	if ba, ok := a.(bool); ok {
		if bb, ok := b.(bool); ok {
			return cmp.Compare(strconv.FormatBool(ba), strconv.FormatBool(bb))
		}
	}
	sa, _ := a.(string)
	sb, _ := b.(string)
	return strings.Compare(sa, sb)
}

// SuggestOptions are the suggestion parameters beyond Request.
type SuggestOptions struct {
	Pattern, Fields string
	Take            int32
	SortByValue     bool
	// Analyze (default true) completes the last word of the pattern, the
	// others having to occur too; false completes whole values.
	Analyze *bool
	Fuzzy   bool
}

// Suggestion is one completion.
type Suggestion struct {
	Value  string // lower case
	Count  int64
	Length int // length of the completing suffix
}

// Suggestions completes pattern from the words (or, with Analyze false,
// the whole values) of fields over the objects the filter matches.
func (s *Service) Suggestions(ctx context.Context, r Request, o SuggestOptions) ([]Suggestion, error) {
	if o.Fuzzy {
		return nil, fmt.Errorf("%w: fuzzy suggestions", ErrUnsupported)
	}
	sc, err := s.scope(ctx, r)
	if err != nil {
		return nil, err
	}
	size, err := facetTake(o.Take)
	if err != nil {
		return nil, err
	}
	names := splitFields(o.Fields)
	if len(names) == 0 {
		return nil, invalidf("fields is required")
	}
	q, err := sc.filterQuery(r.Filter, r.Deleted)
	if err != nil {
		return nil, err
	}
	analyze := o.Analyze == nil || *o.Analyze
	words := indexing.Words(o.Pattern)
	pattern := strings.ToLower(strings.TrimSpace(o.Pattern))
	if pattern == "" {
		return nil, invalidf("pattern is required")
	}
	counts := map[string]int64{}
	for _, name := range names {
		_, key, err := sc.fieldKey(name)
		if err != nil {
			return nil, err
		}
		fq := search.And{q}
		field, prefix := indexing.FieldValuesLower, key+"="+pattern
		if analyze {
			if len(words) == 0 {
				return nil, invalidf("pattern %q has no words", o.Pattern)
			}
			for _, w := range words[:len(words)-1] {
				fq = append(fq, search.Term{Field: indexing.FieldWords, Value: key + "=" + w})
			}
			field, prefix = indexing.FieldWords, key+"="+words[len(words)-1]
		}
		res, err := s.eng.Search(ctx, search.SearchRequest{Index: s.objects, Query: fq,
			Aggs: []search.TermsAgg{{Field: field, Size: size, Prefix: prefix}}})
		if err != nil {
			return nil, s.searchErr(err)
		}
		for _, b := range res.Aggs[field].Buckets {
			v, _ := b.Key.(string)
			counts[strings.TrimPrefix(v, key+"=")] += b.Count
		}
	}
	typed := pattern
	if analyze {
		typed = words[len(words)-1]
	}
	out := make([]Suggestion, 0, len(counts))
	for v, n := range counts {
		out = append(out, Suggestion{Value: v, Count: n, Length: len([]rune(v)) - len([]rune(typed))})
	}
	slices.SortFunc(out, func(a, b Suggestion) int {
		if !o.SortByValue {
			if c := cmp.Compare(b.Count, a.Count); c != 0 {
				return c
			}
		}
		return strings.Compare(a.Value, b.Value)
	})
	if len(out) > size {
		out = out[:size]
	}
	return out, nil
}
