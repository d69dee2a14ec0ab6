package indexquery

import (
	"context"
	"errors"
	"testing"

	"github.com/cmsplatform/cms/pkg/indexdoc"
)

// TestQueryBuildObservesContext: building the engine query of a search
// phrase or a full-text query stops when the request's context ends.
func TestQueryBuildObservesContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	n, err := ParseLucene("a AND (b OR c)", false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.toQuery(ctx, indexdoc.FieldFullText); !errors.Is(err, context.Canceled) {
		t.Errorf("fullText: %v, want context.Canceled", err)
	}
	s := &Service{}
	if _, err := s.phraseQuery(ctx, Filter{}, "a b c"); !errors.Is(err, context.Canceled) {
		t.Errorf("searchPhrase: %v, want context.Canceled", err)
	}
	if _, err := s.query(ctx, 4, Filter{Values: []ValueFilter{{AttrKey: AttrKey{Attr: 1}, Op: OpNotEqual}}}); !errors.Is(err, context.Canceled) {
		t.Errorf("value filters: %v, want context.Canceled", err)
	}
	q := "a"
	if _, err := MatchStrings(ctx, &q, false, []string{"a"}); !errors.Is(err, context.Canceled) {
		t.Errorf("matchStrings: %v, want context.Canceled", err)
	}
}
