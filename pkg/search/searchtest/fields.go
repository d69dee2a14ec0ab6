package searchtest

import (
	"context"
	"reflect"
	"testing"

	"github.com/cmsplatform/cms/pkg/search"
)

// testFieldSelection: SearchRequest.Fields limits the fields of each hit
// (ids queries, other queries, sorted and paged), nil returns all of them,
// an empty selection none, unknown names nothing; a selection does not
// change what later searches and Gets return (caches keep whole
// documents), and changing a selected hit does not leak into later reads.
// Run from testStored, the case it exists for.
func testFieldSelection(t *testing.T, e search.Engine) {
	ctx := context.Background()
	m := search.Mapping{Fields: map[string]search.Kind{"category": search.Keyword, "tags": search.Keyword,
		"stock": search.Long, "src": search.Stored}}
	name := IndexName(t)
	if err := e.EnsureIndex(ctx, name, m); err != nil {
		t.Fatalf("EnsureIndex: %v", err)
	}
	all := map[string]map[string]any{
		"f1": {"category": "x", "tags": []any{"a", "b"}, "stock": int64(3), "src": `{"n":1}`},
		"f2": {"category": "x", "tags": []any{"c"}, "stock": int64(1), "src": `{"n":2}`},
		"f3": {"category": "y", "stock": int64(2)},
	}
	var ops []search.Op
	for id, f := range all {
		ops = append(ops, search.Upsert(search.Document{ID: id, Version: 1, Fields: f}))
	}
	bulk(t, e, name, ops...)
	refresh(t, e, name)

	only := func(id string, names ...string) map[string]any {
		out := map[string]any{}
		for _, n := range names {
			if v, ok := all[id][n]; ok {
				out[n] = v
			}
		}
		return out
	}
	check := func(what string, req search.SearchRequest, wantIDs []string, want func(id string) map[string]any) {
		t.Helper()
		req.Index = name
		res, err := e.Search(ctx, req)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		var ids []string
		for _, h := range res.Hits {
			ids = append(ids, h.ID)
			if w := want(h.ID); !reflect.DeepEqual(h.Fields, w) {
				t.Errorf("%s: %s fields = %v, want %v", what, h.ID, h.Fields, w)
			}
		}
		if !reflect.DeepEqual(ids, wantIDs) {
			t.Errorf("%s: hits %v, want %v", what, ids, wantIDs)
		}
	}
	srcOnly := func(id string) map[string]any { return only(id, "src") }
	full := func(id string) map[string]any { return all[id] }
	none := func(string) map[string]any { return map[string]any{} }

	check("ids, all fields", search.SearchRequest{Query: search.IDs{"f3", "f1"}, Size: 5}, []string{"f1", "f3"}, full)
	check("ids, src", search.SearchRequest{Query: search.IDs{"f3", "f1", "f2"}, Size: 5, Fields: []string{"src"}},
		[]string{"f1", "f2", "f3"}, srcOnly)
	check("ids, paged", search.SearchRequest{Query: search.IDs{"f3", "f1", "f2"}, From: 1, Size: 1, Fields: []string{"src"}},
		[]string{"f2"}, srcOnly)
	check("ids in order", search.SearchRequest{Query: search.IDs{"f1", "f3"}, Size: 5, Fields: []string{"src"}},
		[]string{"f1", "f3"}, srcOnly)
	check("ids repeated", search.SearchRequest{Query: search.IDs{"f2", "f1", "f2", "f1"}, Size: 5, Fields: []string{"src"}},
		[]string{"f1", "f2"}, srcOnly)
	check("term, sorted, two fields", search.SearchRequest{Query: search.Term{Field: "category", Value: "x"},
		Sort: []search.SortField{{Field: "stock"}}, Size: 5, Fields: []string{"tags", "stock"}},
		[]string{"f2", "f1"}, func(id string) map[string]any { return only(id, "tags", "stock") })
	check("all docs, no fields", search.SearchRequest{Size: 5, Fields: []string{}}, []string{"f1", "f2", "f3"}, none)
	check("unknown name", search.SearchRequest{Size: 5, Fields: []string{"nope"}}, []string{"f1", "f2", "f3"}, none)
	// The selections above leave later reads whole.
	check("all docs, all fields", search.SearchRequest{Size: 5}, []string{"f1", "f2", "f3"}, full)
	if d, err := e.Get(ctx, name, "f1"); err != nil || !reflect.DeepEqual(d.Fields, all["f1"]) {
		t.Errorf("Get f1 after selections = %v, %v; want %v", d.Fields, err, all["f1"])
	}
	// Changing a selected hit changes nothing stored.
	res, err := e.Search(ctx, search.SearchRequest{Index: name, Query: search.IDs{"f1"}, Size: 1, Fields: []string{"tags", "src"}})
	if err != nil || len(res.Hits) != 1 {
		t.Fatalf("select f1: %v %v", res.Hits, err)
	}
	res.Hits[0].Fields["src"] = "changed"
	res.Hits[0].Fields["tags"] = append(res.Hits[0].Fields["tags"].([]any), "appended")
	check("after changing a hit", search.SearchRequest{Query: search.IDs{"f1"}, Size: 1, Fields: []string{"tags", "src"}},
		[]string{"f1"}, func(id string) map[string]any { return only(id, "tags", "src") })
}
