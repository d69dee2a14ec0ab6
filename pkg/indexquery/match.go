package indexquery

import "context"

// MatchStrings returns the sorted indexes of the strings that match the
// Lucene query (see ParseLucene; words are compared like the index does:
// lower-cased runs of letters and digits). The query is capped like a
// full-text filter (MaxPhraseBytes, MaxPhraseTerms); the strings are
// bounded by the request body only, so the loop stops when ctx ends.
func MatchStrings(ctx context.Context, query *string, useOr bool, strs []string) ([]int, error) {
	if query == nil {
		return nil, invalid("query is required")
	}
	n, err := parseCapped("query", *query, useOr)
	if err != nil {
		return nil, err
	}
	out := []int{}
	for i, s := range strs {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		if n.Match(s) {
			out = append(out, i)
		}
	}
	return out, nil
}
