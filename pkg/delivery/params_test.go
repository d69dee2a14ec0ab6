package delivery_test

import (
	"encoding/json"
	"errors"
	"github.com/cmsplatform/cms/pkg/auth"
	"reflect"
	"strings"
	"testing"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/delivery"
	"github.com/cmsplatform/cms/pkg/delivery/deliverytest"
)

// TestQueryParams covers the filter (|| and &&), sort and variants
// parameters on each engine (Bleve always, Elasticsearch when
// CMS_ELASTICSEARCH_URL is set).
func TestQueryParams(t *testing.T) {
	withExtra := func(fn func(*testing.T, *deliverytest.Site, extra)) func(*testing.T, *deliverytest.Site) {
		return func(t *testing.T, s *deliverytest.Site) { fn(t, s, addExtra(t, s)) }
	}
	deliverytest.Run(t,
		deliverytest.Case{Name: "FilterOr", Fn: withExtra(testFilterOr)},
		deliverytest.Case{Name: "SortByAttribute", Fn: withExtra(testSortByAttribute)},
		deliverytest.Case{Name: "SortCap", Fn: withExtra(testSortCap)},
		deliverytest.Case{Name: "Variants", Fn: withExtra(testVariants)})
}

// extra is what addExtra adds to the site: two pages for sorting and a
// variant axis with two variants and a variant-dependent attribute.
type extra struct {
	P9, P100               int64 // pages with price 9 and 100
	Color                  int64 // String attribute "color" with variant axis
	Axis, Summer, Winter   int64
	summerAPI, winterAPI   string
	colorAPI, variantTypeA string
}

func js(v any) json.RawMessage { b, _ := json.Marshal(v); return b }

func vin(attr, lang, variant int64, v any) content.ValueInput {
	return content.ValueInput{Attribute: attr, Language: lang, Variant: variant, JSON: js(v)}
}

func mvin(attr int64, vs ...any) []content.ValueInput {
	out := make([]content.ValueInput, len(vs))
	for i, v := range vs {
		sr := int64(i)
		out[i] = content.ValueInput{Attribute: attr, SortReverse: &sr, JSON: js(v)}
	}
	return out
}

func addExtra(t *testing.T, s *deliverytest.Site) extra {
	t.Helper()
	ed := content.Change{Caller: &auth.Principal{Name: "editor"}}
	create := func(in ...content.ObjectInput) []int64 {
		t.Helper()
		_, ids, err := s.Content.CreateObjects(ctx, "4", ed, in)
		if err != nil {
			t.Fatal(err)
		}
		return ids
	}
	str := func(v string) *string { return &v }
	x := extra{summerAPI: "summer", winterAPI: "winter", colorAPI: "color", variantTypeA: "season"}
	x.Axis = create(content.ObjectInput{TypeID: content.RootID, APIIdentifier: str(x.variantTypeA),
		Values: []content.ValueInput{vin(1000, 201, 0, "Season")}})[0]
	ids := create(
		content.ObjectInput{TypeID: x.Axis, APIIdentifier: str(x.summerAPI), Values: []content.ValueInput{vin(1000, 201, 0, "Summer")}},
		content.ObjectInput{TypeID: x.Axis, APIIdentifier: str(x.winterAPI), Values: []content.ValueInput{vin(1000, 201, 0, "Winter")}})
	x.Summer, x.Winter = ids[0], ids[1]
	x.Color = create(content.ObjectInput{TypeID: content.TypeAttribute, APIIdentifier: str(x.colorAPI), Values: []content.ValueInput{
		vin(1000, 201, 0, "Color"), vin(1001, 0, 0, "String"), vin(1002, 0, 0, x.Axis)}})[0]
	ids = create(
		content.ObjectInput{TypeID: s.WebPage, Values: append([]content.ValueInput{vin(1000, 201, 0, "Nine"),
			vin(s.Price, 0, 0, 9), vin(s.NavTitle, 201, 0, "beta"), vin(s.NavTitle, 202, 0, "Zeta"),
			vin(s.Published, 0, 0, "2024-05-01T11:00:00+02:00")}, mvin(s.Keywords, "zulu", "alpha")...)},
		content.ObjectInput{TypeID: s.WebPage, Values: append([]content.ValueInput{vin(1000, 201, 0, "Hundred"),
			vin(s.Price, 0, 0, 100), vin(s.NavTitle, 201, 0, "Alpha")}, mvin(s.Keywords, "m")...)})
	x.P9, x.P100 = ids[0], ids[1]
	if _, err := s.Content.UpdateObjects(ctx, "4", ed, []content.ObjectInput{
		{ID: s.Home, Values: []content.ValueInput{vin(x.Color, 0, 0, "plain"), vin(x.Color, 0, x.Summer, "yellow")}},
		{ID: s.About, Values: []content.ValueInput{vin(x.Color, 0, x.Winter, "white")}},
	}); err != nil {
		t.Fatal(err)
	}
	s.Publish(t)
	return x
}

func listIDs(t *testing.T, s *deliverytest.Site, r delivery.Request) []int64 {
	t.Helper()
	if r.Branch == "" {
		r.Branch = "4"
	}
	l, err := s.Svc.List(ctx, r)
	if err != nil {
		t.Fatalf("%+v: %v", r, err)
	}
	return ids(l.Objs)
}

func wantInvalid(t *testing.T, what string, err error, parts ...string) {
	t.Helper()
	if !errors.Is(err, delivery.ErrInvalidArgument) {
		t.Errorf("%s: err = %v, want ErrInvalidArgument", what, err)
		return
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("%s: error %q does not contain %q", what, err, p)
		}
	}
}

func testFilterOr(t *testing.T, s *deliverytest.Site, x extra) {
	cases := []struct {
		filter, lang string
		want         []int64
	}{
		{`price>50 || price<=-25`, "", []int64{s.About, x.P100}},
		{`meta.apiIdentifier="home" || displayName:"nur"`, "de-DE", []int64{s.Home, s.DeOnly}},
		// && binds tighter than ||: price<0 || (price>0 && nope), not
		// (price<0 || price>0) && nope.
		{`price<0 || price>0 && meta.apiIdentifier="nope"`, "", []int64{s.About}},
		{`price>0 && price<10 || price>50 && price<1000`, "", []int64{x.P9, x.P100}},
		// A quoted value may contain || and &&.
		{`seoKeywords="GRID || x" || price<0`, "", []int64{s.About}},
		{`seoKeywords="GRID Industries" || seoKeywords="a && b"`, "", []int64{s.Home}},
		// Negations inside alternatives.
		{`moduleRefs!=` + jsonOf(s.M2) + ` && price<10 || meta.id=` + jsonOf(s.DeOnly), "", []int64{s.DeOnly, x.P9}},
		{`meta.type=nosuchtype || price=100`, "", []int64{x.P100}},
	}
	for _, c := range cases {
		got := listIDs(t, s, delivery.Request{Type: "webPage", Filter: c.filter, Lang: c.lang})
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("filter %s: got %v, want %v", c.filter, got, c.want)
		}
	}
	// Count, typed and untyped, takes || too.
	n, err := s.Svc.Count(ctx, delivery.Request{Branch: "4", Type: "webPage", Filter: "price>50 || price<0"})
	if err != nil || n != 2 {
		t.Errorf("typed count = %d, %v; want 2", n, err)
	}
	n, err = s.Svc.Count(ctx, delivery.Request{Branch: "4", Filter: "meta.type=module || meta.type=image"})
	if err != nil || n != 3 {
		t.Errorf("untyped count = %d, %v; want 3", n, err)
	}
	// Untyped list.
	if got := listIDs(t, s, delivery.Request{Filter: "meta.type=image || meta.apiIdentifier=home", Sort: "meta.id"}); !reflect.DeepEqual(got, []int64{s.Img, s.Home}) {
		t.Errorf("untyped list = %v", got)
	}
	// Occurrences and suggestions accept only &&.
	_, err = s.Svc.Occurrences(ctx, delivery.Request{Branch: "4", Filter: "price>0 || price<0"}, "price", 0)
	wantInvalid(t, "occurrences with ||", err, "||", "position 9")
	_, err = s.Svc.Suggestions(ctx, delivery.Request{Branch: "4", Filter: `price>0 && navigationTitle:"a" || price<0`},
		delivery.SuggestOptions{Pattern: "a", Fields: "navigationTitle"})
	wantInvalid(t, "suggestions with ||", err, "||", "position 32")
	if _, err := s.Svc.Occurrences(ctx, delivery.Request{Branch: "4", Filter: `seoKeywords="a || b" && price>0`}, "price", 0); err != nil {
		t.Errorf("occurrences with || inside a quoted value: %v", err)
	}
	// Syntax errors name the (1-based) position.
	for _, c := range []struct{ filter, part string }{
		{"price>0 ||", "position 11"}, {"|| price>0", "position 1"}, {"price>0 || || price<0", "position 12"},
	} {
		_, err := s.Svc.List(ctx, delivery.Request{Branch: "4", Filter: c.filter})
		wantInvalid(t, c.filter, err, c.part)
		_, err = s.Svc.Count(ctx, delivery.Request{Branch: "4", Filter: c.filter})
		wantInvalid(t, c.filter, err, c.part)
	}
}

func testSortByAttribute(t *testing.T, s *deliverytest.Site, x extra) {
	cases := []struct {
		sort, lang, variants string
		skip, take           int64
		want                 []int64
	}{
		// Numbers numerically (9 < 19.5 < 100), missing last both ways,
		// ties (all missing) by id.
		{sort: "price", want: []int64{s.About, x.P9, s.Home, x.P100, s.DeOnly}},
		{sort: "price desc", want: []int64{x.P100, s.Home, x.P9, s.About, s.DeOnly}},
		{sort: jsonOf(s.Price) + " DESC", want: []int64{x.P100, s.Home, x.P9, s.About, s.DeOnly}},
		// Strings case-insensitively ("Alpha" < "beta" < "Home nav").
		{sort: "navigationTitle", want: []int64{x.P100, x.P9, s.Home, s.About, s.DeOnly}},
		{sort: "navigationTitle desc", want: []int64{s.Home, x.P9, x.P100, s.About, s.DeOnly}},
		// The value the language chain selects: de-DE "Zeta" for P9, the
		// others fall back to en-US.
		{sort: "navigationTitle", lang: "de-DE", want: []int64{x.P100, s.Home, x.P9, s.About, s.DeOnly}},
		// Dates chronologically: 11:00+02:00 is before 10:00Z.
		{sort: "published", want: []int64{s.About, x.P9, s.Home, s.DeOnly, x.P100}},
		{sort: "published desc", want: []int64{s.Home, x.P9, s.About, s.DeOnly, x.P100}},
		// Multi-valued: the smallest ascending, the largest descending.
		{sort: "seoKeywords", want: []int64{x.P9, s.Home, x.P100, s.About, s.DeOnly}},
		{sort: "seoKeywords desc", want: []int64{x.P9, x.P100, s.Home, s.About, s.DeOnly}},
		// Several keys, mixed with metadata and the display name.
		{sort: "navigationTitle desc, meta.id desc", want: []int64{s.Home, x.P9, x.P100, s.DeOnly, s.About}},
		{sort: "displayName, price", want: []int64{s.About, s.Home, x.P100, x.P9, s.DeOnly}},
		{sort: "meta.id desc", want: []int64{x.P100, x.P9, s.DeOnly, s.About, s.Home}},
		// No full-text condition: every score is equal, ties by id.
		{sort: "$score", want: []int64{s.Home, s.About, s.DeOnly, x.P9, x.P100}},
		// Paging over the in-memory order.
		{sort: "price", skip: 1, take: 2, want: []int64{x.P9, s.Home}},
		{sort: "price desc", skip: 4, take: 10, want: []int64{s.DeOnly}},
		{sort: "price", skip: 9, take: 10, want: []int64{}},
		// Variants select the value sorted on.
		{sort: "color", want: []int64{s.Home, s.About, s.DeOnly, x.P9, x.P100}},
		{sort: "color", variants: "winter,summer", want: []int64{s.About, s.Home, s.DeOnly, x.P9, x.P100}},
	}
	for _, c := range cases {
		r := delivery.Request{Branch: "4", Type: "webPage", Sort: c.sort, Lang: c.lang, Variants: c.variants, Skip: c.skip, Take: c.take}
		l, err := s.Svc.List(ctx, r)
		if err != nil {
			t.Errorf("sort %q: %v", c.sort, err)
			continue
		}
		if got := ids(l.Objs); !reflect.DeepEqual(got, c.want) {
			t.Errorf("sort %q lang %q variants %q skip %d take %d: got %v, want %v", c.sort, c.lang, c.variants, c.skip, c.take, got, c.want)
		}
		if want := c.skip+int64(len(l.Objs)) < 5; l.More != want || l.Count != len(l.Objs) {
			t.Errorf("sort %q skip %d: more %v count %d", c.sort, c.skip, l.More, l.Count)
		}
	}
	// An attribute sort with a filter, including ||.
	got := listIDs(t, s, delivery.Request{Type: "webPage", Sort: "price desc", Filter: "price<10 || price>50"})
	if !reflect.DeepEqual(got, []int64{x.P100, x.P9, s.About}) {
		t.Errorf("sorted and filtered: %v", got)
	}
	for _, bad := range []struct{ sort, part string }{
		{"htmlContent", "markup"}, {"nope", `"nope"`}, {"price up", "neither asc nor desc"}, {"meta.nope", "meta.nope"},
		{"meta.deleted", "meta.deleted"},
	} {
		_, err := s.Svc.List(ctx, delivery.Request{Branch: "4", Type: "webPage", Sort: bad.sort})
		wantInvalid(t, "sort "+bad.sort, err, bad.part)
	}
}

func testSortCap(t *testing.T, s *deliverytest.Site, x extra) {
	// Five pages match: a cap of 4 refuses an in-memory sort (a variant
	// is asked, so price is not sorted by the engine), naming it; a
	// narrower filter passes; engine-sorted keys are not capped.
	r := delivery.WithSortCap(delivery.Request{Branch: "4", Type: "webPage", Sort: "price", Variants: x.winterAPI}, 4)
	_, err := s.Svc.List(ctx, r)
	wantInvalid(t, "above the cap", err, "at most 4 objects", "matches 5", "narrow the filter")
	r.Filter = "price>0"
	if l, err := s.Svc.List(ctx, r); err != nil || !reflect.DeepEqual(ids(l.Objs), []int64{x.P9, s.Home, x.P100}) {
		t.Errorf("under the cap: %v, %v", l.Objs, err)
	}
	r.Filter, r.Sort, r.Variants = "", "displayName", ""
	if _, err := s.Svc.List(ctx, r); err != nil {
		t.Errorf("engine sort capped: %v", err)
	}
	r.Sort = "price" // no variant: the engine sorts on the sort-key field
	if l, err := s.Svc.List(ctx, r); err != nil || !reflect.DeepEqual(ids(l.Objs), []int64{s.About, x.P9, s.Home, x.P100, s.DeOnly}) {
		t.Errorf("engine attribute sort capped: %v, %v", l.Objs, err)
	}
}

func testVariants(t *testing.T, s *deliverytest.Site, x extra) {
	get := func(variants string, id int64) any {
		t.Helper()
		o, err := s.Svc.Get(ctx, delivery.Request{Branch: "4", Variants: variants, Props: delivery.PropsAll}, jsonOf(id))
		if err != nil {
			t.Fatalf("variants %q: %v", variants, err)
		}
		return o.Obj.Props[x.colorAPI]
	}
	for _, c := range []struct {
		variants string
		id       int64
		want     any
	}{
		{"", s.Home, "plain"},
		{"summer", s.Home, "yellow"},
		{jsonOf(x.Summer), s.Home, "yellow"},
		{" winter , summer ", s.Home, "yellow"}, // home has no winter value
		{"winter", s.Home, "plain"},
		{"winter," + jsonOf(x.Summer), s.About, "white"},
		{"summer", s.About, nil},
		{"0,summer", s.Home, "yellow"}, // 0 always ends the chain
		{"summer,summer", s.Home, "yellow"},
	} {
		if got := get(c.variants, c.id); got != c.want {
			t.Errorf("variants %q on %d: color = %v, want %v", c.variants, c.id, got, c.want)
		}
	}
	// Lists and filters use the chain too.
	if got := listIDs(t, s, delivery.Request{Type: "webPage", Variants: "summer", Filter: `color="yellow"`}); !reflect.DeepEqual(got, []int64{s.Home}) {
		t.Errorf("filter with variant: %v", got)
	}
	if got := listIDs(t, s, delivery.Request{Type: "webPage", Filter: `color="yellow"`}); len(got) != 0 {
		t.Errorf("filter without variant: %v", got)
	}
	if n, err := s.Svc.Count(ctx, delivery.Request{Branch: "4", Variants: "winter,summer", Filter: `color="white" || color="yellow"`}); err != nil || n != 2 {
		t.Errorf("count with variants = %d, %v", n, err)
	}
	for _, bad := range []struct{ variants, part string }{
		{"autumn", `"autumn"`}, {"summer,autumn", `"autumn"`}, {"999999999", `"999999999"`}, {"-1", `"-1"`},
		{strings.Repeat("summer,", delivery.MaxVariants+1), "at most"},
	} {
		_, err := s.Svc.Get(ctx, delivery.Request{Branch: "4", Variants: bad.variants}, "home")
		wantInvalid(t, "variants "+bad.variants, err, bad.part)
		_, err = s.Svc.List(ctx, delivery.Request{Branch: "4", Variants: bad.variants})
		wantInvalid(t, "list variants "+bad.variants, err, bad.part)
	}
	// A variant deleted since is unknown once the index has the change
	// (the resolution is cached per index version).
	if _, err := s.Svc.Get(ctx, delivery.Request{Branch: "4", Variants: "winter"}, "home"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Content.DeleteObjects(ctx, "4", content.Change{Caller: &auth.Principal{Name: "editor"}}, []string{jsonOf(x.Winter)}); err != nil {
		t.Fatal(err)
	}
	s.Publish(t)
	_, err := s.Svc.Get(ctx, delivery.Request{Branch: "4", Variants: "winter"}, "home")
	wantInvalid(t, "deleted variant", err, `"winter"`)
}
