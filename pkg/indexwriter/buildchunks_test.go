package indexwriter_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/indexwriter"
	"github.com/cmsplatform/cms/pkg/search"
	"github.com/cmsplatform/cms/pkg/search/bleve"
)

// capturing is an engine that keeps the ops of every Bulk on one index.
type capturing struct {
	search.Engine
	index string
	mu    sync.Mutex
	ops   []search.Op
}

func (c *capturing) Bulk(ctx context.Context, index string, ops []search.Op) (search.BulkResult, error) {
	if index == c.index {
		c.mu.Lock()
		c.ops = append(c.ops, ops...)
		c.mu.Unlock()
	}
	return c.Engine.Bulk(ctx, index, ops)
}

// TestLargePassBuildsChunksInParallel: the 47 objects of one event, built
// in chunks of 5 (Options.Batch) on several cores, are written as the
// documents BuildDocuments builds one chunk after the other, in the
// order of the objects, one per object (the soft-deleted ones too).
func TestLargePassBuildsChunksInParallel(t *testing.T) {
	ctx := context.Background()
	st := bootstrappedStore(t)
	s := content.New(st, nil)
	_, typ, err := s.CreateObjects(ctx, "4", editor, []content.ObjectInput{{TypeID: content.RootID}})
	if err != nil {
		t.Fatal(err)
	}
	inner, err := bleve.New("")
	if err != nil {
		t.Fatal(err)
	}
	defer inner.Close()
	eng := &capturing{Engine: inner}
	ix, err := indexwriter.New(st, eng, indexwriter.Options{Batch: 5})
	if err != nil {
		t.Fatal(err)
	}
	eng.index = ix.ObjectsIndex()
	if _, err := ix.ApplyBatch(ctx, drainOutbox(t, st)); err != nil {
		t.Fatal(err)
	}
	in := make([]content.ObjectInput, 47)
	for i := range in {
		in[i] = content.ObjectInput{TypeID: typ[0], Values: []content.ValueInput{vin(content.AttrName, content.LanguageEnUS, fmt.Sprint("item ", i))}}
	}
	_, ids, err := s.CreateObjects(ctx, "4", editor, in)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.DeleteObjects(ctx, "4", editor, []string{fmt.Sprint(ids[10]), fmt.Sprint(ids[11])}); err != nil {
		t.Fatal(err)
	}
	evs := drainOutbox(t, st)
	eng.mu.Lock()
	eng.ops = nil
	eng.mu.Unlock()
	res, err := ix.ApplyBatch(ctx, evs)
	if err != nil {
		t.Fatal(err)
	}
	v := evs[len(evs)-1].Transaction
	want, err := ix.BuildDocuments(ctx, content.BranchDefault, v, slices.Sorted(slices.Values(ids)))
	if err != nil {
		t.Fatal(err)
	}
	eng.mu.Lock()
	got := eng.ops
	eng.mu.Unlock()
	if res.Ops != len(ids) || len(got) != len(want) {
		t.Fatalf("%d ops written (%d counted), want %d", len(got), res.Ops, len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Fatalf("op %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}
