// Package textmatch decides which indexed terms complete what a user typed,
// for the type-ahead suggestions of the Index group (pkg/indexquery) and the
// Delivery group (pkg/delivery). The search engine only supplies candidate
// terms (a terms aggregation over a prefix, see Completion.Stem); the
// matching below runs in Go, so Bleve and Elasticsearch answer alike.
//
// Fuzzy matching is Lucene 3's FuzzyQuery, which NovaDB's
// fuzzyMinSimilarity and fuzzyPrefixLength parameters come from: a term
// matches when it starts with the first PrefixLength runes of the typed
// term and its Similarity to the typed term is greater than MinSimilarity.
package textmatch

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// DefaultMinSimilarity is the fuzzyMinSimilarity default of NovaDB.
const DefaultMinSimilarity = 0.5

// ErrInvalid means a fuzzy parameter is out of range. Callers wrap it into
// their own invalid-argument error.
var ErrInvalid = errors.New("textmatch: invalid fuzzy parameter")

// CheckFuzzy validates fuzzy parameters: 0 <= minSimilarity < 1 and
// prefixLength >= 0.
func CheckFuzzy(minSimilarity float64, prefixLength int) error {
	if !(minSimilarity >= 0 && minSimilarity < 1) {
		return fmt.Errorf("%w: fuzzyMinSimilarity %v (want 0 <= x < 1)", ErrInvalid, minSimilarity)
	}
	if prefixLength < 0 {
		return fmt.Errorf("%w: fuzzyPrefixLength %d is negative", ErrInvalid, prefixLength)
	}
	return nil
}

// Completion matches candidate terms against one typed term (lower case,
// like the indexed terms).
type Completion struct {
	Typed string
	// Fuzzy: terms similar to Typed instead of terms starting with it.
	Fuzzy bool
	// MinSimilarity and PrefixLength apply when Fuzzy (see CheckFuzzy).
	MinSimilarity float64
	PrefixLength  int
}

// Stem is the prefix every matching term starts with: Typed, or with
// Fuzzy its first PrefixLength runes (often ""). Candidates are the
// indexed terms with this prefix.
func (c Completion) Stem() string {
	if !c.Fuzzy {
		return c.Typed
	}
	return string([]rune(c.Typed)[:min(max(c.PrefixLength, 0), utf8.RuneCountInString(c.Typed))])
}

// Match tells whether term completes Typed.
func (c Completion) Match(term string) bool {
	stem := c.Stem()
	if !strings.HasPrefix(term, stem) {
		return false
	}
	return !c.Fuzzy || Similarity(c.Typed, term, utf8.RuneCountInString(stem)) > c.MinSimilarity
}

// Length is the number of runes term adds to Typed (0 when not longer).
func (c Completion) Length(term string) int {
	return max(0, utf8.RuneCountInString(term)-utf8.RuneCountInString(c.Typed))
}

// Similarity is Lucene 3's FuzzyQuery measure of a and b sharing a common
// prefix of prefix runes: 1 - edits / (prefix + the shorter suffix
// length), edits being the Levenshtein distance of the suffixes, over
// runes. Equal empty suffixes are 1, unequal ones with nothing in common
// 0.
func Similarity(a, b string, prefix int) float64 {
	ra, rb := []rune(a), []rune(b)
	prefix = max(prefix, 0)
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

// levenshtein is the edit distance (insertions, deletions, substitutions)
// of a and b.
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
