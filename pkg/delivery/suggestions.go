package delivery

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/search"
	"github.com/cmsplatform/cms/pkg/textmatch"
)

// SuggestOptions are the suggestion parameters beyond Request.
type SuggestOptions struct {
	Pattern, Fields string
	Take            int32
	SortByValue     bool
	// Analyze (default true) completes the last word of the pattern, the
	// others having to occur too; false completes whole values.
	Analyze *bool
	// Fuzzy completes the last word with words at least
	// FuzzyMinSimilarity (nil: textmatch.DefaultMinSimilarity) similar
	// that share its first FuzzyPrefixLength runes (see textmatch). Both
	// are checked and used only with Fuzzy, which, as in the Index group,
	// applies to analysed patterns only.
	Fuzzy              bool
	FuzzyMinSimilarity *float64
	FuzzyPrefixLength  int
}

// Suggestion is one completion.
type Suggestion struct {
	Value  string // lower case
	Count  int64
	Length int // length of the completing suffix (0 if not longer)
}

// Suggestions completes pattern from the words (or, with Analyze false,
// the whole values) of fields over the objects the filter matches. Like
// Occurrences, an object contributes the words of the values rendering
// shows for it (see chainSteps); earlier words of an analysed pattern
// must occur in those values. The engine supplies the candidate terms
// (terms aggregations over textmatch.Completion.Stem); which complete the
// pattern is decided by textmatch, the same logic as the Index group's
// suggestions.
func (s *Service) Suggestions(ctx context.Context, r Request, o SuggestOptions) ([]Suggestion, error) {
	minSim := textmatch.DefaultMinSimilarity
	if o.FuzzyMinSimilarity != nil {
		minSim = *o.FuzzyMinSimilarity
	}
	if o.Fuzzy {
		if err := textmatch.CheckFuzzy(minSim, o.FuzzyPrefixLength); err != nil {
			return nil, invalidf("%v", err)
		}
	}
	size, err := facetTake(o.Take)
	if err != nil {
		return nil, err
	}
	names := splitFields(o.Fields)
	if len(names) == 0 {
		return nil, invalidf("fields is required")
	}
	if strings.TrimSpace(o.Pattern) == "" {
		return nil, invalidf("pattern is required")
	}
	sc, err := s.scope(ctx, r)
	if UnknownBranch(err) {
		return []Suggestion{}, nil // a branch that does not exist suggests nothing
	}
	if err != nil {
		return nil, err
	}
	q, err := sc.filterQuery(r.Filter, r.Deleted)
	if err != nil {
		return nil, err
	}
	analyze := o.Analyze == nil || *o.Analyze
	words := indexdoc.Words(o.Pattern)
	pattern := strings.ToLower(strings.TrimSpace(o.Pattern))
	if pattern == "" {
		return nil, invalidf("pattern is required")
	}
	field, match, earlier := indexdoc.FieldValuesLower, textmatch.Completion{Typed: pattern}, []string(nil)
	if analyze {
		if len(words) == 0 {
			return nil, invalidf("pattern %q has no words", o.Pattern)
		}
		field, earlier = indexdoc.FieldWords, words[:len(words)-1]
		match = textmatch.Completion{Typed: words[len(words)-1], Fuzzy: o.Fuzzy, MinSimilarity: minSim, PrefixLength: o.FuzzyPrefixLength}
	}
	counts := map[string]int64{}
	for _, name := range names {
		_, chain, err := sc.valueChain(name)
		if err != nil {
			return nil, err
		}
		_, steps, err := s.chainSteps(ctx, q, chain)
		if err != nil {
			return nil, err
		}
		// The engine's top size by count are the answer only for a plain
		// prefix over one step; otherwise every candidate is needed.
		aggSize := size
		if match.Fuzzy || o.SortByValue || len(names) > 1 || len(steps) > 1 {
			aggSize = search.MaxResultWindow
		}
		for _, st := range steps {
			fq := search.And{st.query}
			for _, w := range earlier {
				fq = append(fq, search.Term{Field: indexdoc.FieldWords, Value: st.key + "=" + w})
			}
			res, err := s.eng.Search(ctx, search.SearchRequest{Index: s.objects, Query: fq,
				Aggs: []search.TermsAgg{{Field: field, Size: aggSize, Prefix: st.key + "=" + match.Stem()}}})
			if err != nil {
				return nil, s.searchErr(err)
			}
			for _, b := range res.Aggs[field].Buckets {
				v, _ := b.Key.(string)
				if v = strings.TrimPrefix(v, st.key+"="); match.Match(v) {
					counts[v] += b.Count
				}
			}
		}
	}
	out := make([]Suggestion, 0, len(counts))
	for v, n := range counts {
		out = append(out, Suggestion{Value: v, Count: n, Length: match.Length(v)})
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
