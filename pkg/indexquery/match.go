package indexquery

// MatchStrings returns the sorted indexes of the strings that match the
// Lucene query (see ParseLucene; words are compared like the index does:
// lower-cased runs of letters and digits).
func MatchStrings(query *string, useOr bool, strs []string) ([]int, error) {
	if query == nil {
		return nil, invalid("query is required")
	}
	n, err := ParseLucene(*query, useOr)
	if err != nil {
		return nil, invalid("query %q: %v", *query, err)
	}
	out := []int{}
	for i, s := range strs {
		if n.Match(s) {
			out = append(out, i)
		}
	}
	return out, nil
}
