package delivery

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/errkind"
	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/model"
	"github.com/cmsplatform/cms/pkg/params"
	"github.com/cmsplatform/cms/pkg/search"
)

// ErrUnsupported means a valid option this implementation does not provide.
var ErrUnsupported = errkind.New(errkind.Unsupported, "not supported")

// Default and maximum number of values per field or suggestions.
const (
	DefaultFacetTake = 100
	MaxFacetTake     = 1000
)

// maxKeysPerAttr bounds the (language, variant) keys of one attribute that
// chainSteps looks for; with more, no key is skipped.
const maxKeysPerAttr = 1000

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

// valueChain returns the value keys of a field (attribute ApiIdentifier,
// or displayName) in the order rendering picks them (view.selected): each
// variant of the request, within it each language of the fallback chain,
// ending with language-independent values. For displayName of a typed
// request whose type names its objects by another attribute, that
// attribute's keys come first, then the object name's, as render does; an
// untyped request counts the object name only. The attribute returned
// gives the value type.
func (sc *scope) valueChain(name string) (*attribute, []string, error) {
	var attrs []int64
	a := sc.m.attribute(name)
	if strings.EqualFold(name, "displayName") {
		a = sc.m.attrs[content.AttrName]
		if sc.typ != nil && sc.typ.nameAttr != 0 && sc.typ.nameAttr != content.AttrName {
			attrs = append(attrs, sc.typ.nameAttr)
		}
		attrs = append(attrs, content.AttrName)
	} else if a != nil {
		attrs = append(attrs, a.id)
	}
	if a == nil {
		return nil, nil, invalidf("unknown field %q", name)
	}
	var keys []string
	for _, id := range attrs {
		for _, va := range sc.view.variants {
			for _, l := range sc.view.langs {
				keys = append(keys, indexdoc.Key(id, l, va))
			}
		}
	}
	return a, keys, nil
}

// step is one key of a value chain with the query selecting the objects
// whose rendered value has that key.
type step struct {
	key   string
	query search.Query
}

// chainSteps partitions the objects q matches by the key of the value
// rendering shows for them, keeping the work in the search engine: step k
// selects q AND has(key k) AND NOT has(any earlier key of the chain), so
// an aggregation per step counts every object once, under the value of
// the first key it has - the same choice as view.selected (keyStep). Keys
// that no matching object has get no step (excluding them in later steps
// changes nothing); one search
// with a FieldKeys aggregation per attribute finds them and also counts
// the objects q matches (the first result).
func (s *Service) chainSteps(ctx context.Context, q search.Query, chain []string) (int64, []step, error) {
	req := search.SearchRequest{Index: s.objects, Query: q}
	seen := map[string]bool{}
	for _, k := range chain {
		if attr, _, _ := strings.Cut(k, ":"); !seen[attr] {
			seen[attr] = true
			req.Aggs = append(req.Aggs, search.TermsAgg{Name: "keys" + attr, Field: indexdoc.FieldKeys,
				Size: maxKeysPerAttr, Prefix: attr + ":"})
		}
	}
	res, err := s.eng.Search(ctx, req)
	if err != nil {
		return 0, nil, s.searchErr(err)
	}
	present, all := map[string]bool{}, false
	for _, agg := range res.Aggs {
		all = all || agg.Other > 0
		for _, b := range agg.Buckets {
			k, _ := b.Key.(string)
			present[k] = true
		}
	}
	var steps []step
	for i, k := range chain {
		if !all && !present[k] {
			continue
		}
		steps = append(steps, step{key: k, query: search.And{q, keyStep(chain, i)}})
	}
	return res.Total, steps, nil
}

// keyStep matches the objects whose rendered value has the key chain[i]
// of the value chain: those with a value at that key and none at an
// earlier one.
func keyStep(chain []string, i int) search.Query {
	has := search.Term{Field: indexdoc.FieldKeys, Value: chain[i]}
	if i == 0 {
		return has
	}
	earlier := make([]any, i)
	for j, k := range chain[:i] {
		earlier[j] = k
	}
	return search.And{has, search.Not{Query: search.Terms{Field: indexdoc.FieldKeys, Values: earlier}}}
}

// facetTake reads take by the shared rule (params.Take); 0 = not sent.
func facetTake(take int32) (int, error) {
	var v *int32
	if take != 0 {
		v = &take
	}
	n, err := params.Take("take", v, DefaultFacetTake, MaxFacetTake)
	if err != nil {
		return 0, invalidf("%v", err)
	}
	return n, nil
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
// displayName) over the objects the filter matches. An object counts
// under the values rendering shows for it: those of the first (variant,
// language) of the request's chains it has values for (see valueChain and
// chainSteps); NotNull counts the objects with such values, Null the
// others. Values are the take most frequent, sorted by value; More tells
// that some were left out. With one step the engine picks them; with
// several, each step aggregates up to search.MaxResultWindow values and
// the sums are cut here (exact unless a step has more distinct values).
//
// A branch that does not exist has no occurrences (an empty map).
func (s *Service) Occurrences(ctx context.Context, r Request, fields string, take int32) (map[string]Occurrences, error) {
	size, err := facetTake(take)
	if err != nil {
		return nil, err
	}
	names := splitFields(fields)
	if len(names) == 0 {
		return nil, invalidf("fields is required")
	}
	sc, err := s.scope(ctx, r)
	if UnknownBranch(err) {
		return map[string]Occurrences{}, nil
	}
	if err != nil {
		return nil, err
	}
	q, err := sc.filterQuery(r.Filter, r.Deleted)
	if err != nil {
		return nil, err
	}
	out := map[string]Occurrences{}
	for _, name := range names {
		a, chain, err := sc.valueChain(name)
		if err != nil {
			return nil, err
		}
		if out[name], err = s.occurrences(ctx, q, a, chain, size); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// occurrences counts in one search: per key of the chain a terms
// aggregation of its values filtered to the objects whose rendered value
// has that key (has it, and none of the earlier keys; see chainSteps),
// answered from the engine's filtered aggregations (the column index on
// the embedded engine, filter aggregations on Elasticsearch).
func (s *Service) occurrences(ctx context.Context, q search.Query, a *attribute, chain []string, size int) (Occurrences, error) {
	o := Occurrences{ValueType: valueType(a.dataType)}
	aggSize := size
	if len(chain) > 1 {
		aggSize = search.MaxResultWindow
	}
	req := search.SearchRequest{Index: s.objects, Query: q}
	for i, k := range chain {
		req.Aggs = append(req.Aggs, search.TermsAgg{Name: "s" + strconv.Itoa(i), Field: indexdoc.FieldValues,
			Size: aggSize, Prefix: k + "=", Filter: keyStep(chain, i)})
	}
	res, err := s.eng.Search(ctx, req)
	if err != nil {
		return Occurrences{}, s.searchErr(err)
	}
	total := res.Total
	counts := map[string]int64{}
	for i, k := range chain {
		agg := res.Aggs["s"+strconv.Itoa(i)]
		o.NotNull += agg.Docs
		o.More = o.More || agg.Other > 0
		for _, b := range agg.Buckets {
			raw, _ := b.Key.(string)
			counts[strings.TrimPrefix(raw, k+"=")] += b.Count
		}
	}
	o.Null = total - o.NotNull
	for raw, n := range counts {
		o.Values = append(o.Values, ValueCount{Value: typedValue(o.ValueType, raw), Count: n})
	}
	if len(o.Values) > size {
		slices.SortFunc(o.Values, func(x, y ValueCount) int {
			if c := cmp.Compare(y.Count, x.Count); c != 0 {
				return c
			}
			return compareValues(x.Value, y.Value)
		})
		o.Values, o.More = o.Values[:size], true
	}
	slices.SortFunc(o.Values, func(x, y ValueCount) int { return compareValues(x.Value, y.Value) })
	return o, nil
}

func valueType(dt string) string {
	switch {
	case model.IsNumeric(dt):
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

// compareValues orders occurrence values with search.CompareValues, an
// int64 against a float64 compared as float64s: typedValue gives a number
// field both (Decimal 20 and 19.5), and search.CompareValues orders values
// of one kind only.
func compareValues(a, b any) int {
	if x, ok := a.(int64); ok {
		if y, ok := b.(float64); ok {
			return search.CompareValues(float64(x), y)
		}
	}
	if x, ok := a.(float64); ok {
		if y, ok := b.(int64); ok {
			return search.CompareValues(x, float64(y))
		}
	}
	return search.CompareValues(a, b)
}
