package search_test

import (
	"errors"
	"testing"

	"github.com/cmsplatform/cms/pkg/search"
)

func TestMappingKeywordPrefixes(t *testing.T) {
	m := search.Mapping{Fields: map[string]search.Kind{"sk_declared": search.Long, "a": search.Keyword}, KeywordPrefixes: []string{"sk_"}}
	for _, c := range []struct {
		name string
		kind search.Kind
		ok   bool
	}{{"sk_x", search.Keyword, true}, {"sk_declared", search.Long, true}, {"a", search.Keyword, true},
		{"b", "", false}, {"sk_bad.dot", "", false}, {"xsk_", "", false}} {
		if k, ok := m.Field(c.name); k != c.kind || ok != c.ok {
			t.Errorf("Field(%q) = %q, %v, want %q, %v", c.name, k, ok, c.kind, c.ok)
		}
	}
	if m.Prefixed("sk_declared") || !m.Prefixed("sk_1_201") {
		t.Error("Prefixed: declared fields are not prefixed fields, others are")
	}
	if err := m.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	if err := (search.Mapping{Fields: m.Fields, KeywordPrefixes: []string{"_x"}}).Validate(); !errors.Is(err, search.ErrInvalidMapping) {
		t.Errorf("Validate with prefix _x = %v, want ErrInvalidMapping", err)
	}
	if m.Equal(search.Mapping{Fields: m.Fields}) || !m.Equal(search.Mapping{Fields: m.Fields, KeywordPrefixes: []string{"sk_"}}) {
		t.Error("Equal ignores KeywordPrefixes")
	}
	raw, err := search.MarshalMapping(m)
	if err != nil {
		t.Fatal(err)
	}
	if back, err := search.UnmarshalMapping(raw); err != nil || !back.Equal(m) {
		t.Errorf("round trip = %v, %v", back, err)
	}
	if _, err := m.Normalize(search.Document{ID: "x", Version: 1, Fields: map[string]any{"sk_q": []string{"a", "b"}}}); err != nil {
		t.Errorf("Normalize prefixed field: %v", err)
	}
	if _, err := m.Normalize(search.Document{ID: "x", Version: 1, Fields: map[string]any{"b": "a"}}); !errors.Is(err, search.ErrInvalidDocument) {
		t.Errorf("Normalize unmapped field = %v, want ErrInvalidDocument", err)
	}
}
