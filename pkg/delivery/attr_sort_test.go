package delivery_test

import (
	"errors"
	"github.com/cmsplatform/cms/pkg/auth"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/delivery"
	"github.com/cmsplatform/cms/pkg/delivery/deliverytest"
)

// TestAttributeSortOnEngine: a sort by an attribute, in a language with
// indexed name fields and without variants, is done by the engine on the
// attribute's sort-key field (pkg/indexwriter/sortkeys.go): no cap applies
// and skip/take page in the engine. Its order equals the in-memory order
// (forced by asking for a variant no value has, which selects the same
// values) for strings with language fallback, numbers (negatives,
// decimals, ties), dates, multi-valued strings, booleans and references,
// values missing or empty, ascending and descending, on each engine.
func TestAttributeSortOnEngine(t *testing.T) {
	deliverytest.OnEachEngine(t, func(t *testing.T, s *deliverytest.Site) {
		product, n := addProducts(t, s)
		variant := strconv.FormatInt(product, 10) // an object no value has as variant
		list := func(r delivery.Request) ([]int64, error) {
			r.Branch, r.Type, r.Props = "4", "product", delivery.PropsNone
			if r.Take == 0 {
				r.Take = 100
			}
			l, err := s.Svc.List(ctx, r)
			if err != nil {
				return nil, err
			}
			return ids(l.Objs), nil
		}
		for _, lang := range []string{"en-US", "de-DE"} {
			for _, key := range []string{"title", "cost", "when", "tags", "flag", "ref", "cost desc, title", "flag, cost desc"} {
				for _, dir := range []string{"", " asc", " desc"} {
					sort := key + dir
					if strings.Contains(key, ",") && dir != "" {
						continue
					}
					t.Run(lang+" "+sort, func(t *testing.T) {
						// Cap 1: only the engine path can answer.
						eng, err := list(delivery.WithSortCap(delivery.Request{Lang: lang, Sort: sort}, 1))
						if err != nil {
							t.Fatalf("engine sort: %v", err)
						}
						mem, err := list(delivery.Request{Lang: lang, Sort: sort, Variants: variant})
						if err != nil {
							t.Fatalf("in-memory sort: %v", err)
						}
						if len(eng) != n || !slices.Equal(eng, mem) {
							t.Errorf("engine order %v\nin-memory    %v", eng, mem)
						}
						_, err = list(delivery.WithSortCap(delivery.Request{Lang: lang, Sort: sort, Variants: variant}, 1))
						if !errors.Is(err, delivery.ErrInvalidArgument) {
							t.Errorf("in-memory sort above the cap = %v, want ErrInvalidArgument", err)
						}
					})
				}
			}
		}
		// Not every order is the id order (the keys order something).
		for _, key := range []string{"title", "cost", "when", "tags", "flag", "ref"} {
			asc, _ := list(delivery.Request{Lang: "de-DE", Sort: key})
			desc, _ := list(delivery.Request{Lang: "de-DE", Sort: key + " desc"})
			if slices.Equal(asc, desc) || slices.IsSorted(asc) {
				t.Errorf("sort %s: asc %v, desc %v: not ordered by the key", key, asc, desc)
			}
		}
		// Paging past a cap of 3 on the engine.
		all, err := list(delivery.WithSortCap(delivery.Request{Lang: "de-DE", Sort: "cost desc"}, 3))
		if err != nil {
			t.Fatal(err)
		}
		var paged []int64
		for skip := int64(0); skip < int64(n)+3; skip += 3 {
			r := delivery.WithSortCap(delivery.Request{Branch: "4", Type: "product", Props: delivery.PropsNone,
				Lang: "de-DE", Sort: "cost desc", Skip: skip, Take: 3}, 3)
			l, err := s.Svc.List(ctx, r)
			if err != nil {
				t.Fatalf("skip %d: %v", skip, err)
			}
			if want := skip+int64(len(l.Objs)) < int64(n); l.More != want {
				t.Errorf("skip %d: more = %v, want %v", skip, l.More, want)
			}
			paged = append(paged, ids(l.Objs)...)
		}
		if !slices.Equal(paged, all) || len(all) != n {
			t.Errorf("pages %v, want %v", paged, all)
		}
	})
}

// addProducts adds a type "product" (returned, with the number of
// products) with attributes title (String, language-dependent), cost
// (Decimal), when (DateTime), tags (String, multi-valued), flag (Boolean)
// and ref (ObjRef), and products whose values cover fallback (de-DE falls
// back to en-US), missing and empty values, negatives, decimals and ties,
// created so that id order is not value order.
func addProducts(t *testing.T, s *deliverytest.Site) (product int64, n int) {
	t.Helper()
	editor := content.Change{Caller: &auth.Principal{Name: "editor"}}
	create := func(in ...content.ObjectInput) []int64 {
		t.Helper()
		_, ids, err := s.Content.CreateObjects(ctx, "4", editor, in)
		if err != nil {
			t.Fatal(err)
		}
		return ids
	}
	attr := func(api, dt string, isMulti, langDep bool) content.ObjectInput {
		return content.ObjectInput{TypeID: content.TypeAttribute, APIIdentifier: facetPtr(api), Values: []content.ValueInput{
			facetValue(1000, langEnUS, api), facetValue(1001, 0, dt), facetValue(1004, 0, isMulti),
			facetValue(content.AttrLanguageDependent, 0, langDep)}}
	}
	ids := create(attr("title", "String", false, true), attr("cost", "Decimal", false, false),
		attr("when", "DateTime", false, false), attr("tags", "String", true, false),
		attr("flag", "Boolean", false, false), attr("ref", "ObjRef", false, false))
	title, cost, when, tags, flag, ref := ids[0], ids[1], ids[2], ids[3], ids[4], ids[5]
	product = create(content.ObjectInput{TypeID: content.RootID, APIIdentifier: facetPtr("product"),
		Values: []content.ValueInput{facetValue(1000, langEnUS, "Product")}})[0]
	multi := func(attr int64, vs ...any) []content.ValueInput {
		out := make([]content.ValueInput, len(vs))
		for i, v := range vs {
			sr := int64(i)
			out[i] = content.ValueInput{Attribute: attr, SortReverse: &sr, JSON: js(v)}
		}
		return out
	}
	type p struct {
		en, de   any // title; nil = none
		cost     any
		when     any
		tags     []any
		flag     any
		refIndex int // 0 = none, else s.M1 / s.M2 / s.Img
	}
	refs := []int64{0, s.M2, s.M1, s.Img}
	products := []p{
		{en: "Kiwi", de: "Zitrone", cost: 19.5, when: "2024-05-01T10:00:00Z", tags: []any{"m", "B"}, flag: true, refIndex: 1},
		{en: "apple", cost: -3, when: "2023-01-01T00:00:00+02:00", tags: []any{"a"}, flag: false, refIndex: 2},
		{de: "Birne", cost: 0.25, tags: []any{"z", "c"}, refIndex: 3},
		{en: "Banana", de: "", cost: -3, when: "2024-05-01T11:00:00+02:00", flag: true},
		{en: "cherry", de: "Kirsche", cost: 1000, when: "1999-12-31T23:59:59Z", tags: []any{"C", "y"}, flag: false, refIndex: 1},
		{},
		{en: "Date", cost: -0.5, when: "2024-05-01T09:00:00Z", tags: []any{"b"}, refIndex: 2},
		{de: "Apfel", cost: 19.5, tags: []any{"", "k"}, flag: true},
	}
	var in []content.ObjectInput
	for _, x := range products {
		o := content.ObjectInput{TypeID: product}
		if x.en != nil {
			o.Values = append(o.Values, facetValue(title, langEnUS, x.en))
		}
		if x.de != nil {
			o.Values = append(o.Values, facetValue(title, langDeDE, x.de))
		}
		for _, v := range []struct {
			attr int64
			v    any
		}{{cost, x.cost}, {when, x.when}, {flag, x.flag}} {
			if v.v != nil {
				o.Values = append(o.Values, facetValue(v.attr, 0, v.v))
			}
		}
		if len(x.tags) > 0 {
			o.Values = append(o.Values, multi(tags, x.tags...)...)
		}
		if x.refIndex > 0 {
			o.Values = append(o.Values, facetValue(ref, 0, refs[x.refIndex]))
		}
		in = append(in, o)
	}
	create(in...)
	s.Publish(t)
	if t.Failed() {
		t.FailNow()
	}
	return product, len(products)
}
