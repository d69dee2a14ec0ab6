package delivery

import (
	"context"
	"encoding/json"
	"github.com/cmsplatform/cms/pkg/auth"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/responsecache"
	deliveryv1 "github.com/cmsplatform/cms/proto/gen/go/cms/delivery/v1"
	"github.com/cmsplatform/cms/services/internal/gateway"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// cached reports whether the response to req is in the cache.
func (h *harness) cached(t *testing.T, op string, req proto.Message) bool {
	t.Helper()
	_, ok, err := h.cache.Get(context.Background(), responsecache.Key(op, req))
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

func (h *harness) rename(t *testing.T, id int64, name string) int64 {
	t.Helper()
	b, _ := json.Marshal(name)
	res, err := h.site.Content.UpdateObjects(context.Background(), "4", content.Change{Caller: &auth.Principal{Name: "editor"}},
		[]content.ObjectInput{{ID: id, Values: []content.ValueInput{{Attribute: content.AttrName, Language: 201, JSON: b}}}})
	if err != nil {
		t.Fatal(err)
	}
	return res.Transaction.ID
}

// TestEvictionIsPrecise: a change evicts the responses built from the
// changed object (directly or as a resolved reference), the lists of its
// branch and type, and nothing else; the next answer shows the change with
// a new ETag.
func TestEvictionIsPrecise(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	s := h.site
	id := func(n int64) string { return strconv.FormatInt(n, 10) }
	homeReq := &deliveryv1.GetRequest{Branch: "4", Id: "home", Resolve: "moduleRefs"}
	aboutReq := &deliveryv1.GetRequest{Branch: "4", Id: id(s.About)}
	modules := &deliveryv1.ListTypedRequest{Branch: "4", Type: "module"}
	images := &deliveryv1.ListTypedRequest{Branch: "4", Type: "image"}
	pages := &deliveryv1.ListTypedRequest{Branch: "4", Type: "webPage", Resolve: "moduleRefs"}
	types := &deliveryv1.GetTypesRequest{Branch: "4"}

	var hdr metadata.MD
	home, err := h.client.Get(ctx, homeReq, grpc.Header(&hdr))
	if err != nil {
		t.Fatal(err)
	}
	oldTag := hdr.Get("etag")
	if len(oldTag) != 1 || !strings.Contains(strings.Join(hdr.Get("cache-control"), ""), "must-revalidate") {
		t.Fatalf("headers %v", hdr)
	}
	for _, call := range []func() error{
		func() error { _, err := h.client.Get(ctx, aboutReq); return err },
		func() error { _, err := h.client.ListTyped(ctx, modules); return err },
		func() error { _, err := h.client.ListTyped(ctx, images); return err },
		func() error { _, err := h.client.ListTyped(ctx, pages); return err },
		func() error { _, err := h.client.GetTypes(ctx, types); return err },
	} {
		if err := call(); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]bool{"home": true, "about": true, "modules": true, "images": true, "pages": true, "types": true}
	check := func(when string) {
		t.Helper()
		got := map[string]bool{"home": h.cached(t, "Get", homeReq), "about": h.cached(t, "Get", aboutReq),
			"modules": h.cached(t, "ListTyped", modules), "images": h.cached(t, "ListTyped", images),
			"pages": h.cached(t, "ListTyped", pages), "types": h.cached(t, "GetTypes", types)}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: %s cached = %v, want %v", when, k, got[k], v)
			}
		}
	}
	check("before the change")

	// M1 is a module that home resolves; about does not reference it.
	h.rename(t, s.M1, "Teaser v2")
	h.publish(t)
	want["home"], want["modules"], want["pages"] = false, false, false
	check("after changing a module")

	home2, err := h.client.Get(ctx, homeReq, grpc.Header(&hdr))
	if err != nil {
		t.Fatal(err)
	}
	if home2.Refs[0].DisplayName != "Teaser v2" || home.Refs[0].DisplayName == "Teaser v2" {
		t.Fatalf("refs after the change: %v (before %v)", home2.Refs[0].DisplayName, home.Refs[0].DisplayName)
	}
	newTag := hdr.Get("etag")
	if len(newTag) != 1 || newTag[0] == oldTag[0] {
		t.Fatalf("ETag %v after the change, was %v", newTag, oldTag)
	}
	// An unchanged response keeps its ETag across a rebuild.
	_ = h.cache.InvalidateTags(ctx, "model:4")
	if _, err := h.client.Get(ctx, homeReq, grpc.Header(&hdr)); err != nil || hdr.Get("etag")[0] != newTag[0] {
		t.Fatalf("rebuilt: %v %v, want %v", err, hdr.Get("etag"), newTag)
	}
}

// TestReadYourWrites: X-Cms-Min-Version waits for the index and never
// answers from a cache entry built before that version; without it the
// cached answer stays until its change event is handled.
func TestReadYourWrites(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	req := &deliveryv1.GetRequest{Branch: "4", Id: "home"}
	if _, err := h.client.Get(ctx, req); err != nil {
		t.Fatal(err)
	}
	tx := h.rename(t, h.site.Home, "Home v2")
	withMin := func(maxWait string) context.Context {
		return metadata.AppendToOutgoingContext(ctx, HeaderMinVersion, strconv.FormatInt(tx, 10), HeaderMaxWait, maxWait)
	}
	start := time.Now()
	var hdr metadata.MD
	_, err := h.client.Get(withMin("50"), req, grpc.Header(&hdr))
	if status.Code(err) != codes.Unavailable || time.Since(start) < 50*time.Millisecond {
		t.Fatalf("not yet indexed: %v after %v, want Unavailable after the wait", err, time.Since(start))
	}
	if ra := hdr.Get("retry-after"); len(ra) != 1 || ra[0] != gateway.RetryAfterSeconds {
		t.Errorf("not yet indexed: retry-after %q, want %q like every 503", ra, gateway.RetryAfterSeconds)
	}
	if _, err := h.client.Get(metadata.AppendToOutgoingContext(ctx, HeaderMinVersion, "x"), req); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("bad header: %v", err)
	}
	// A malformed X-Cms-Max-Wait is refused, with or without X-Cms-Min-Version
	// (it was ignored without it).
	for _, md := range [][]string{{HeaderMaxWait, "abc"}, {HeaderMaxWait, "-5s"}, {HeaderMinVersion, "1", HeaderMaxWait, "abc"}} {
		if _, err := h.client.Get(metadata.AppendToOutgoingContext(ctx, md...), req); status.Code(err) != codes.InvalidArgument ||
			!strings.Contains(status.Convert(err).Message(), HeaderMaxWait) {
			t.Errorf("%q: %v, want InvalidArgument naming %s", md, err, HeaderMaxWait)
		}
	}
	// Index without invalidating: the plain request still gets the cached
	// body, the one asking for tx waits for nothing and rebuilds.
	h.site.Publish(t)
	if got, err := h.client.Get(ctx, req); err != nil || got.Obj.DisplayName != "Home" {
		t.Fatalf("plain request: %v %v", got.GetObj().GetDisplayName(), err)
	}
	if got, err := h.client.Get(withMin("2s"), req); err != nil || got.Obj.DisplayName != "Home v2" {
		t.Fatalf("read-your-writes request: %v %v", got.GetObj().GetDisplayName(), err)
	}
	// The waiting request blocks until the index shows tx.
	tx = h.rename(t, h.site.Home, "Home v3")
	// The publisher must finish (indexing, then acking the outbox) before
	// the test ends and its cleanup closes the store.
	done := make(chan struct{})
	go func() { defer close(done); time.Sleep(100 * time.Millisecond); h.publish(t) }()
	defer func() { <-done }()
	if got, err := h.client.Get(withMin("5000"), req); err != nil || got.Obj.DisplayName != "Home v3" {
		t.Fatalf("waiting request: %v %v", got.GetObj().GetDisplayName(), err)
	}
}

// TestEvictionReachesDescendantBranches: a change on the default branch
// evicts the answers of a work branch that inherits the object, and a
// change on the work branch leaves the parent's answers alone.
func TestEvictionReachesDescendantBranches(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	name, _ := json.Marshal("Child")
	child, _, err := h.site.Content.CreateBranch(ctx, content.Change{Caller: &auth.Principal{Name: "editor"}}, []content.ValueInput{
		{Attribute: content.AttrName, Language: 201, JSON: name}, {Attribute: content.AttrBranchParent, JSON: []byte("4")}})
	if err != nil {
		t.Fatal(err)
	}
	h.publish(t)
	onChild := &deliveryv1.GetRequest{Branch: strconv.FormatInt(child.ID, 10), Id: "home"}
	onMain := &deliveryv1.GetRequest{Branch: "4", Id: "home"}
	for _, r := range []*deliveryv1.GetRequest{onChild, onMain} {
		if _, err := h.client.Get(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	h.rename(t, h.site.Home, "Home v2") // on branch 4
	h.publish(t)
	if h.cached(t, "Get", onChild) || h.cached(t, "Get", onMain) {
		t.Fatal("a change on the parent left an inheriting answer cached")
	}
	got, err := h.client.Get(ctx, onChild)
	if err != nil || got.Obj.DisplayName != "Home v2" {
		t.Fatalf("child after the change: %v %v", got.GetObj().GetDisplayName(), err)
	}
	if _, err := h.client.Get(ctx, onMain); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal("Home on child")
	if _, err := h.site.Content.UpdateObjects(ctx, onChild.Branch, content.Change{Caller: &auth.Principal{Name: "editor"}},
		[]content.ObjectInput{{ID: h.site.Home, Values: []content.ValueInput{{Attribute: content.AttrName, Language: 201, JSON: b}}}}); err != nil {
		t.Fatal(err)
	}
	h.publish(t)
	if h.cached(t, "Get", onChild) || !h.cached(t, "Get", onMain) {
		t.Fatalf("after a child-only change: child cached %v (want false), main cached %v (want true)",
			h.cached(t, "Get", onChild), h.cached(t, "Get", onMain))
	}
}
