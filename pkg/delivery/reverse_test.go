package delivery_test

import (
	"context"
	"github.com/cmsplatform/cms/pkg/auth"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/delivery"
	"github.com/cmsplatform/cms/pkg/delivery/deliverytest"
	"github.com/cmsplatform/cms/pkg/search"
)

// rvCountingEngine counts the searches a Service sends.
type rvCountingEngine struct {
	search.Engine
	searches atomic.Int64
}

func (e *rvCountingEngine) Search(ctx context.Context, req search.SearchRequest) (search.SearchResult, error) {
	e.searches.Add(1)
	return e.Engine.Search(ctx, req)
}

// rvCounted returns a Service on s's index whose searches are counted.
func rvCounted(t *testing.T, s *deliverytest.Site) (*delivery.Service, *rvCountingEngine) {
	t.Helper()
	ce := &rvCountingEngine{Engine: s.Engine}
	svc, err := delivery.New(delivery.Options{Search: ce, Layout: s.Options.Layout})
	if err != nil {
		t.Fatal(err)
	}
	return svc, ce
}

func rvByID(objs []delivery.Object) map[int64]delivery.Object {
	out := map[int64]delivery.Object{}
	for _, o := range objs {
		out[o.Meta.ID] = o
	}
	return out
}

func rvSameReverse(t *testing.T, what string, got, want map[string][]int64) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: reverse = %s, want %s", what, jsonOf(got), jsonOf(want))
	}
}

// TestReverse runs the resolveReverse and resolveUnits cases on each
// engine (Bleve always, Elasticsearch when configured). The fixture: Home
// → moduleRefs M1, M2; About → moduleRefs M2; M1, M2 → imageRef Img.
func TestReverse(t *testing.T) {
	cases := []struct {
		name string
		fn   func(*testing.T, *deliverytest.Site)
	}{
		{"Depth1", testReverseDepth1},
		{"Depth2AndDefault", testReverseDepth2},
		{"UnknownNamesIgnored", testReverseUnknownNames},
		{"WithForward", testReverseWithForward},
		{"BatchedPerLevel", testReverseBatched},
		{"DeletedReferrer", testReverseDeleted},
		{"Units", testUnits},
	}
	for _, e := range deliverytest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					c.fn(t, deliverytest.NewSiteOn(t, e))
				})
			}
		})
	}
}

func testReverseDepth1(t *testing.T, s *deliverytest.Site) {
	plain, err := s.Svc.Get(ctx, delivery.Request{Branch: "4"}, rvItoa(s.Img))
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Svc.Get(ctx, delivery.Request{Branch: "4", ResolveReverse: "imageRef", ResolveReverseDepth: i32(1)}, rvItoa(s.Img))
	if err != nil {
		t.Fatal(err)
	}
	rvSameReverse(t, "img", got.Obj.Reverse, map[string][]int64{"imageRef": {s.M1, s.M2}})
	if g, w := ids(got.Refs), []int64{s.M1, s.M2}; !reflect.DeepEqual(g, w) {
		t.Fatalf("refs = %v, want %v", g, w)
	}
	for _, o := range got.Refs {
		if o.Reverse != nil {
			t.Fatalf("ref %d of the last level has reverse %v", o.Meta.ID, o.Reverse)
		}
	}
	if got.Obj.Meta.ETag == plain.Obj.Meta.ETag || len(got.Obj.Meta.ETag) != 22 {
		t.Fatalf("ETag %q does not cover reverse (plain %q)", got.Obj.Meta.ETag, plain.Obj.Meta.ETag)
	}
	if plain.Obj.Reverse != nil || plain.Refs != nil {
		t.Fatalf("without resolveReverse: reverse %v, refs %v", plain.Obj.Reverse, ids(plain.Refs))
	}
	// A depth of 0 resolves nothing.
	zero, err := s.Svc.Get(ctx, delivery.Request{Branch: "4", ResolveReverse: "imageRef", ResolveReverseDepth: i32(0)}, rvItoa(s.Img))
	if err != nil || zero.Obj.Reverse != nil || zero.Refs != nil {
		t.Fatalf("depth 0: %v, %v, %v", zero.Obj.Reverse, ids(zero.Refs), err)
	}
}

func testReverseDepth2(t *testing.T, s *deliverytest.Site) {
	r := delivery.Request{Branch: "4", ResolveReverse: "imageRef, moduleRefs", ResolveReverseDepth: i32(2)}
	got, err := s.Svc.Get(ctx, r, rvItoa(s.Img))
	if err != nil {
		t.Fatal(err)
	}
	rvSameReverse(t, "img", got.Obj.Reverse, map[string][]int64{"imageRef": {s.M1, s.M2}, "moduleRefs": {}})
	if g, w := ids(got.Refs), []int64{s.M1, s.M2, s.Home, s.About}; !reflect.DeepEqual(g, w) {
		t.Fatalf("refs = %v, want %v", g, w)
	}
	refs := rvByID(got.Refs)
	rvSameReverse(t, "M1", refs[s.M1].Reverse, map[string][]int64{"imageRef": {}, "moduleRefs": {s.Home}})
	rvSameReverse(t, "M2", refs[s.M2].Reverse, map[string][]int64{"imageRef": {}, "moduleRefs": {s.Home, s.About}})
	if refs[s.Home].Reverse != nil || refs[s.About].Reverse != nil {
		t.Fatalf("level-2 objects were not looked up, yet have reverse: %v %v", refs[s.Home].Reverse, refs[s.About].Reverse)
	}
	// The default depth (100) goes on until no new object refers: Home and
	// About are looked up too (nothing refers to them).
	r.ResolveReverseDepth = nil
	all, err := s.Svc.Get(ctx, r, rvItoa(s.Img))
	if err != nil {
		t.Fatal(err)
	}
	refs = rvByID(all.Refs)
	if len(all.Refs) != 4 {
		t.Fatalf("default depth refs = %v", ids(all.Refs))
	}
	rvSameReverse(t, "Home", refs[s.Home].Reverse, map[string][]int64{"imageRef": {}, "moduleRefs": {}})
	// The same through List of the image type: roots get reverse.
	list, err := s.Svc.List(ctx, delivery.Request{Branch: "4", Type: "image", Take: 10, ResolveReverse: "imageRef",
		ResolveReverseDepth: i32(1)})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Objs) != 1 || !reflect.DeepEqual(ids(list.Refs), []int64{s.M1, s.M2}) {
		t.Fatalf("list: objs %v refs %v", ids(list.Objs), ids(list.Refs))
	}
	rvSameReverse(t, "listed img", list.Objs[0].Reverse, map[string][]int64{"imageRef": {s.M1, s.M2}})
	// A typed list with reverse depends on objects of other types.
	if !reflect.DeepEqual(list.Tags, []string{delivery.ModelTag(4), delivery.ListTag(4)}) {
		t.Fatalf("list tags = %v", list.Tags)
	}
	if !rvContains(got.Tags, delivery.ListTag(4)) {
		t.Fatalf("single tags %v lack the list tag", got.Tags)
	}
}

func testReverseUnknownNames(t *testing.T, s *deliverytest.Site) {
	// price is not a reference, noSuch does not exist: both ignored.
	got, err := s.Svc.Get(ctx, delivery.Request{Branch: "4", ResolveReverse: "noSuch,price, imageRef,imageRef"}, rvItoa(s.Img))
	if err != nil {
		t.Fatal(err)
	}
	rvSameReverse(t, "img", got.Obj.Reverse, map[string][]int64{"imageRef": {s.M1, s.M2}})
	none, err := s.Svc.Get(ctx, delivery.Request{Branch: "4", ResolveReverse: "noSuch, price"}, rvItoa(s.Img))
	if err != nil {
		t.Fatal(err)
	}
	if none.Obj.Reverse != nil || none.Refs != nil {
		t.Fatalf("only unknown names: reverse %v refs %v", none.Obj.Reverse, ids(none.Refs))
	}
}

func testReverseWithForward(t *testing.T, s *deliverytest.Site) {
	// Forward first (Home → M1, M2), then reverse from Home, M1 and M2:
	// About refers to M2.
	got, err := s.Svc.Get(ctx, delivery.Request{Branch: "4", Resolve: "moduleRefs", ResolveReverse: "moduleRefs",
		ResolveReverseDepth: i32(1)}, "home")
	if err != nil {
		t.Fatal(err)
	}
	if g, w := ids(got.Refs), []int64{s.M1, s.M2, s.About}; !reflect.DeepEqual(g, w) {
		t.Fatalf("refs = %v, want %v", g, w)
	}
	rvSameReverse(t, "home", got.Obj.Reverse, map[string][]int64{"moduleRefs": {}})
	refs := rvByID(got.Refs)
	rvSameReverse(t, "M1", refs[s.M1].Reverse, map[string][]int64{"moduleRefs": {s.Home}})
	rvSameReverse(t, "M2", refs[s.M2].Reverse, map[string][]int64{"moduleRefs": {s.Home, s.About}})
	if refs[s.About].Reverse != nil {
		t.Fatalf("About: %v", refs[s.About].Reverse)
	}
	// Forward refs' ETags cover their reverse too.
	fwd, err := s.Svc.Get(ctx, delivery.Request{Branch: "4", Resolve: "moduleRefs"}, "home")
	if err != nil {
		t.Fatal(err)
	}
	if rvByID(fwd.Refs)[s.M1].Meta.ETag == refs[s.M1].Meta.ETag {
		t.Fatal("a forward ref's ETag ignores its reverse")
	}
}

func testReverseBatched(t *testing.T, s *deliverytest.Site) {
	// Many roots referred to by many objects: 30 modules, each referred to
	// by 2 of 30 pages, the pages by nothing.
	const n = 30
	in := make([]content.ObjectInput, n)
	for i := range in {
		in[i] = content.ObjectInput{TypeID: s.Module, Values: []content.ValueInput{rvVal(1000, 201, "Batch module")}}
	}
	_, mods, err := s.Content.CreateObjects(ctx, "4", content.Change{Caller: &auth.Principal{Name: "editor"}}, in)
	if err != nil {
		t.Fatal(err)
	}
	for i := range in {
		in[i] = content.ObjectInput{TypeID: s.WebPage, Values: []content.ValueInput{rvVal(1000, 201, "Batch page"),
			rvRef(s.ModuleRefs, 0, mods[i]), rvRef(s.ModuleRefs, 1, mods[(i+1)%n])}}
	}
	_, pages, err := s.Content.CreateObjects(ctx, "4", content.Change{Caller: &auth.Principal{Name: "editor"}}, in)
	if err != nil {
		t.Fatal(err)
	}
	s.Publish(t)
	svc, ce := rvCounted(t, s)
	r := delivery.Request{Branch: "4", Type: "module", Take: 100, ResolveReverse: "moduleRefs"}
	if _, err := svc.List(ctx, r); err != nil { // warm the meta-model
		t.Fatal(err)
	}
	ce.searches.Store(0)
	list, err := svc.List(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	// 1 list search + level 1 (every module's referrers: the 30 pages,
	// Home, About) + level 2 (the pages' referrers: none, ends).
	if got := ce.searches.Load(); got != 3 {
		t.Fatalf("%d searches for %d roots, want 3 (list + one per level)", got, len(list.Objs))
	}
	if len(list.Objs) != n+2 || len(list.Refs) != n+2 {
		t.Fatalf("objs %d refs %d", len(list.Objs), len(list.Refs))
	}
	first := rvByID(list.Objs)[mods[0]]
	rvSameReverse(t, "module 0", first.Reverse, map[string][]int64{"moduleRefs": {pages[0], pages[n-1]}})
	for _, p := range pages {
		if o, ok := rvByID(list.Refs)[p]; !ok || !reflect.DeepEqual(o.Reverse, map[string][]int64{"moduleRefs": {}}) {
			t.Fatalf("page %d: in refs %v, reverse %v", p, ok, o.Reverse)
		}
	}
	// Depth 1: one search less.
	ce.searches.Store(0)
	r.ResolveReverseDepth = i32(1)
	if _, err := svc.List(ctx, r); err != nil {
		t.Fatal(err)
	}
	if got := ce.searches.Load(); got != 2 {
		t.Fatalf("depth 1: %d searches, want 2", got)
	}
}

func testReverseDeleted(t *testing.T, s *deliverytest.Site) {
	if _, _, err := s.Content.DeleteObjects(ctx, "4", content.Change{Caller: &auth.Principal{Name: "editor"}}, []string{rvItoa(s.About)}); err != nil {
		t.Fatal(err)
	}
	s.Publish(t)
	r := delivery.Request{Branch: "4", ResolveReverse: "moduleRefs", ResolveReverseDepth: i32(1)}
	got, err := s.Svc.Get(ctx, r, rvItoa(s.M2))
	if err != nil {
		t.Fatal(err)
	}
	rvSameReverse(t, "M2", got.Obj.Reverse, map[string][]int64{"moduleRefs": {s.Home}})
	if g := ids(got.Refs); !reflect.DeepEqual(g, []int64{s.Home}) {
		t.Fatalf("refs = %v: the deleted About must not appear", g)
	}
	// The deleted object is indexed (FieldDeleted): asking for deleted
	// objects shows it, as forward resolution does.
	r.Deleted = true
	del, err := s.Svc.Get(ctx, r, rvItoa(s.M2))
	if err != nil {
		t.Fatal(err)
	}
	rvSameReverse(t, "M2 with deleted", del.Obj.Reverse, map[string][]int64{"moduleRefs": {s.Home, s.About}})
}
