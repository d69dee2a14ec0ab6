package indexquery

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/indexing"
	"github.com/cmsplatform/cms/pkg/search"
)

// Suggestion defaults and limits (NovaDB SuggestionsRequest).
const (
	DefaultSuggestTake         = 10
	MaxSuggestTake             = 1000
	DefaultFuzzyMinSimilarity  = 0.5
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
	take := DefaultSuggestTake
	if r.Take != nil {
		if *r.Take < 1 || *r.Take > MaxSuggestTake {
			return SuggestionsResult{}, invalid("take %d (want 1..%d)", *r.Take, MaxSuggestTake)
		}
		take = *r.Take
	}
	minSim := DefaultFuzzyMinSimilarity
	if r.FuzzyMinSimilarity != nil {
		minSim = *r.FuzzyMinSimilarity
		if minSim < 0 || minSim >= 1 {
			return SuggestionsResult{}, invalid("fuzzyMinSimilarity %v (want 0 <= x < 1)", minSim)
		}
	}
	if r.FuzzyPrefixLength < 0 {
		return SuggestionsResult{}, invalid("fuzzyPrefixLength %d is negative", r.FuzzyPrefixLength)
	}
	analyze := defaultSuggestAnalyze
	if r.Analyze != nil {
		analyze = *r.Analyze
	}
	v, err := s.wait(ctx, r.Freshness)
	if err != nil {
		return SuggestionsResult{}, err
	}
	q, err := s.query(ctx, r.Branch, r.Filter)
	if err != nil {
		return SuggestionsResult{}, err
	}
	keys := r.Attributes
	if r.DisplayName || len(keys) == 0 && !r.FullText {
		keys = append([]AttrKey{{Attr: content.AttrName, Lang: uiLang(r.Filter.UILanguage)}}, keys...)
	}
	pattern := ""
	if r.Pattern != nil {
		pattern = *r.Pattern
	}
	field, last := indexing.FieldWords, strings.ToLower(pattern)
	if analyze {
		words := indexing.Words(pattern)
		last = ""
		if n := len(words); n > 0 && !endsInSpace(pattern) {
			last, words = words[n-1], words[:n-1]
		}
		q = append(q.(search.And), wordFilters(keys, r.FullText, words)...)
	} else {
		field = indexing.FieldValuesLower
		r.Fuzzy = false
	}
	stem := last
	if r.Fuzzy {
		stem = string([]rune(last)[:min(r.FuzzyPrefixLength, utf8.RuneCountInString(last))])
	}
	req := search.SearchRequest{Query: q}
	var prefixes []string
	for i, k := range keys {
		p := strings.ToLower(indexing.Key(k.Attr, k.Lang, k.Variant)) + "=" + stem
		prefixes = append(prefixes, p)
		req.Aggs = append(req.Aggs, search.TermsAgg{Name: "k" + itoa(i), Field: field, Size: search.MaxResultWindow, Prefix: p})
	}
	if r.FullText && analyze {
		req.Aggs = append(req.Aggs, search.TermsAgg{Name: "all", Field: indexing.FieldWords, Size: suggestFullTextBucketLimit})
	}
	res, err := s.run(ctx, req)
	if err != nil {
		return SuggestionsResult{}, err
	}
	counts := map[string]int64{}
	consider := func(word string, n int64) {
		if r.Fuzzy {
			if !strings.HasPrefix(word, stem) || similarity(last, word, len([]rune(stem))) <= minSim {
				return
			}
		} else if !strings.HasPrefix(word, last) {
			return
		}
		counts[word] += n
	}
	for i := range keys {
		for _, b := range res.Aggs["k"+itoa(i)].Buckets {
			term, _ := b.Key.(string)
			consider(strings.TrimPrefix(term, prefixes[i][:len(prefixes[i])-len(stem)]), b.Count)
		}
	}
	for _, b := range res.Aggs["all"].Buckets {
		term, _ := b.Key.(string)
		if _, word, ok := strings.Cut(term, "="); ok {
			consider(word, b.Count)
		}
	}
	out := SuggestionsResult{Version: v, Suggestions: []Suggestion{}}
	for w, n := range counts {
		out.Suggestions = append(out.Suggestions, Suggestion{Value: w,
			Count: n, Length: max(0, utf8.RuneCountInString(w)-utf8.RuneCountInString(last))})
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

// wordFilters: each earlier word of the pattern occurs in some source.
func wordFilters(keys []AttrKey, fullText bool, words []string) []search.Query {
	var out []search.Query
	for _, w := range words {
		var alts search.Or
		for _, k := range keys {
			alts = append(alts, search.Term{Field: indexing.FieldWords, Value: indexing.Key(k.Attr, k.Lang, k.Variant) + "=" + w})
		}
		if fullText {
			alts = append(alts, search.Match{Field: indexing.FieldFullText, Text: w})
		}
		out = append(out, alts)
	}
	return out
}

// similarity is Lucene 3's FuzzyQuery measure: 1 - edits / (prefix +
// shorter suffix length), over runes.
func similarity(a, b string, prefix int) float64 {
	ra, rb := []rune(a), []rune(b)
	la, lb := len(ra)-min(prefix, len(ra)), len(rb)-min(prefix, len(rb))
	n := prefix + min(la, lb)
	if n == 0 {
		if la == lb {
			return 1
		}
		return 0
	}
	return 1 - float64(levenshtein(ra[min(prefix, len(ra)):], rb[min(prefix, len(rb)):]))/float64(n)
}

func levenshtein(a, b []rune) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := 1
			if a[i-1] == b[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func itoa(i int) string { return strconv.Itoa(i) }
