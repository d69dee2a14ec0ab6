package storetest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/cmsplatform/cms/pkg/store"
)

// testConcurrentWriters runs 8 goroutines × 20 transactions, each allocating
// an object id and writing an object, a value and an outbox event. None may
// fail (no SQLITE_BUSY, no serialization error) and all ids must be unique.
func testConcurrentWriters(t *testing.T, s store.Store) {
	ctx := ctxT(t)
	const workers, perWorker = 8, 20
	start, err := s.LastTransactionID(ctx)
	must(t, err)
	type result struct{ tx, obj int64 }
	results := make(chan result, workers*perWorker)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWorker {
				r, err := func() (result, error) {
					tx, err := s.Begin(ctx, store.TxMeta{User: fmt.Sprintf("w%d", w), Comment: fmt.Sprint(i)})
					if err != nil {
						return result{}, err
					}
					defer func() { _ = tx.Rollback() }()
					newIDs, err := tx.NewObjectIDs(ctx, 1)
					if err != nil {
						return result{}, err
					}
					id := newIDs[0]
					if err := tx.PutObjects(ctx, obj(id, 0, 1, fmt.Sprintf("w%d-%d", w, i), "")); err != nil {
						return result{}, err
					}
					if err := tx.PutValues(ctx, val(id, 0, 1000, 0, 0, 0, fmt.Sprint(i))); err != nil {
						return result{}, err
					}
					if err := tx.AppendOutbox(ctx, store.OutboxEvent{Subject: "s", MsgID: fmt.Sprint(id)}); err != nil {
						return result{}, err
					}
					return result{tx.ID(), id}, tx.Commit(ctx)
				}()
				if err != nil {
					errs <- fmt.Errorf("worker %d tx %d: %w", w, i, err)
					return
				}
				results <- r
			}
		}()
	}
	wg.Wait()
	close(errs)
	close(results)
	for err := range errs {
		t.Fatal(err)
	}
	txs, objs := map[int64]bool{}, map[int64]bool{}
	var objIDs []int64
	for r := range results {
		if txs[r.tx] || objs[r.obj] {
			t.Fatalf("duplicate id: tx %d obj %d", r.tx, r.obj)
		}
		txs[r.tx], objs[r.obj] = true, true
		objIDs = append(objIDs, r.obj)
	}
	if len(txs) != workers*perWorker {
		t.Fatalf("%d transactions, want %d", len(txs), workers*perWorker)
	}
	last, err := s.LastTransactionID(ctx)
	must(t, err)
	if last != start+workers*perWorker {
		t.Fatalf("LastTransactionID = %d, want %d (gapless)", last, start+workers*perWorker)
	}
	got, err := s.GetObjects(ctx, 0, objIDs)
	must(t, err)
	if len(got) != len(objIDs) {
		t.Fatalf("GetObjects found %d of %d objects", len(got), len(objIDs))
	}
	vals, err := s.ListValues(ctx, 0, objIDs, store.ValueFilter{})
	must(t, err)
	if len(vals) != len(objIDs) {
		t.Fatalf("ListValues found %d of %d values", len(vals), len(objIDs))
	}
	ev, err := s.ClaimOutbox(ctx, 1000)
	must(t, err)
	if len(ev) != workers*perWorker {
		t.Fatalf("outbox holds %d events, want %d", len(ev), workers*perWorker)
	}
	// Commit order is id order: the outbox (ordered by outbox id) lists
	// transactions in increasing id order.
	for i := 1; i < len(ev); i++ {
		if ev[i].TxID <= ev[i-1].TxID {
			t.Fatalf("outbox event %d of tx %d follows tx %d", ev[i].ID, ev[i].TxID, ev[i-1].TxID)
		}
	}
}
