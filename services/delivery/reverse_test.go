package delivery

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/cmsplatform/cms/pkg/auth"
	"strconv"
	"testing"

	"github.com/cmsplatform/cms/pkg/content"
	deliveryv1 "github.com/cmsplatform/cms/proto/gen/go/cms/delivery/v1"
)

// TestReverseAndUnitsJSON: resolveReverse puts a "reverse" object next to
// props (attribute ApiIdentifier → array of ids) on every looked-up
// object, and the referring objects into refs; without it there is no
// "reverse" key. resolveUnits renders a value with a unit as
// {"value","unitRef"} and puts the unit into refs.
func TestReverseAndUnitsJSON(t *testing.T) {
	h := newHarnessOpts(t, nil, false)
	s := h.site
	id := func(n int64) string { return strconv.FormatInt(n, 10) }

	body := decode(t, h.get(t, 200, "/branches/4/objects/"+id(s.Img)+"?resolveReverse=imageRef,noSuchAttr").body).(map[string]any)
	obj := body["obj"].(map[string]any)
	if fmt.Sprint(keys(obj)) != "[displayName meta props reverse]" {
		t.Fatalf("obj keys %v: %v", keys(obj), obj)
	}
	if got, want := rvCompact(t, obj["reverse"]), fmt.Sprintf(`{"imageRef":[%d,%d]}`, s.M1, s.M2); got != want {
		t.Fatalf("reverse = %s, want %s", got, want)
	}
	refs := body["refs"].([]any)
	if len(refs) != 2 {
		t.Fatalf("refs = %v", refs)
	}
	for _, r := range refs {
		// Default depth: the referrers were looked up too; nothing refers
		// to them.
		if got := rvCompact(t, r.(map[string]any)["reverse"]); got != `{"imageRef":[]}` {
			t.Fatalf("ref reverse = %s", got)
		}
	}
	// Apart from "reverse", the objects keep the recorded shape.
	var stripped []any
	for _, o := range append([]any{obj}, refs...) {
		m := map[string]any{}
		for k, v := range o.(map[string]any) {
			if k != "reverse" {
				m[k] = v
			}
		}
		stripped = append(stripped, m)
	}
	sameShape(t, "reverse", stripped, []any{mock(t, "single.product.mock.json")["obj"]})

	// resolveReverseDepth reaches the domain: at depth 1 the referrers are
	// in refs but were not looked up themselves (no "reverse" on them).
	shallow := decode(t, h.get(t, 200, "/branches/4/objects/"+id(s.Img)+"?resolveReverse=imageRef&resolveReverseDepth=1").body).(map[string]any)
	for _, r := range shallow["refs"].([]any) {
		if _, ok := r.(map[string]any)["reverse"]; ok {
			t.Fatalf("resolveReverseDepth=1: ref has reverse: %v", r)
		}
	}
	if len(shallow["refs"].([]any)) != 2 {
		t.Fatalf("resolveReverseDepth=1: refs = %v", shallow["refs"])
	}
	plain := decode(t, h.get(t, 200, "/branches/4/objects/"+id(s.Img)).body).(map[string]any)
	if _, ok := plain["obj"].(map[string]any)["reverse"]; ok || plain["refs"] != nil {
		t.Fatalf("without resolveReverse: %v", plain)
	}
	list := decode(t, h.get(t, 200, "/branches/4/types/image/objects?take=10&resolveReverse=imageRef").body).(map[string]any)
	objs := list["objs"].([]any)
	if len(objs) != 1 || len(list["refs"].([]any)) != 2 ||
		rvCompact(t, objs[0].(map[string]any)["reverse"]) != fmt.Sprintf(`{"imageRef":[%d,%d]}`, s.M1, s.M2) {
		t.Fatalf("typed list: %v", list)
	}

	// Units.
	_, groups, err := s.Content.CreateObjects(context.Background(), "4", content.Change{Caller: &auth.Principal{Name: "editor"}},
		[]content.ObjectInput{{TypeID: content.TypeUnitGroup}})
	if err != nil {
		t.Fatal(err)
	}
	gj, _ := json.Marshal(groups[0])
	_, units, err := s.Content.CreateObjects(context.Background(), "4", content.Change{Caller: &auth.Principal{Name: "editor"}},
		[]content.ObjectInput{{TypeID: content.TypeUnit, Values: []content.ValueInput{{Attribute: content.AttrUnitParentGroup, JSON: gj}}}})
	if err != nil {
		t.Fatal(err)
	}
	eur := units[0]
	if _, err := s.Content.UpdateObjects(context.Background(), "4", content.Change{Caller: &auth.Principal{Name: "editor"}}, []content.ObjectInput{{ID: s.Home,
		Values: []content.ValueInput{{Attribute: s.Price, JSON: json.RawMessage("19.5"), UnitRef: &eur}}}}); err != nil {
		t.Fatal(err)
	}
	h.publish(t)
	withUnits := decode(t, h.get(t, 200, "/branches/4/objects/home?resolveUnits=true").body).(map[string]any)
	props := withUnits["obj"].(map[string]any)["props"].(map[string]any)
	if got, want := rvCompact(t, props["price"]), fmt.Sprintf(`{"unitRef":%d,"value":19.5}`, eur); got != want {
		t.Fatalf("price = %s, want %s", got, want)
	}
	if r := withUnits["refs"].([]any); len(r) != 1 || r[0].(map[string]any)["meta"].(map[string]any)["type"] != "typeUnit" {
		t.Fatalf("unit refs = %v", withUnits["refs"])
	}
	noUnits := decode(t, h.get(t, 200, "/branches/4/objects/home").body).(map[string]any)
	if p := noUnits["obj"].(map[string]any)["props"].(map[string]any)["price"]; p != 19.5 {
		t.Fatalf("price without resolveUnits = %v", p)
	}
}

func rvCompact(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestReverseEviction: a cached response with reverse relations is
// evicted when a new object starts referring to its object (the new
// object's change event carries the branch's list tag), and the next
// answer shows the new referrer; a typed list without resolveReverse of
// another type stays cached.
func TestReverseEviction(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	s := h.site
	getImg := &deliveryv1.GetRequest{Branch: "4", Id: strconv.FormatInt(s.Img, 10), ResolveReverse: "imageRef"}
	listImg := &deliveryv1.ListTypedRequest{Branch: "4", Type: "image", ResolveReverse: "imageRef"}
	images := &deliveryv1.ListTypedRequest{Branch: "4", Type: "image"}
	if _, err := h.client.Get(ctx, getImg); err != nil {
		t.Fatal(err)
	}
	if _, err := h.client.ListTyped(ctx, listImg); err != nil {
		t.Fatal(err)
	}
	if _, err := h.client.ListTyped(ctx, images); err != nil {
		t.Fatal(err)
	}
	if !h.cached(t, "Get", getImg) || !h.cached(t, "ListTyped", listImg) || !h.cached(t, "ListTyped", images) {
		t.Fatal("not cached")
	}
	img, _ := json.Marshal(s.Img)
	_, ids, err := s.Content.CreateObjects(ctx, "4", content.Change{Caller: &auth.Principal{Name: "editor"}}, []content.ObjectInput{{TypeID: s.Module,
		Values: []content.ValueInput{{Attribute: s.ImageRef, JSON: img}}}})
	if err != nil {
		t.Fatal(err)
	}
	h.publish(t)
	if h.cached(t, "Get", getImg) || h.cached(t, "ListTyped", listImg) {
		t.Fatal("a new referrer left a reverse response cached")
	}
	if !h.cached(t, "ListTyped", images) {
		t.Fatal("a module change evicted the plain image list")
	}
	got, err := h.client.Get(ctx, getImg)
	if err != nil {
		t.Fatal(err)
	}
	rev := got.Obj.Reverse.AsMap()["imageRef"].([]any)
	if len(rev) != 3 || rev[2] != float64(ids[0]) || len(got.Refs) != 3 {
		t.Fatalf("after the change: reverse %v, %d refs", rev, len(got.Refs))
	}
}
