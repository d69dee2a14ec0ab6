package indexquery

import (
	"cmp"
	"context"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/params"
	"github.com/cmsplatform/cms/pkg/search"
	"github.com/cmsplatform/cms/pkg/textmatch"
)

// Suggestion defaults and limits (NovaDB SuggestionsRequest).
const (
	DefaultSuggestTake         = 10
	MaxSuggestTake             = 1000
	DefaultFuzzyMinSimilarity  = textmatch.DefaultMinSimilarity
	defaultSuggestAnalyze      = true
	suggestFullTextBucketLimit = search.MaxResultWindow
)

// SuggestionsRequest is NovaDB's SuggestionsRequest; nil pointers take
// the defaults (Take 10, Analyze true, FuzzyMinSimilarity 0.5).
type SuggestionsRequest struct {
	Branch             int64
	Pattern            *string
	DisplayName        bool
	Attributes         []AttrKey
	FullText           bool
	Filter             Filter
	Take               *int
	SortByValue        bool
	Analyze            *bool
	Fuzzy              bool
	FuzzyMinSimilarity *float64
	FuzzyPrefixLength  int
	Freshness
}

// Suggestion is one completion: Value in lower case, Count the number of
// matching objects (summed over the sources), Length the number of
// characters it adds to the typed word.
type Suggestion struct {
	Value  string
	Count  int64
	Length int
}

// SuggestionsResult is NovaDB's SuggestionsResult.
type SuggestionsResult struct {
	Version     int64
	Suggestions []Suggestion
}

// Suggestions returns type-ahead completions of the last word of Pattern
// (Analyze) or of the whole Pattern as a value prefix (!Analyze), taken
// from the display name in the UI language (the default source), the
// given attributes and, with FullText, every indexed word. Earlier words
// of an analysed pattern must occur in a source of the object. With Fuzzy
// the last word matches words at least FuzzyMinSimilarity similar
// (Lucene's 1 - edits / shorter length, after a common prefix of
// FuzzyPrefixLength runes).
func (s *Service) Suggestions(ctx context.Context, r SuggestionsRequest) (SuggestionsResult, error) {
	if err := checkFilterTexts(r.Filter); err != nil {
		return SuggestionsResult{}, err
	}
	var sent *int32
	if r.Take != nil {
		t := int32(max(min(*r.Take, math.MaxInt32), math.MinInt32))
		sent = &t
	}
	take, err := params.Take("take", sent, DefaultSuggestTake, MaxSuggestTake)
	if err != nil {
		return SuggestionsResult{}, invalid("%v", err)
	}
	minSim := DefaultFuzzyMinSimilarity
	if r.FuzzyMinSimilarity != nil {
		minSim = *r.FuzzyMinSimilarity
	}
	if err := textmatch.CheckFuzzy(minSim, r.FuzzyPrefixLength); err != nil {
		return SuggestionsResult{}, invalid("%v", err)
	}
	analyze := defaultSuggestAnalyze
	if r.Analyze != nil {
		analyze = *r.Analyze
	}
	if r.Pattern != nil {
		if err := checkPhrase("pattern", *r.Pattern); err != nil {
			return SuggestionsResult{}, err
		}
	}
	v, err := s.wait(ctx, r.Freshness)
	if err != nil {
		return SuggestionsResult{}, err
	}
	q, err := s.query(ctx, r.Branch, r.Filter)
	if err != nil {
		return SuggestionsResult{}, err
	}
	var keys []string // the sources: FieldWords / FieldValuesLower keys
	if r.DisplayName || len(r.Attributes) == 0 && !r.FullText {
		keys = append(keys, s.displayNameKey(uiLang(r.Filter.UILanguage)))
	}
	for _, k := range r.Attributes {
		keys = append(keys, indexdoc.Key(k.Attr, k.Lang, k.Variant))
	}
	pattern := ""
	if r.Pattern != nil {
		pattern = *r.Pattern
	}
	field, last := indexdoc.FieldWords, strings.ToLower(pattern)
	if analyze {
		words := indexdoc.Words(pattern)
		last = ""
		if n := len(words); n > 0 && !endsInSpace(pattern) {
			last, words = words[n-1], words[:n-1]
		}
		sources := len(keys)
		if r.FullText {
			sources++
		}
		if err := checkTerms("pattern", len(words)*sources); err != nil {
			return SuggestionsResult{}, err
		}
		q = append(q.(search.And), wordFilters(keys, r.FullText, words)...)
	} else {
		field = indexdoc.FieldValuesLower
		r.Fuzzy = false
	}
	match := textmatch.Completion{Typed: last, Fuzzy: r.Fuzzy, MinSimilarity: minSim, PrefixLength: r.FuzzyPrefixLength}
	stem := match.Stem()
	req := search.SearchRequest{Query: q}
	var prefixes []string
	for i, k := range keys {
		p := strings.ToLower(k) + "=" + stem
		prefixes = append(prefixes, p)
		req.Aggs = append(req.Aggs, search.TermsAgg{Name: "k" + itoa(i), Field: field, Size: search.MaxResultWindow, Prefix: p})
	}
	if r.FullText && analyze {
		req.Aggs = append(req.Aggs, search.TermsAgg{Name: "all", Field: indexdoc.FieldWords, Size: suggestFullTextBucketLimit})
	}
	res, err := s.run(ctx, req)
	if err != nil {
		return SuggestionsResult{}, err
	}
	counts := map[string]int64{}
	consider := func(word string, n int64) {
		if match.Match(word) {
			counts[word] += n
		}
	}
	for i := range keys {
		for _, b := range res.Aggs["k"+itoa(i)].Buckets {
			term, _ := b.Key.(string)
			consider(strings.TrimPrefix(term, prefixes[i][:len(prefixes[i])-len(stem)]), b.Count)
		}
	}
	for _, b := range res.Aggs["all"].Buckets {
		term, _ := b.Key.(string)
		// Display-name words repeat words of attribute values: count those.
		if key, word, ok := strings.Cut(term, "="); ok && !indexdoc.IsNameKey(key) {
			consider(word, b.Count)
		}
	}
	out := SuggestionsResult{Version: v, Suggestions: []Suggestion{}}
	for w, n := range counts {
		out.Suggestions = append(out.Suggestions, Suggestion{Value: w, Count: n, Length: match.Length(w)})
	}
	slices.SortFunc(out.Suggestions, func(a, b Suggestion) int {
		if !r.SortByValue {
			if c := cmp.Compare(b.Count, a.Count); c != 0 {
				return c
			}
		}
		return strings.Compare(a.Value, b.Value)
	})
	if len(out.Suggestions) > take {
		out.Suggestions = out.Suggestions[:take]
	}
	return out, nil
}

func endsInSpace(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return s != "" && !unicode.IsLetter(r) && !unicode.IsDigit(r)
}

// displayNameKey is the source of display-name suggestions in lang: the
// names shown in lang (indexdoc.NameKey) when the index has them, else
// the attribute-1000 values in lang.
func (s *Service) displayNameKey(lang int64) string {
	if s.hasLang(lang) {
		return indexdoc.NameKey(lang)
	}
	return indexdoc.Key(content.AttrName, lang, 0)
}

// wordFilters: each earlier word of the pattern occurs in some source.
func wordFilters(keys []string, fullText bool, words []string) []search.Query {
	var out []search.Query
	for _, w := range words {
		var alts search.Or
		for _, k := range keys {
			alts = append(alts, search.Term{Field: indexdoc.FieldWords, Value: k + "=" + w})
		}
		if fullText {
			alts = append(alts, search.Match{Field: indexdoc.FieldFullText, Text: w})
		}
		out = append(out, alts)
	}
	return out
}

// similarity is textmatch.Similarity (kept for match_test.go).
func itoa(i int) string { return strconv.Itoa(i) }
