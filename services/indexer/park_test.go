package indexer_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/cmsplatform/cms/pkg/auth"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/indexwriter"
	"github.com/cmsplatform/cms/pkg/search"
)

// poisonEngine is a real Bleve engine whose Bulk fails for any document
// whose full text mentions "poison": an event that can never be applied.
type poisonEngine struct {
	search.Engine
	rejected atomic.Int64
	cured    atomic.Bool // set: nothing is rejected any more
}

func (p *poisonEngine) Bulk(ctx context.Context, index string, ops []search.Op) (search.BulkResult, error) {
	for _, op := range ops {
		if p.cured.Load() {
			break
		}
		if strings.Contains(fmt.Sprint(op.Doc.Fields[indexdoc.FieldFullText]), "poison") {
			p.rejected.Add(1)
			return search.BulkResult{}, errors.New("poisoned document")
		}
	}
	return p.Engine.Bulk(ctx, index, ops)
}

// TestParkFailingEvent: on embedded NATS, an event whose Apply always fails
// is parked after MaxAttempts deliveries, the next event is applied, and a
// read-your-writes wait for the parked transaction returns. The parked
// event is in the durable parked list, read-your-writes for any version
// that includes it fails naming it, and once the engine accepts it again
// a restarted indexer applies it by itself and empties the list.
func TestParkFailingEvent(t *testing.T) {
	t.Run("embedded", func(t *testing.T) { testParkFailingEvent(t, embeddedParts(t), indexwriter.Options{}) })
	t.Run("distributed", func(t *testing.T) { testParkFailingEvent(t, realParts(t), realIndexing) })
}

func testParkFailingEvent(t *testing.T, e *env, iopts indexwriter.Options) {
	ctx := context.Background()
	eng := &poisonEngine{Engine: e.eng}
	e.eng = eng
	const attempts = 3
	e.retry = indexwriter.RetryPolicy{MaxAttempts: attempts, RetryDelay: 10 * time.Millisecond, MaxRetryDelay: 40 * time.Millisecond}
	start(t, e, iopts)

	create := func(name string) (int64, int64) {
		t.Helper()
		tr, ids, err := e.svc.CreateObjects(ctx, "4", content.Change{Caller: &auth.Principal{Name: "editor"}}, []content.ObjectInput{{
			TypeID: content.TypeLanguage, Values: []content.ValueInput{{Attribute: content.AttrName,
				Language: content.LanguageEnUS, JSON: []byte(`"` + name + `"`)}}}})
		if err != nil {
			t.Fatal(err)
		}
		return tr.ID, ids[0]
	}
	poisonTx, poisonID := create("poison pill")
	healthyTx, healthyID := create("healthy")

	// The parked transaction's waiters return (its version is recorded).
	e.wait(t, poisonTx)
	e.wait(t, healthyTx)
	if e.doc(t, 4, healthyID) == nil {
		t.Fatal("the event after the parked one was not applied")
	}
	if e.doc(t, 4, poisonID) != nil {
		t.Fatal("the poisoned object was indexed")
	}
	st1 := e.indexer.Stats()
	parked := e.indexer.Parked()
	if st1.Parked != 1 || len(parked) != 1 {
		t.Fatalf("stats %+v, parked %+v; want one parked event", st1, parked)
	}
	if p := parked[0]; p.Transaction != poisonTx || p.Deliveries != attempts || !strings.Contains(p.Err, "poisoned") || p.Sequence == 0 {
		t.Fatalf("parked %+v; want tx %d after %d deliveries", p, poisonTx, attempts)
	}
	// Once more when it came in one batch with the healthy event: the
	// failed batch is then applied one event at a time.
	if n := eng.rejected.Load(); n != attempts && n != attempts+1 {
		t.Fatalf("the poisoned event was applied %d times, want %d (+1 for a failed batch)", n, attempts)
	}
	if st1.ParkedNow != 1 {
		t.Fatalf("ParkedNow = %d, want 1 (cms_indexer_parked_events)", st1.ParkedNow)
	}
	if st1.Failed != attempts {
		t.Fatalf("failed = %d, want %d", st1.Failed, attempts)
	}

	// The durable list (what `cms indexer parked` shows) has it.
	list, total, err := e.ix.Parked(ctx)
	if err != nil || total != 1 || len(list) != 1 || list[0].Transaction != poisonTx ||
		list[0].Sequence != parked[0].Sequence || !strings.Contains(list[0].Err, "poisoned") || len(list[0].Payload) == 0 {
		t.Fatalf("durable parked list %+v (total %d, %v); want tx %d", list, total, err, poisonTx)
	}
	// Never counted as visible: a reader's wait for the healthy
	// transaction (which includes the parked one) fails naming it, one
	// for a version before it succeeds.
	tracking := indexdoc.NewChangeTracking(e.eng, iopts.IndexPrefix, 0, nil)
	var pe *indexdoc.ParkedError
	if _, err := tracking.WaitForVisible(ctx, healthyTx, time.Second); !errors.As(err, &pe) ||
		pe.Transaction != poisonTx || !strings.Contains(err.Error(), fmt.Sprint(poisonTx)) {
		t.Fatalf("WaitForVisible(%d) = %v; want a ParkedError naming %d", healthyTx, err, poisonTx)
	}
	if _, err := tracking.WaitForVisible(ctx, poisonTx-1, time.Second); err != nil {
		t.Fatalf("WaitForVisible(%d) before the parked transaction = %v", poisonTx-1, err)
	}
	// What the live change stream asks before it announces a transaction.
	for tx, want := range map[int64]bool{poisonTx: true, healthyTx: false} {
		if got, err := tracking.IsParked(ctx, tx); err != nil || got != want {
			t.Fatalf("IsParked(%d) = %v, %v; want %v", tx, got, err, want)
		}
	}

	// The engine accepts it now; a restarted indexer retries the list.
	eng.cured.Store(true)
	e.stopIndexer()
	e.runIndexer(t)
	deadline := time.Now().Add(20 * time.Second)
	for {
		list, _, err := e.ix.Parked(ctx)
		if err == nil && len(list) == 0 && e.doc(t, 4, poisonID) != nil && e.indexer.Stats().ParkedNow == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the parked event was not retried at start: list %+v, err %v, ParkedNow %d", list, err, e.indexer.Stats().ParkedNow)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := tracking.WaitForVisible(ctx, healthyTx, time.Second); err != nil {
		t.Fatalf("after the retry WaitForVisible(%d) = %v", healthyTx, err)
	}
	if got, err := tracking.IsParked(ctx, poisonTx); err != nil || got {
		t.Fatalf("after the retry IsParked(%d) = %v, %v", poisonTx, got, err)
	}
}
