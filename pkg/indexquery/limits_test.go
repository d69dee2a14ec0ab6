package indexquery_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/cmsplatform/cms/pkg/indexquery"
)

// words is n (at most 1,296) distinct two-character words ("00 01 …").
func words(n int) string {
	const digits = "0123456789abcdefghijklmnopqrstuvwxyz"
	w := make([]string, n)
	for i := range w {
		w[i] = string(digits[i/36]) + string(digits[i%36])
	}
	return strings.Join(w, " ")
}

// TestPhraseCaps: every search text is refused (ErrInvalid, naming the cap)
// beyond MaxPhraseBytes and beyond MaxPhraseTerms, before any engine query
// is built; texts at the caps are answered, by both engines.
func TestPhraseCapsBleve(t *testing.T) { phraseCaps(t, bleveEnv(t)) }

// TestPhraseCapsElasticsearch: at the caps, no query exceeds
// Elasticsearch's clause limit.
func TestPhraseCapsElasticsearch(t *testing.T) { phraseCaps(t, elasticEnv(t)) }

func phraseCaps(t *testing.T, e *env) {
	build(t, e)
	e.sync(t)
	ctx := context.Background()
	long := strings.Repeat("x ", 1<<20)              // 2 MiB
	many := words(indexquery.MaxPhraseTerms+1) + " " // a suggestions pattern completes no word then
	if len(many) > indexquery.MaxPhraseBytes {
		t.Fatalf("%d terms do not fit in %d bytes", indexquery.MaxPhraseTerms+1, indexquery.MaxPhraseBytes)
	}
	keys := []indexquery.AttrKey{{Attr: 1000, Lang: 201}, {Attr: 1001}}
	ops := map[string]func(text string) error{
		"fullText": func(s string) error {
			_, err := e.q.Search(ctx, indexquery.SearchRequest{Branch: 4, Filter: indexquery.Filter{FullText: &s}})
			return err
		},
		"searchPhrase": func(s string) error {
			_, err := e.q.Count(ctx, indexquery.CountRequest{Branch: 4, Filter: indexquery.Filter{SearchPhrase: &s}})
			return err
		},
		"suggestions pattern": func(s string) error {
			_, err := e.q.Suggestions(ctx, indexquery.SuggestionsRequest{Branch: 4, Pattern: &s})
			return err
		},
		"matchStrings query": func(s string) error {
			_, err := indexquery.MatchStrings(ctx, &s, true, []string{"a"})
			return err
		},
		"comment searchPhrase": func(s string) error {
			_, err := e.q.CommentSearch(ctx, indexquery.CommentSearchRequest{Branch: 4, Filter: indexquery.CommentFilter{SearchPhrase: &s}})
			return err
		},
	}
	// Refused even where the filter is not needed: nothing to count.
	for _, f := range []indexquery.Filter{{FullText: &long}, {SearchPhrase: &long}} {
		if _, err := e.q.Occurrences(ctx, indexquery.OccurrencesRequest{Branch: 4, Filter: f}); !errors.Is(err, indexquery.ErrInvalid) {
			t.Errorf("occurrences with nothing to count: %v, want ErrInvalid", err)
		}
	}
	for name, op := range ops {
		for _, c := range []struct {
			text, cap string
		}{{long, strconv.Itoa(indexquery.MaxPhraseBytes)}, {many, strconv.Itoa(indexquery.MaxPhraseTerms)}} {
			err := op(c.text)
			if !errors.Is(err, indexquery.ErrInvalid) || !strings.Contains(err.Error(), c.cap) {
				t.Errorf("%s of %d bytes: %v, want ErrInvalid naming %s", name, len(c.text), err, c.cap)
			}
		}
		// At the caps: answered. The suggestions pattern's last word is
		// what is completed, not a term.
		at := words(indexquery.MaxPhraseTerms)
		if name == "suggestions pattern" {
			at = words(indexquery.MaxPhraseTerms) + " z"
		}
		if err := op(at); err != nil {
			t.Errorf("%s of %d terms: %v", name, indexquery.MaxPhraseTerms, err)
		}
	}
	// A search phrase's words count once per field they are looked up in.
	third := words(indexquery.MaxPhraseTerms/3 + 1)
	if _, err := e.q.Count(ctx, indexquery.CountRequest{Branch: 4, Filter: indexquery.Filter{SearchPhrase: &third, QuickSearchKeys: keys}}); !errors.Is(err, indexquery.ErrInvalid) {
		t.Errorf("%d words in 3 fields: %v, want ErrInvalid", indexquery.MaxPhraseTerms/3+1, err)
	}
	if _, err := e.q.Count(ctx, indexquery.CountRequest{Branch: 4, Filter: indexquery.Filter{SearchPhrase: &third}}); err != nil {
		t.Errorf("%d words in 1 field: %v", indexquery.MaxPhraseTerms/3+1, err)
	}
}
