package delivery

import (
	"encoding/json"
	"runtime"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/delivery"
	deliveryv1 "github.com/cmsplatform/cms/proto/gen/go/cms/delivery/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// refToObject is the straightforward conversion toObject must equal:
// structpb.NewStruct for props and for reverse ids.
func refToObject(t *testing.T, o delivery.Object) *deliveryv1.Object {
	t.Helper()
	props, err := structpb.NewStruct(o.Props)
	if err != nil {
		t.Fatal(err)
	}
	m := &deliveryv1.ObjectMeta{Id: int32(o.Meta.ID), Guid: o.Meta.GUID, TypeRef: int32(o.Meta.TypeRef), Type: o.Meta.Type,
		LastTransaction: o.Meta.LastTransaction, Deleted: o.Meta.Deleted, Etag: o.Meta.ETag}
	if o.Meta.APIIdentifier != "" {
		m.ApiIdentifier = &o.Meta.APIIdentifier
	}
	if !o.Meta.LastModified.IsZero() {
		m.LastModified = timestamppb.New(o.Meta.LastModified)
	}
	out := &deliveryv1.Object{DisplayName: o.DisplayName, Meta: m, Props: props}
	if o.Reverse != nil {
		rev := map[string]any{}
		for api, ids := range o.Reverse {
			list := make([]any, len(ids))
			for i, id := range ids {
				list[i] = id
			}
			rev[api] = list
		}
		if out.Reverse, err = structpb.NewStruct(rev); err != nil {
			t.Fatal(err)
		}
	}
	if o.DisplayIcon != nil {
		icon := int32(*o.DisplayIcon)
		out.DisplayIcon = &icon
	}
	return out
}

func convSamples() []delivery.Object {
	icon := int64(9)
	var out []delivery.Object
	for i := range 300 { // more values than one allocation chunk
		links := make([]any, i%70)
		for j := range links {
			links[j] = int64(2200000 + j)
		}
		o := delivery.Object{DisplayName: "Obj", Meta: delivery.Meta{ID: int64(2100000 + i), GUID: "g", TypeRef: 3, Type: "article",
			LastTransaction: 7, ETag: "AbCdEfGhIjKlMnOpQrStUv"},
			Props: map[string]any{"title": "T", "links": links, "price": 1.5, "on": i%2 == 0,
				"body": map[string]any{"XML": "<p/>"}, "n": json.Number("12"), "none": nil}}
		if i%3 == 0 {
			o.Meta.APIIdentifier = "api"
			o.Meta.LastModified = time.Date(2024, 5, 1, 10, 0, 7, 108_690_500, time.UTC)
			o.DisplayIcon = &icon
			o.Reverse = map[string][]int64{"links": {1, 2}, "other": {}}
		}
		if i%5 == 0 {
			o.Reverse = map[string][]int64{}
			o.Props = nil
		}
		out = append(out, o)
	}
	return out
}

func TestToObjectsMatchesStructpb(t *testing.T) {
	objs := convSamples()
	got, err := toObjects(objs)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(objs) {
		t.Fatalf("%d objects, want %d", len(got), len(objs))
	}
	for i, o := range objs {
		want := refToObject(t, o)
		if !proto.Equal(got[i], want) {
			t.Fatalf("object %d:\ngot  %v\nwant %v", i, got[i], want)
		}
		one, err := toObject(o)
		if err != nil || !proto.Equal(one, want) {
			t.Fatalf("toObject %d: %v %v", i, one, err)
		}
	}
	if out, err := toObjects(nil); out != nil || err != nil {
		t.Fatalf("toObjects(nil) = %v, %v", out, err)
	}
}

func TestToObjectRefusesInvalidUTF8(t *testing.T) {
	for _, props := range []map[string]any{{"a": "\xff"}, {"\xff": "a"}, {"a": []any{"\xff"}}, {"a": struct{}{}}} {
		if _, err := toObject(delivery.Object{Props: props}); err == nil {
			t.Errorf("props %q converted without error", props)
		}
		if _, err := structpb.NewStruct(props); err == nil {
			t.Errorf("structpb accepts %q: the test is wrong", props)
		}
	}
	if _, err := toObject(delivery.Object{Reverse: map[string][]int64{"\xff": {1}}}); err == nil {
		t.Error("reverse attribute with invalid UTF-8 converted without error")
	}
}

func BenchmarkToObjects(b *testing.B) {
	objs := convSamples()
	for b.Loop() {
		if _, err := toObjects(objs); err != nil {
			b.Fatal(err)
		}
	}
}

// allocated is the bytes f allocates, the mean of 20 runs.
func allocated(f func()) float64 {
	f()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	for range 20 {
		f()
	}
	runtime.ReadMemStats(&m1)
	return float64(m1.TotalAlloc-m0.TotalAlloc) / 20
}

// TestSmallPageAllocatesItsSize: the chunks of values are sized by the
// page, so converting a page of five objects (the size of a typical list
// read) allocates at most half as much again as structpb does with one
// allocation per value (the chunks doubling leave some unused); chunks
// of 256 values from the first allocated some five times as much.
func TestSmallPageAllocatesItsSize(t *testing.T) {
	var page []delivery.Object
	for i := range 5 {
		page = append(page, delivery.Object{DisplayName: "Obj", Meta: delivery.Meta{ID: int64(2100000 + i), GUID: "g",
			TypeRef: 3, Type: "article", LastTransaction: 7, ETag: "AbCdEfGhIjKlMnOpQrStUv",
			LastModified: time.Date(2024, 5, 1, 10, 0, 7, 0, time.UTC)},
			Props: map[string]any{"title": "T", "price": 1.5, "tags": []any{int64(1), int64(2)}, "body": map[string]any{"XML": "<p/>"}}})
	}
	chunked := allocated(func() {
		if _, err := toObjects(page); err != nil {
			t.Fatal(err)
		}
	})
	plain := allocated(func() {
		for _, o := range page {
			refToObject(t, o)
		}
	})
	t.Logf("a page of %d objects: %.0f bytes allocated, %.0f with structpb", len(page), chunked, plain)
	if chunked > 1.5*plain {
		t.Errorf("a page of %d objects allocates %.0f bytes, structpb %.0f", len(page), chunked, plain)
	}
}
