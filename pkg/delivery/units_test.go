package delivery_test

import (
	"encoding/json"
	"github.com/cmsplatform/cms/pkg/auth"
	"reflect"
	"slices"
	"strconv"
	"testing"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/delivery"
	"github.com/cmsplatform/cms/pkg/delivery/deliverytest"
)

func rvItoa(id int64) string { return strconv.FormatInt(id, 10) }

func rvContains(list []string, s string) bool { return slices.Contains(list, s) }

func rvVal(attr, lang int64, v any) content.ValueInput {
	b, _ := json.Marshal(v)
	return content.ValueInput{Attribute: attr, Language: lang, JSON: b}
}

// ref is a value of a multi-valued reference attribute at position sr.
func rvRef(attr, sr, id int64) content.ValueInput {
	v := rvVal(attr, 0, id)
	v.SortReverse = &sr
	return v
}

func testUnits(t *testing.T, s *deliverytest.Site) {
	ed := content.Change{Caller: &auth.Principal{Name: "editor"}}
	_, groups, err := s.Content.CreateObjects(ctx, "4", ed, []content.ObjectInput{{TypeID: content.TypeUnitGroup}})
	if err != nil {
		t.Fatal(err)
	}
	_, units, err := s.Content.CreateObjects(ctx, "4", ed, []content.ObjectInput{
		{TypeID: content.TypeUnit, Values: []content.ValueInput{rvVal(1000, 201, "Euro"), rvVal(content.AttrUnitParentGroup, 0, groups[0])}},
		{TypeID: content.TypeUnit, Values: []content.ValueInput{rvVal(1000, 201, "Millimetre"), rvVal(content.AttrUnitParentGroup, 0, groups[0])}}})
	if err != nil {
		t.Fatal(err)
	}
	eur, mm := units[0], units[1]
	api := "dimensions"
	_, attrs, err := s.Content.CreateObjects(ctx, "4", ed, []content.ObjectInput{{TypeID: content.TypeAttribute, APIIdentifier: &api,
		Values: []content.ValueInput{rvVal(1000, 201, api), rvVal(1001, 0, "Decimal"), rvVal(1004, 0, true)}}})
	if err != nil {
		t.Fatal(err)
	}
	price := rvVal(s.Price, 0, 19.5)
	price.UnitRef = &eur
	d1, d2, d3 := rvRef(attrs[0], 0, 0), rvRef(attrs[0], 1, 0), rvRef(attrs[0], 2, 0)
	d1.JSON, d2.JSON, d3.JSON = json.RawMessage("1.5"), json.RawMessage("2"), json.RawMessage("3")
	d1.UnitRef, d3.UnitRef = &mm, &eur
	if _, err := s.Content.UpdateObjects(ctx, "4", ed, []content.ObjectInput{{ID: s.Home,
		Values: []content.ValueInput{price, d1, d2, d3}}}); err != nil {
		t.Fatal(err)
	}
	s.Publish(t)

	plain, err := s.Svc.Get(ctx, delivery.Request{Branch: "4", Props: delivery.PropsAll}, "home")
	if err != nil {
		t.Fatal(err)
	}
	if plain.Obj.Props["price"] != 19.5 || !reflect.DeepEqual(plain.Obj.Props["dimensions"], []any{1.5, int64(2), int64(3)}) ||
		plain.Refs != nil {
		t.Fatalf("without resolveUnits: props %s, refs %v", jsonOf(plain.Obj.Props), ids(plain.Refs))
	}
	got, err := s.Svc.Get(ctx, delivery.Request{Branch: "4", Props: delivery.PropsAll, ResolveUnits: true}, "home")
	if err != nil {
		t.Fatal(err)
	}
	wantPrice := map[string]any{"value": 19.5, "unitRef": eur}
	wantDims := []any{map[string]any{"value": 1.5, "unitRef": mm}, int64(2), map[string]any{"value": int64(3), "unitRef": eur}}
	if !reflect.DeepEqual(got.Obj.Props["price"], wantPrice) || !reflect.DeepEqual(got.Obj.Props["dimensions"], wantDims) {
		t.Fatalf("props = %s", jsonOf(got.Obj.Props))
	}
	if got.Obj.Props["attributeName"] != "Home" {
		t.Fatalf("a value without unit changed: %s", jsonOf(got.Obj.Props))
	}
	// Units by attribute ApiIdentifier: dimensions (mm, eur), price (eur).
	if g, w := ids(got.Refs), []int64{mm, eur}; !reflect.DeepEqual(g, w) {
		t.Fatalf("refs = %v, want the units %v", g, w)
	}
	if got.Refs[0].DisplayName != "Millimetre" || got.Refs[0].Meta.Type != "typeUnit" {
		t.Fatalf("unit ref = %+v", got.Refs[0])
	}
	if got.Obj.Meta.ETag == plain.Obj.Meta.ETag {
		t.Fatal("ETag ignores units")
	}
	for _, u := range []int64{mm, eur} {
		if !rvContains(got.Tags, delivery.ObjTag(4, u)) {
			t.Fatalf("tags %v lack unit %d", got.Tags, u)
		}
	}
	// With forward resolution: units of refs too, de-duplicated, after
	// the forward refs; one multi-get for all units.
	svc, ce := rvCounted(t, s)
	r := delivery.Request{Branch: "4", Type: "webPage", Take: 10, Props: delivery.PropsAll, ResolveUnits: true, Filter: "price>0"}
	if _, err := svc.List(ctx, r); err != nil {
		t.Fatal(err)
	}
	ce.searches.Store(0)
	list, err := svc.List(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if g := ids(list.Refs); !reflect.DeepEqual(g, []int64{mm, eur}) || !reflect.DeepEqual(ids(list.Objs), []int64{s.Home}) {
		t.Fatalf("list objs %v refs %v", ids(list.Objs), g)
	}
	if n := ce.searches.Load(); n != 2 {
		t.Fatalf("%d searches, want 2 (list + one multi-get of units)", n)
	}
}
