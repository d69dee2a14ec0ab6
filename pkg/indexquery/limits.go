package indexquery

// Caps on the texts of a request that become engine clauses: the search
// phrase and full-text query of an object filter, a suggestions pattern, a
// comment search phrase and the matchStrings query. Every text is checked
// against MaxPhraseBytes before it is split or parsed, and the clauses it
// expands into against MaxPhraseTerms before the engine query is built, so
// one request costs at most a few KiB of query however large its body is
// (a 3 MB fullText once cost 4 GB and a minute). Like Delivery's filter
// (pkg/delivery/query.MaxFilterLen) the caps are fixed; beyond them the
// request is refused as invalid (400) by a message naming the cap.
const (
	// MaxPhraseBytes caps each such text (4 KiB).
	MaxPhraseBytes = 4096
	// MaxPhraseTerms caps the clauses one text expands into (1,024, the
	// classic Lucene BooleanQuery limit): the words of a full-text or
	// matchStrings query; for a search phrase its words times the fields
	// each is looked up in (display name, full text, every quick-search
	// attribute); for a suggestions pattern its earlier words times its
	// sources.
	MaxPhraseTerms = 1024
)

// checkPhrase refuses a text longer than MaxPhraseBytes; name is the
// request field.
func checkPhrase(name, text string) error {
	if len(text) > MaxPhraseBytes {
		return invalid("%s is %d bytes long; at most %d bytes are allowed", name, len(text), MaxPhraseBytes)
	}
	return nil
}

// checkTerms refuses a text that expands into more than MaxPhraseTerms
// clauses.
func checkTerms(name string, n int) error {
	if n > MaxPhraseTerms {
		return invalid("%s expands into %d search terms; at most %d are allowed", name, n, MaxPhraseTerms)
	}
	return nil
}

// checkFilterTexts checks the texts of f against MaxPhraseBytes at once,
// before any wait, so that an oversized one is refused even where the
// filter is not needed (occurrences with nothing to count); their terms
// are counted where the query is built.
func checkFilterTexts(f Filter) error {
	if f.SearchPhrase != nil {
		if err := checkPhrase("filter.searchPhrase", *f.SearchPhrase); err != nil {
			return err
		}
	}
	if f.FullText != nil {
		return checkPhrase("filter.fullText", *f.FullText)
	}
	return nil
}
