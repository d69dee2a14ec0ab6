package searchtest

import (
	"context"
	"reflect"
	"testing"

	"github.com/cmsplatform/cms/pkg/search"
)

// testHeld: SearchRequest.Held changes no hit's id, version or order; a
// hit of a version the caller holds comes with its selected fields or
// without any (engines may skip reading them), every other hit with its
// fields; Held is asked with the version the hit has (a held older
// version of a changed document does not hide the new fields). Run from
// testStored.
func testHeld(t *testing.T, e search.Engine) {
	ctx := context.Background()
	name := IndexName(t)
	if err := e.EnsureIndex(ctx, name, search.Mapping{Fields: map[string]search.Kind{"category": search.Keyword,
		"stock": search.Long, "src": search.Stored}}); err != nil {
		t.Fatalf("EnsureIndex: %v", err)
	}
	src := map[string]string{"h1": `{"n":1}`, "h2": `{"n":2}`, "h3": `{"n":3}`}
	var ops []search.Op
	for id, s := range src {
		ops = append(ops, search.Upsert(search.Document{ID: id, Version: 1,
			Fields: map[string]any{"category": "x", "stock": int64(len(id) + int(s[5])), "src": s}}))
	}
	bulk(t, e, name, ops...)
	refresh(t, e, name)

	// The caller holds h1 and h3 at version 1.
	holds := func(id string, version int64) bool { return version == 1 && (id == "h1" || id == "h3") }
	check := func(what string, req search.SearchRequest, wantHeld map[string]bool) {
		t.Helper()
		req.Index, req.Fields = name, []string{"src"}
		plain, err := e.Search(ctx, req)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		var asked []string
		req.Held = func(id string, version int64) bool {
			asked = append(asked, id)
			return holds(id, version)
		}
		res, err := e.Search(ctx, req)
		if err != nil {
			t.Fatalf("%s with Held: %v", what, err)
		}
		if len(res.Hits) != len(plain.Hits) || res.Total != plain.Total {
			t.Fatalf("%s: %d hits of %d with Held, %d of %d without", what, len(res.Hits), res.Total, len(plain.Hits), plain.Total)
		}
		for i, h := range res.Hits {
			p := plain.Hits[i]
			if h.ID != p.ID || h.Version != p.Version {
				t.Errorf("%s: hit %d = %s v%d with Held, %s v%d without", what, i, h.ID, h.Version, p.ID, p.Version)
			}
			if h.Fields == nil && !wantHeld[h.ID] {
				t.Errorf("%s: %s v%d came without fields, but is not held", what, h.ID, h.Version)
			}
			if h.Fields != nil && !reflect.DeepEqual(h.Fields, p.Fields) {
				t.Errorf("%s: %s fields = %v with Held, %v without", what, h.ID, h.Fields, p.Fields)
			}
		}
		t.Logf("%s: Held asked for %v", what, asked)
	}
	check("ids", search.SearchRequest{Query: search.IDs{"h3", "h2", "h1"}, Size: 5}, map[string]bool{"h1": true, "h3": true})
	check("term, sorted", search.SearchRequest{Query: search.Term{Field: "category", Value: "x"},
		Sort: []search.SortField{{Field: "stock", Desc: true}}, Size: 5}, map[string]bool{"h1": true, "h3": true})
	check("ids, paged", search.SearchRequest{Query: search.IDs{"h3", "h2", "h1"}, From: 1, Size: 1}, map[string]bool{})

	// h3 changes: the held version 1 no longer matches its hit.
	bulk(t, e, name, search.Upsert(search.Document{ID: "h3", Version: 2,
		Fields: map[string]any{"category": "x", "stock": int64(9), "src": `{"n":33}`}}))
	refresh(t, e, name)
	check("ids after a change", search.SearchRequest{Query: search.IDs{"h3", "h1"}, Size: 5}, map[string]bool{"h1": true})
}
