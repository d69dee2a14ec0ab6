package indexer_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/indexwriter"
)

// backlogObjects is how many objects a backlog's transactions touch.
const backlogObjects = 100

// backlog is a history written while the indexer was stopped.
type backlog struct {
	objects []int64 // transaction i touches objects[i%backlogObjects]
	head    int64   // the newest transaction
}

// writeBacklog stops the indexer, makes n single-object transactions on
// objects of a custom type (backlogObjects creates, then updates; name(i)
// names the object of transaction i, and the last transaction creates an
// object of its own when lastCreates) and waits until the relay has
// published them.
func (e *env) writeBacklog(t testing.TB, n int, name func(i int) string, lastCreates bool) backlog {
	t.Helper()
	ctx := context.Background()
	tr, typ, err := e.svc.CreateObjects(ctx, "4", editor, []content.ObjectInput{{TypeID: content.RootID}})
	if err != nil {
		t.Fatal(err)
	}
	e.wait(t, tr.ID)
	e.stopIndexer()
	published := e.relay.Stats().Published
	var b backlog
	for i := range n {
		in := content.ObjectInput{TypeID: typ[0], Values: []content.ValueInput{vin(content.AttrName, content.LanguageEnUS, name(i))}}
		if len(b.objects) == backlogObjects && !(lastCreates && i == n-1) {
			in.TypeID, in.ID = 0, b.objects[i%backlogObjects]
			tr, err := e.svc.UpdateObjects(ctx, "4", editor, []content.ObjectInput{in})
			if err != nil {
				t.Fatal(err)
			}
			b.head = tr.Transaction.ID
			continue
		}
		tr, ids, err := e.svc.CreateObjects(ctx, "4", editor, []content.ObjectInput{in})
		if err != nil {
			t.Fatal(err)
		}
		if len(b.objects) < backlogObjects {
			b.objects = append(b.objects, ids...)
		}
		b.head = tr.ID
	}
	e.relay.Notify()
	for deadline := time.Now().Add(2 * time.Minute); e.relay.Stats().Published < published+int64(n); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("relay published %d of %d events", e.relay.Stats().Published-published, n)
		}
	}
	return b
}

// TestBacklogAppliedInBatches: a restarted indexer applies a backlog of
// single-object transactions in batches; the last event cannot be applied
// (its batch then goes one event at a time) and is parked alone, every
// other change is searchable, and the lag is zero once caught up.
func TestBacklogAppliedInBatches(t *testing.T) {
	e := embeddedParts(t)
	eng := &poisonEngine{Engine: e.eng}
	e.eng = eng
	e.retry = indexwriter.RetryPolicy{MaxAttempts: 2, RetryDelay: 10 * time.Millisecond, MaxRetryDelay: 20 * time.Millisecond}
	start(t, e, indexwriter.Options{})
	const n = 400
	name := func(i int) string {
		if i == n-1 {
			return "poison pill"
		}
		return fmt.Sprint("Name ", i)
	}
	b := e.writeBacklog(t, n, name, true)
	e.runIndexer(t)
	e.wait(t, b.head)
	st := e.indexer.Stats()
	t.Logf("%+v, lag %+v", st, e.indexer.Lag())
	if st.Parked != 1 || st.Applied != n-1 {
		t.Errorf("parked %d, applied %d; want the poisoned event parked and the %d others applied", st.Parked, st.Applied, n-1)
	}
	if st.Batches < 1 || st.Batches*2 > st.Applied {
		t.Errorf("%d batches for %d events: not applied in batches", st.Batches, st.Applied)
	}
	for i := n - 1 - backlogObjects; i < n-1; i++ { // the last change of every object
		id := b.objects[i%backlogObjects]
		if d := e.doc(t, content.BranchDefault, id); d == nil || d[indexdoc.NameField(content.LanguageEnUS)] != name(i) {
			t.Errorf("object %d: document %v, want the name %q", id, d, name(i))
		}
	}
	if lag := e.indexer.Lag(); lag.Events != 0 || lag.Seconds != 0 {
		t.Errorf("lag after catching up: %+v, want none", lag)
	}
}
