package indexwriter_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/indexwriter"
	"github.com/cmsplatform/cms/pkg/search"
	"github.com/cmsplatform/cms/pkg/search/bleve"
)

// recording is an engine that logs, per call on the objects index, the
// branches of the documents a Bulk writes ("bulk 4×30") or a refresh.
type recording struct {
	search.Engine
	objects string
	mu      sync.Mutex
	calls   []string
}

func (r *recording) Bulk(ctx context.Context, index string, ops []search.Op) (search.BulkResult, error) {
	if index == r.objects {
		n := map[string]int{}
		var order []string
		for _, op := range ops {
			b, _, _ := strings.Cut(op.Doc.ID, "-")
			if n[b] == 0 {
				order = append(order, b)
			}
			n[b]++
		}
		var parts []string
		for _, b := range order {
			parts = append(parts, fmt.Sprintf("%s×%d", b, n[b]))
		}
		r.log("bulk " + strings.Join(parts, ","))
	} else {
		r.log("bulk " + index)
	}
	return r.Engine.Bulk(ctx, index, ops)
}

func (r *recording) Refresh(ctx context.Context, index string) error {
	if index == r.objects {
		r.log("refresh")
	}
	return r.Engine.Refresh(ctx, index)
}

func (r *recording) log(s string) {
	r.mu.Lock()
	r.calls = append(r.calls, s)
	r.mu.Unlock()
}

func (r *recording) take() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := strings.Join(r.calls, "; ")
	r.calls = nil
	return s
}

// TestPromoteWritesTheParentFirst: the event of a promote of 30 objects
// (Batch 10) writes the parent's 30 documents in one Bulk and refreshes
// before the child's 30 are written in another, then records the version;
// a small pass (fewer descendant documents than Batch) stays one Bulk; the
// batch path (ApplyBatch) phases the same way. The child reads the
// inherited values afterwards.
func TestPromoteWritesTheParentFirst(t *testing.T) {
	ctx := context.Background()
	st := bootstrappedStore(t)
	s := content.New(st, nil)
	admin := content.Change{Caller: &auth.Principal{Name: "admin", Admin: true}}
	_, typ, err := s.CreateObjects(ctx, "4", admin, []content.ObjectInput{{TypeID: content.RootID}})
	if err != nil {
		t.Fatal(err)
	}
	br, _, err := s.CreateBranch(ctx, admin, []content.ValueInput{vin(content.AttrName, content.LanguageEnUS, "release"), vin(4000, 0, 4)})
	if err != nil {
		t.Fatal(err)
	}
	child := strconv.FormatInt(br.ID, 10)
	objects := func(n int, name string) []content.ObjectInput {
		in := make([]content.ObjectInput, n)
		for i := range in {
			in[i] = content.ObjectInput{TypeID: typ[0], Values: []content.ValueInput{vin(content.AttrName, content.LanguageEnUS, fmt.Sprint(name, i))}}
		}
		return in
	}
	if _, _, err := s.CreateObjects(ctx, child, admin, objects(30, "item ")); err != nil {
		t.Fatal(err)
	}
	inner, err := bleve.New("")
	if err != nil {
		t.Fatal(err)
	}
	defer inner.Close()
	eng := &recording{Engine: inner}
	ix, err := indexwriter.New(st, eng, indexwriter.Options{Batch: 10})
	if err != nil {
		t.Fatal(err)
	}
	eng.objects = ix.ObjectsIndex()
	if _, err := ix.ApplyBatch(ctx, drainOutbox(t, st)); err != nil {
		t.Fatal(err)
	}
	eng.take()

	// The promote: one event on the parent.
	res, err := s.PromoteBranch(ctx, child, admin, content.PromoteInput{})
	if err != nil || res.Transaction == nil || res.Objects != 30 {
		t.Fatalf("promote: %+v, %v", res, err)
	}
	evs := drainOutbox(t, st)
	if len(evs) != 1 || evs[0].Branch != content.BranchDefault {
		t.Fatalf("promote events: %+v", evs)
	}
	if _, err := ix.Apply(ctx, evs[0]); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("bulk 4×30; refresh; bulk %d×30; refresh", br.ID)
	if got := eng.take(); !strings.HasPrefix(got, want) {
		t.Errorf("the promote's writes: %s, want %s first", got, want)
	}
	if v, err := ix.CurrentVersion(ctx); err != nil || v != evs[0].Transaction {
		t.Errorf("version %d, %v; want %d", v, err, evs[0].Transaction)
	}
	var ids []int64
	list, err := st.ListBranchObjectIDs(ctx, content.BranchDefault, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range list {
		if id > typ[0] && id != br.ID {
			ids = append(ids, id)
		}
	}
	if len(ids) != 30 {
		t.Fatalf("the parent holds %d promoted objects: %v", len(ids), ids)
	}
	// The child's document: the inherited value, nothing of its own.
	doc, err := eng.Get(ctx, ix.ObjectsIndex(), indexdoc.DocID(br.ID, ids[0]))
	if err != nil || doc.Version != evs[0].Transaction || doc.Fields[indexdoc.NameField(201)] != "item 0" ||
		doc.Fields[indexdoc.FieldHasLocalValues] != false || doc.Fields[indexdoc.FieldLastTransaction] != evs[0].Transaction {
		t.Errorf("the child's document after the promote: %+v, %v", doc, err)
	}

	// Through ApplyBatch: an update of the 30 on the parent with another
	// event coalesced.
	in := make([]content.ObjectInput, len(ids))
	for i, id := range ids {
		in[i] = content.ObjectInput{ID: id, Values: []content.ValueInput{vin(content.AttrName, content.LanguageEnUS, fmt.Sprint("edited ", i))}}
	}
	if _, err := s.UpdateObjects(ctx, "4", admin, in); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateObjects(ctx, "4", admin, in[:1]); err != nil {
		t.Fatal(err)
	}
	evs = drainOutbox(t, st)
	if _, err := ix.ApplyBatch(ctx, evs); err != nil {
		t.Fatal(err)
	}
	if got := eng.take(); !strings.HasPrefix(got, want) {
		t.Errorf("a batch's writes: %s, want %s first", got, want)
	}

	// A small pass: 5 objects, 5 descendant documents (< Batch): one Bulk.
	if _, err := s.UpdateObjects(ctx, "4", admin, in[:5]); err != nil {
		t.Fatal(err)
	}
	evs = drainOutbox(t, st)
	if _, err := ix.Apply(ctx, evs[0]); err != nil {
		t.Fatal(err)
	}
	if got, want := eng.take(), fmt.Sprintf("bulk 4×5,%d×5; refresh", br.ID); !strings.HasPrefix(got, want) {
		t.Errorf("a small pass: %s, want %s", got, want)
	}
}
