package delivery_test

import (
	"encoding/json"
	"errors"
	"github.com/cmsplatform/cms/pkg/auth"
	"reflect"
	"testing"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/delivery"
	"github.com/cmsplatform/cms/pkg/delivery/deliverytest"
)

// TestFacets runs the fallback and fuzzy cases on each engine (Bleve;
// Elasticsearch when CMS_ELASTICSEARCH_URL is set).
func TestFacets(t *testing.T) {
	deliverytest.Run(t,
		deliverytest.Case{Name: "OccurrencesFollowLanguageFallback", Fn: testOccurrencesFallback},
		deliverytest.Case{Name: "SuggestionsFollowLanguageFallback", Fn: testSuggestionsFallback},
		deliverytest.Case{Name: "FuzzySuggestions", Fn: testFuzzySuggestions})
}

const (
	langEnUS = 201
	langDeDE = 202 // falls back to en-US (attribute 2002)
)

func facetValue(attr, lang int64, v any) content.ValueInput {
	b, _ := json.Marshal(v)
	return content.ValueInput{Attribute: attr, Language: lang, JSON: b}
}

// addLabelPages adds an attribute "label" and web pages whose labels
// exercise the fallback chain: en-US and de-DE, language-independent only,
// de-DE only, en-US only. Content refuses language-independent values of
// language-dependent attributes, so the label starts language-independent
// and becomes language-dependent after its first value (as when an editor
// changes the attribute; the old value stays). The site already has Home,
// About and DeOnly (no label).
func addLabelPages(t *testing.T, s *deliverytest.Site) {
	t.Helper()
	editor := content.Change{Caller: &auth.Principal{Name: "editor"}}
	_, ids, err := s.Content.CreateObjects(ctx, "4", editor, []content.ObjectInput{{TypeID: content.TypeAttribute,
		APIIdentifier: facetPtr("label"), Values: []content.ValueInput{facetValue(1000, langEnUS, "label"), facetValue(1001, 0, "String"),
			facetValue(1004, 0, false), facetValue(content.AttrLanguageDependent, 0, false)}}})
	if err != nil {
		t.Fatal(err)
	}
	label := ids[0]
	if _, _, err := s.Content.CreateObjects(ctx, "4", editor, []content.ObjectInput{{TypeID: s.WebPage,
		Values: []content.ValueInput{facetValue(content.AttrName, langEnUS, "Neutral"), facetValue(label, 0, "Shared")}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Content.UpdateObjects(ctx, "4", editor, []content.ObjectInput{{ID: label,
		Values: []content.ValueInput{facetValue(content.AttrLanguageDependent, 0, true)}}}); err != nil {
		t.Fatal(err)
	}
	_, _, err = s.Content.CreateObjects(ctx, "4", editor, []content.ObjectInput{
		{TypeID: s.WebPage, Values: []content.ValueInput{facetValue(content.AttrName, langEnUS, "Both"),
			facetValue(label, langEnUS, "Shared"), facetValue(label, langDeDE, "Geteilt")}},
		{TypeID: s.WebPage, Values: []content.ValueInput{facetValue(content.AttrName, langDeDE, "Deutsch"), facetValue(label, langDeDE, "Nur hier")}},
		{TypeID: s.WebPage, Values: []content.ValueInput{facetValue(label, langEnUS, "Shared")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Publish(t)
}

func facetPtr(s string) *string { return &s }

// facetRendered tallies what List renders for a field per language: the
// expected occurrences.
func facetRendered(t *testing.T, s *deliverytest.Site, lang string) (labels, names delivery.Occurrences) {
	t.Helper()
	l, err := s.Svc.List(ctx, delivery.Request{Branch: "4", Type: "webPage", Lang: lang, Take: 100, Props: delivery.PropsAll})
	if err != nil {
		t.Fatal(err)
	}
	tally := func(o *delivery.Occurrences, v any) {
		s, _ := v.(string)
		if s == "" {
			o.Null++
			return
		}
		o.NotNull++
		for i := range o.Values {
			if o.Values[i].Value == s {
				o.Values[i].Count++
				return
			}
		}
		o.Values = append(o.Values, delivery.ValueCount{Value: s, Count: 1})
	}
	for _, o := range l.Objs {
		tally(&labels, o.Props["label"])
		tally(&names, o.DisplayName)
	}
	return labels, names
}

func facetSorted(o delivery.Occurrences) delivery.Occurrences {
	o.ValueType = "string"
	for i := range o.Values {
		for j := i + 1; j < len(o.Values); j++ {
			if o.Values[j].Value.(string) < o.Values[i].Value.(string) {
				o.Values[i], o.Values[j] = o.Values[j], o.Values[i]
			}
		}
	}
	return o
}

func testOccurrencesFallback(t *testing.T, s *deliverytest.Site) {
	addLabelPages(t, s)
	want := map[string][]delivery.ValueCount{
		// en-US: the de-DE only page has no label; Shared 3 times.
		"en-US": {{Value: "Shared", Count: 3}},
		// de-DE: Geteilt replaces Shared of the first page, the others fall
		// back to en-US or the language-independent value.
		"de-DE": {{Value: "Geteilt", Count: 1}, {Value: "Nur hier", Count: 1}, {Value: "Shared", Count: 2}},
	}
	for lang, values := range want {
		occ, err := s.Svc.Occurrences(ctx, delivery.Request{Branch: "4", Type: "webPage", Lang: lang}, "label,displayName", 0)
		if err != nil {
			t.Fatal(err)
		}
		labels, names := facetRendered(t, s, lang)
		if got := occ["label"]; !reflect.DeepEqual(got.Values, values) {
			t.Errorf("%s label occurrences = %s, want %s", lang, jsonOf(got.Values), jsonOf(values))
		}
		for field, want := range map[string]delivery.Occurrences{"label": facetSorted(labels), "displayName": facetSorted(names)} {
			if got := occ[field]; !reflect.DeepEqual(got, want) {
				t.Errorf("%s %s occurrences = %s\nList renders     %s", lang, field, jsonOf(got), jsonOf(want))
			}
		}
	}
	// take 1 keeps the most frequent value and says there are more.
	one, err := s.Svc.Occurrences(ctx, delivery.Request{Branch: "4", Type: "webPage", Lang: "de-DE"}, "label", 1)
	if got := one["label"]; err != nil || !got.More || got.NotNull != 4 || jsonOf(got.Values) != jsonOf([]delivery.ValueCount{{Value: "Shared", Count: 2}}) {
		t.Fatalf("take 1 = %+v, %v", got, err)
	}
	// The filter keeps the pages with Shared in any language of the chain
	// (Both, Neutral, the en-US only page); each counts under its rendered
	// label: Both under Geteilt.
	f, err := s.Svc.Occurrences(ctx, delivery.Request{Branch: "4", Type: "webPage", Lang: "de-DE", Filter: "label=Shared"}, "label", 0)
	if got := f["label"]; err != nil || got.NotNull != 3 || got.Null != 0 ||
		jsonOf(got.Values) != jsonOf([]delivery.ValueCount{{Value: "Geteilt", Count: 1}, {Value: "Shared", Count: 2}}) {
		t.Fatalf("filtered = %+v, %v", got, err)
	}
}

func testSuggestionsFallback(t *testing.T, s *deliverytest.Site) {
	addLabelPages(t, s)
	for _, c := range []struct {
		lang, pattern string
		want          []delivery.Suggestion
	}{
		{"en-US", "sh", []delivery.Suggestion{{Value: "shared", Count: 3, Length: 4}}},
		{"de-DE", "sh", []delivery.Suggestion{{Value: "shared", Count: 2, Length: 4}}},
		{"en-US", "ge", []delivery.Suggestion{}},
		{"de-DE", "ge", []delivery.Suggestion{{Value: "geteilt", Count: 1, Length: 5}}},
		{"de-DE", "nur h", []delivery.Suggestion{{Value: "hier", Count: 1, Length: 3}}},
	} {
		got, err := s.Svc.Suggestions(ctx, delivery.Request{Branch: "4", Type: "webPage", Lang: c.lang},
			delivery.SuggestOptions{Pattern: c.pattern, Fields: "label"})
		if err != nil || jsonOf(got) != jsonOf(c.want) {
			t.Errorf("%s %q = %s, %v; want %s", c.lang, c.pattern, jsonOf(got), err, jsonOf(c.want))
		}
	}
}

func testFuzzySuggestions(t *testing.T, s *deliverytest.Site) {
	addLabelPages(t, s)
	sim := func(f float64) *float64 { return &f }
	page := delivery.Request{Branch: "4", Type: "webPage"}
	for _, c := range []struct {
		name string
		r    delivery.Request
		o    delivery.SuggestOptions
		want []delivery.Suggestion
	}{
		// "shred" is 1 edit from "shared" (1 - 1/5 = 0.8), "hme" 1 from
		// "home" (0.67: Home's navigation title and name).
		{"default similarity", page, delivery.SuggestOptions{Pattern: "shred", Fields: "label", Fuzzy: true},
			[]delivery.Suggestion{{Value: "shared", Count: 3, Length: 1}}},
		{"two fields", page, delivery.SuggestOptions{Pattern: "hme", Fields: "navigationTitle,displayName", Fuzzy: true},
			[]delivery.Suggestion{{Value: "home", Count: 2, Length: 1}}},
		{"earlier words must occur", page, delivery.SuggestOptions{Pattern: "home nab", Fields: "navigationTitle", Fuzzy: true},
			[]delivery.Suggestion{{Value: "nav", Count: 1, Length: 0}}},
		{"similarity must be exceeded", page, delivery.SuggestOptions{Pattern: "shred", Fields: "label", Fuzzy: true, FuzzyMinSimilarity: sim(0.8)},
			[]delivery.Suggestion{}},
		{"lower similarity", page, delivery.SuggestOptions{Pattern: "sxxred", Fields: "label", Fuzzy: true, FuzzyMinSimilarity: sim(0.3)},
			[]delivery.Suggestion{{Value: "shared", Count: 3, Length: 0}}},
		{"common prefix", page, delivery.SuggestOptions{Pattern: "ahared", Fields: "label", Fuzzy: true, FuzzyPrefixLength: 1},
			[]delivery.Suggestion{}},
		{"no prefix", page, delivery.SuggestOptions{Pattern: "ahared", Fields: "label", Fuzzy: true},
			[]delivery.Suggestion{{Value: "shared", Count: 3, Length: 0}}},
		{"language fallback", delivery.Request{Branch: "4", Type: "webPage", Lang: "de-DE"},
			delivery.SuggestOptions{Pattern: "getelt", Fields: "label", Fuzzy: true},
			[]delivery.Suggestion{{Value: "geteilt", Count: 1, Length: 1}}},
		{"ignored without analysis", page, delivery.SuggestOptions{Pattern: "shred", Fields: "label", Fuzzy: true, Analyze: new(bool)},
			[]delivery.Suggestion{}},
		{"similarity ignored without fuzzy", page, delivery.SuggestOptions{Pattern: "sha", Fields: "label", FuzzyMinSimilarity: sim(7)},
			[]delivery.Suggestion{{Value: "shared", Count: 3, Length: 3}}},
	} {
		got, err := s.Svc.Suggestions(ctx, c.r, c.o)
		if err != nil || jsonOf(got) != jsonOf(c.want) {
			t.Errorf("%s: %s, %v; want %s", c.name, jsonOf(got), err, jsonOf(c.want))
		}
	}
	for _, o := range []delivery.SuggestOptions{{FuzzyMinSimilarity: sim(1)}, {FuzzyMinSimilarity: sim(-0.1)}, {FuzzyPrefixLength: -1}} {
		o.Pattern, o.Fields, o.Fuzzy = "shred", "label", true
		if _, err := s.Svc.Suggestions(ctx, page, o); !errors.Is(err, delivery.ErrInvalidArgument) {
			t.Errorf("similarity %v prefix %d: %v, want ErrInvalidArgument", *facetOrZero(o.FuzzyMinSimilarity), o.FuzzyPrefixLength, err)
		}
	}
}

func facetOrZero(p *float64) *float64 {
	if p == nil {
		return new(float64)
	}
	return p
}
