package delivery_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/delivery"
	"github.com/cmsplatform/cms/pkg/delivery/deliverytest"
)

var ctx = context.Background()

func i32(v int32) *int32 { return &v }

func ids(objs []delivery.Object) []int64 {
	out := []int64{}
	for _, o := range objs {
		out = append(out, o.Meta.ID)
	}
	return out
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestDomain runs every case on each engine: Bleve always, Elasticsearch
// when CMS_ELASTICSEARCH_URL is set. Each case gets a fresh site.
func TestDomain(t *testing.T) {
	deliverytest.Run(t,
		deliverytest.Case{Name: "GetRendersObject", Fn: testGetRendersObject},
		deliverytest.Case{Name: "Resolve", Fn: testResolve},
		deliverytest.Case{Name: "ListFilterSortPaging", Fn: testListFilterSortPaging},
		deliverytest.Case{Name: "NotFoundAndAmbiguity", Fn: testNotFoundAndAmbiguity},
		deliverytest.Case{Name: "ChangesAndConfig", Fn: testChangesAndConfig},
		deliverytest.Case{Name: "OccurrencesAndSuggestions", Fn: testOccurrencesAndSuggestions})
}

func testGetRendersObject(t *testing.T, s *deliverytest.Site) {
	got, err := s.Svc.Get(ctx, delivery.Request{Branch: "4", Type: "WEBPAGE"}, "home")
	if err != nil {
		t.Fatal(err)
	}
	o := got.Obj
	if o.DisplayName != "Home" || o.Meta.ID != s.Home || o.Meta.APIIdentifier != "home" || o.Meta.Type != "webPage" ||
		o.Meta.TypeRef != s.WebPage || o.Meta.LastTransaction < 1 || o.Meta.LastModified.IsZero() || len(o.Meta.ETag) != 22 {
		t.Fatalf("obj = %+v", o)
	}
	want := map[string]any{
		"attributeName": "Home", "navigationTitle": "Home nav", "moduleRefs": []any{s.M1, s.M2},
		"htmlContent": map[string]any{"XML": `<div xmlns="http://www.w3.org/1999/xhtml"><p>Welcome home</p></div>`},
		"seoKeywords": []any{"GRID Industries"}, "price": 19.5, "published": "2024-05-01T10:00:00Z",
	}
	if !reflect.DeepEqual(o.Props, want) {
		t.Fatalf("props = %s\nwant   %s", jsonOf(o.Props), jsonOf(want))
	}
	if got.Refs != nil {
		t.Fatalf("refs without resolve: %v", ids(got.Refs))
	}
	// Language fallback: de-DE has its own name, the nav title falls back
	// to en-US.
	de, err := s.Svc.Get(ctx, delivery.Request{Branch: "4", Lang: "de-de"}, "home")
	if err != nil {
		t.Fatal(err)
	}
	if de.Obj.DisplayName != "Startseite" || de.Obj.Props["navigationTitle"] != "Home nav" || de.Obj.Props["attributeName"] != "Startseite" {
		t.Fatalf("de-DE = %+v", de.Obj)
	}
	if de.Obj.Meta.ETag == o.Meta.ETag {
		t.Fatal("the etag does not depend on the rendered language")
	}
	// props=1: every attribute with an ApiIdentifier; 2: none.
	all, err := s.Svc.Get(ctx, delivery.Request{Branch: "4", Props: delivery.PropsAll}, jsonOf(s.NavTitle))
	if err != nil || all.Obj.Props["attributeDataType"] != "String" || all.Obj.Props["attributeLanguageDependent"] != true ||
		all.Obj.Meta.Type != "typeAttribute" {
		t.Fatalf("attribute with props=1 = %s, %v", jsonOf(all.Obj), err)
	}
	none, _ := s.Svc.Get(ctx, delivery.Request{Branch: "4", Props: delivery.PropsNone}, "home")
	if none.Obj.Props == nil || len(none.Obj.Props) != 0 {
		t.Fatalf("props none = %v", none.Obj.Props)
	}
	m1, err := s.Svc.Get(ctx, delivery.Request{Branch: "4", Props: delivery.PropsType}, jsonOf(s.M1))
	if err != nil {
		t.Fatal(err)
	}
	if m1.Obj.Props["imageRef"] != s.Img || m1.Obj.Meta.APIIdentifier != "" {
		t.Fatalf("module without forms: every API attribute, single ref as a number: %s", jsonOf(m1.Obj))
	}
}

func testResolve(t *testing.T, s *deliverytest.Site) {
	got, err := s.Svc.Get(ctx, delivery.Request{Branch: "4", Resolve: "moduleRefs, imageRef,unknownAttr"}, "home")
	if err != nil {
		t.Fatal(err)
	}
	if want := []int64{s.M1, s.M2, s.Img}; !reflect.DeepEqual(ids(got.Refs), want) {
		t.Fatalf("refs = %v, want %v (flat, de-duplicated, transitive)", ids(got.Refs), want)
	}
	got, _ = s.Svc.Get(ctx, delivery.Request{Branch: "4", Resolve: "moduleRefs,imageRef", ResolveDepth: i32(1)}, "home")
	if want := []int64{s.M1, s.M2}; !reflect.DeepEqual(ids(got.Refs), want) {
		t.Fatalf("depth 1 refs = %v, want %v", ids(got.Refs), want)
	}
	got, _ = s.Svc.Get(ctx, delivery.Request{Branch: "4", Resolve: "unknownAttr"}, "home")
	if got.Refs != nil {
		t.Fatalf("unknown resolve names resolve nothing, got %v", ids(got.Refs))
	}
	// Across a list: roots never repeat in refs.
	l, err := s.Svc.List(ctx, delivery.Request{Branch: "4", Type: "module", Resolve: "imageRef,moduleRefs"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []int64{s.Img}; !reflect.DeepEqual(ids(l.Refs), want) {
		t.Fatalf("list refs = %v, want %v", ids(l.Refs), want)
	}
}

func testListFilterSortPaging(t *testing.T, s *deliverytest.Site) {
	list := func(r delivery.Request) []int64 {
		t.Helper()
		r.Branch, r.Type = "4", "webPage"
		l, err := s.Svc.List(ctx, r)
		if err != nil {
			t.Fatalf("%+v: %v", r, err)
		}
		if l.Count != len(l.Objs) {
			t.Fatalf("count %d for %d objs", l.Count, len(l.Objs))
		}
		return ids(l.Objs)
	}
	cases := []struct {
		r    delivery.Request
		want []int64
	}{
		{delivery.Request{}, []int64{s.Home, s.About, s.DeOnly}},
		{delivery.Request{Sort: "displayName"}, []int64{s.About, s.Home, s.DeOnly}},
		{delivery.Request{Sort: "displayName desc"}, []int64{s.Home, s.About, s.DeOnly}},
		// de-DE falls back to en-US: "About us", "Nur Deutsch", "Startseite".
		{delivery.Request{Sort: "displayName", Lang: "de-DE"}, []int64{s.About, s.DeOnly, s.Home}},
		{delivery.Request{Filter: `displayName:"home"`}, []int64{s.Home}},
		{delivery.Request{Filter: `displayName:"nur"`, Lang: "202"}, []int64{s.DeOnly}},
		{delivery.Request{Filter: `price>0`}, []int64{s.Home}},
		{delivery.Request{Filter: `price<=-25`}, []int64{s.About}},
		{delivery.Request{Filter: `published>"2024-01-01"`}, []int64{s.Home}},
		{delivery.Request{Filter: `meta.apiIdentifier="home"`}, []int64{s.Home}},
		{delivery.Request{Filter: `moduleRefs=` + jsonOf(s.M2)}, []int64{s.Home, s.About}},
		{delivery.Request{Filter: `moduleRefs!=` + jsonOf(s.M2)}, []int64{s.DeOnly}},
		{delivery.Request{Filter: `moduleRefs=` + jsonOf(s.M2) + ` && price<0`}, []int64{s.About}},
		{delivery.Request{Filter: `seoKeywords="GRID Industries"`}, []int64{s.Home}},
		{delivery.Request{Filter: `htmlContent:"welcome"`}, []int64{s.Home}},
		{delivery.Request{Skip: 1, Take: 1}, []int64{s.About}},
	}
	for _, c := range cases {
		got := list(c.r)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%+v: got %v, want %v", c.r, got, c.want)
		}
	}
	l, _ := s.Svc.List(ctx, delivery.Request{Branch: "4", Type: "webPage", Take: 2})
	if !l.More || l.Count != 2 || l.Skip != 0 {
		t.Fatalf("page = skip %d count %d more %v", l.Skip, l.Count, l.More)
	}
	n, err := s.Svc.Count(ctx, delivery.Request{Branch: "4", Type: "webPage", Filter: "price<100"})
	if err != nil || n != 2 {
		t.Fatalf("count = %d, %v; want 2", n, err)
	}
	n, err = s.Svc.Count(ctx, delivery.Request{Branch: "4", Filter: "meta.type=module"})
	if err != nil || n != 2 {
		t.Fatalf("untyped count = %d, %v; want 2", n, err)
	}
	for _, bad := range []delivery.Request{
		{Take: 1001}, {Skip: -1}, {Filter: "price>>"}, {Filter: "nope=1"}, {Filter: "price>abc"},
		{Sort: "nope"}, {Sort: "displayName sideways"}, {Lang: "xx-XX"}, {Props: 3}, {Filter: "a=1 || b=2"},
	} {
		bad.Branch, bad.Type = "4", "webPage"
		if _, err := s.Svc.List(ctx, bad); !errors.Is(err, delivery.ErrInvalidArgument) {
			t.Errorf("%+v: err = %v, want ErrInvalidArgument", bad, err)
		}
	}
}

func testNotFoundAndAmbiguity(t *testing.T, s *deliverytest.Site) {
	for _, c := range []struct {
		r  delivery.Request
		id string
	}{
		{delivery.Request{Branch: "4"}, "nope"},
		{delivery.Request{Branch: "4"}, "999999999"},
		{delivery.Request{Branch: "999"}, "home"},
		{delivery.Request{Branch: "noBranch"}, "home"},
		{delivery.Request{Branch: "4", Type: "module"}, "home"},
		{delivery.Request{Branch: "4", Type: "noType"}, "home"},
	} {
		if _, err := s.Svc.Get(ctx, c.r, c.id); !errors.Is(err, delivery.ErrNotFound) {
			t.Errorf("%+v %s: err = %v, want ErrNotFound", c.r, c.id, err)
		}
	}
	// Branch by ApiIdentifier.
	if _, err := s.Svc.Get(ctx, delivery.Request{Branch: "branchDefault"}, "home"); err != nil {
		t.Fatal(err)
	}
}

func testChangesAndConfig(t *testing.T, s *deliverytest.Site) {
	before, _ := s.Svc.Get(ctx, delivery.Request{Branch: "4"}, "home")
	v1, _ := s.Svc.Version(ctx)
	b, _ := json.Marshal("New nav")
	if _, err := s.Content.UpdateObjects(ctx, "4", content.Change{Caller: &auth.Principal{Name: "editor"}}, []content.ObjectInput{{ID: s.Home,
		Values: []content.ValueInput{{Attribute: s.NavTitle, Language: 201, JSON: b}}}}); err != nil {
		t.Fatal(err)
	}
	s.Publish(t)
	after, _ := s.Svc.Get(ctx, delivery.Request{Branch: "4"}, "home")
	v2, _ := s.Svc.Version(ctx)
	if after.Obj.Props["navigationTitle"] != "New nav" || after.Obj.Meta.ETag == before.Obj.Meta.ETag || v2 <= v1 ||
		after.Obj.Meta.LastTransaction <= before.Obj.Meta.LastTransaction {
		t.Fatalf("after update: %+v (version %d → %d)", after.Obj, v1, v2)
	}
	langs, err := s.Svc.Languages(ctx, "4")
	if err != nil || len(langs) != 2 || langs[1].Props["attributeIsoLanguageCode"] != "de-DE" ||
		langs[1].Props["attributeFallbackLanguage"] != content.LanguageEnUS || langs[0].Meta.Type != "typeLanguage" {
		t.Fatalf("languages = %s, %v", jsonOf(langs), err)
	}
	types, err := s.Svc.Types(ctx, "4")
	found := false
	for _, ty := range types {
		found = found || ty.Meta.APIIdentifier == "webPage" && ty.DisplayName == "Web page"
	}
	if err != nil || !found {
		t.Fatalf("types = %v, %v", ids(types), err)
	}
	branches, err := s.Svc.Branches(ctx, auth.Principal{Admin: true})
	if err != nil || len(branches) != 1 || branches[0].Meta.ID != 4 || branches[0].Meta.Type != "typeBranch" {
		t.Fatalf("branches = %s, %v", jsonOf(branches), err)
	}
	ui, err := s.Svc.UpdateInfo(ctx, "4")
	if err != nil || ui.LastTransaction != after.Obj.Meta.LastTransaction || ui.LastModified.IsZero() {
		t.Fatalf("update info = %+v, %v", ui, err)
	}
}

func testOccurrencesAndSuggestions(t *testing.T, s *deliverytest.Site) {
	occ, err := s.Svc.Occurrences(ctx, delivery.Request{Branch: "4", Type: "webPage"}, "moduleRefs, price,displayName", 0)
	if err != nil {
		t.Fatal(err)
	}
	refs := occ["moduleRefs"]
	if refs.NotNull != 2 || refs.Null != 1 || refs.ValueType != "number" || refs.More ||
		jsonOf(refs.Values) != jsonOf([]delivery.ValueCount{{Value: s.M1, Count: 1}, {Value: s.M2, Count: 2}}) {
		t.Fatalf("moduleRefs occurrences = %+v", refs)
	}
	price := occ["price"]
	if jsonOf(price.Values) != jsonOf([]delivery.ValueCount{{Value: int64(-25), Count: 1}, {Value: 19.5, Count: 1}}) {
		t.Fatalf("price occurrences = %+v", price)
	}
	names := occ["displayName"]
	if names.NotNull != 2 || names.ValueType != "string" || len(names.Values) != 2 || names.Values[0].Value != "About us" {
		t.Fatalf("displayName occurrences = %+v", names)
	}
	one, err := s.Svc.Occurrences(ctx, delivery.Request{Branch: "4", Type: "webPage", Filter: "price>0"}, "moduleRefs", 1)
	if err != nil || one["moduleRefs"].NotNull != 1 || len(one["moduleRefs"].Values) != 1 || !one["moduleRefs"].More {
		t.Fatalf("filtered occurrences with take 1 = %+v, %v", one, err)
	}
	if _, err := s.Svc.Occurrences(ctx, delivery.Request{Branch: "4"}, "nope", 0); !errors.Is(err, delivery.ErrInvalidArgument) {
		t.Fatalf("unknown field: %v", err)
	}
	sug, err := s.Svc.Suggestions(ctx, delivery.Request{Branch: "4"}, delivery.SuggestOptions{Pattern: "Ho", Fields: "displayName,navigationTitle"})
	if err != nil {
		t.Fatal(err)
	}
	if jsonOf(sug) != jsonOf([]delivery.Suggestion{{Value: "home", Count: 2, Length: 2}}) {
		t.Fatalf("suggestions = %s", jsonOf(sug))
	}
	sug, _ = s.Svc.Suggestions(ctx, delivery.Request{Branch: "4"}, delivery.SuggestOptions{Pattern: "home n", Fields: "navigationTitle"})
	if jsonOf(sug) != jsonOf([]delivery.Suggestion{{Value: "nav", Count: 1, Length: 2}}) {
		t.Fatalf("two-word suggestions = %s", jsonOf(sug))
	}
	no := false
	sug, _ = s.Svc.Suggestions(ctx, delivery.Request{Branch: "4"}, delivery.SuggestOptions{Pattern: "ab", Fields: "displayName", Analyze: &no})
	if jsonOf(sug) != jsonOf([]delivery.Suggestion{{Value: "about us", Count: 1, Length: 6}}) {
		t.Fatalf("whole-value suggestions = %s", jsonOf(sug))
	}
	// Fuzzy: "hme" is 1 edit from "home" (similarity 1 - 1/3 > 0.5); more
	// cases in facets_test.go.
	sug, err = s.Svc.Suggestions(ctx, delivery.Request{Branch: "4", Type: "webPage"}, delivery.SuggestOptions{Pattern: "hme", Fields: "displayName", Fuzzy: true})
	if err != nil || jsonOf(sug) != jsonOf([]delivery.Suggestion{{Value: "home", Count: 1, Length: 1}}) {
		t.Fatalf("fuzzy suggestions = %s, %v", jsonOf(sug), err)
	}
}
