package delivery_test

import (
	"github.com/cmsplatform/cms/pkg/auth"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/delivery"
	"github.com/cmsplatform/cms/pkg/delivery/deliverytest"
)

// TestReverseCap: more referrers than MaxRefs. refs stop at MaxRefs,
// while the root's reverse list names every referrer (as props name
// every target, resolved or not). Bleve only: it writes 5001 objects.
func TestReverseCap(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and indexes 5001 objects")
	}
	s := deliverytest.NewSite(t)
	n := delivery.MaxRefs + 1
	in := make([]content.ObjectInput, n)
	for i := range in {
		in[i] = content.ObjectInput{TypeID: s.Module, Values: []content.ValueInput{rvVal(1000, 201, "Many"), rvVal(s.ImageRef, 0, s.Img)}}
	}
	start := time.Now()
	_, mods, err := s.Content.CreateObjects(ctx, "4", content.Change{Caller: &auth.Principal{Name: "editor"}}, in)
	if err != nil {
		t.Fatal(err)
	}
	s.Publish(t)
	t.Logf("wrote and indexed %d objects in %v", n, time.Since(start))
	svc, ce := rvCounted(t, s)
	r := delivery.Request{Branch: "4", ResolveReverse: "imageRef, moduleRefs"}
	if _, err := svc.Get(ctx, delivery.Request{Branch: "4"}, rvItoa(s.Img)); err != nil { // warm the meta-model
		t.Fatal(err)
	}
	ce.searches.Store(0)
	start = time.Now()
	got, err := svc.Get(ctx, r, rvItoa(s.Img))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("reverse over %d referrers: %v, %d searches", n+2, time.Since(start), ce.searches.Load())
	if len(got.Refs) != delivery.MaxRefs {
		t.Fatalf("%d refs, want MaxRefs %d", len(got.Refs), delivery.MaxRefs)
	}
	rev := got.Obj.Reverse["imageRef"]
	if len(rev) != n+2 || rev[0] != s.M1 || rev[1] != s.M2 || rev[n+1] != mods[n-1] {
		t.Fatalf("reverse has %d ids (want %d): first %v", len(rev), n+2, rev[:3])
	}
	seen := map[int64]bool{s.Img: true}
	for _, o := range got.Refs {
		if seen[o.Meta.ID] {
			t.Fatalf("ref %d twice or the root in refs", o.Meta.ID)
		}
		seen[o.Meta.ID] = true
	}
	// find + level 1 + level 2 (the 5000 referrers in refs: nothing
	// refers to them, so it ends).
	if c := ce.searches.Load(); c != 3 {
		t.Fatalf("%d searches, want 3", c)
	}
}
