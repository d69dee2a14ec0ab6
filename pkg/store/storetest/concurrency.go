package storetest

import (
	"errors"
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
	results := runWorkers(t, workers, perWorker, func(w, i int) (result, error) {
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
	})
	txs, objs := map[int64]bool{}, map[int64]bool{}
	var objIDs []int64
	for _, r := range results {
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

// testConcurrentWritersWithFailures: 8 goroutines write at once; every
// third transaction of each fails (a GUID conflict, then Rollback) and
// every fifth is rolled back after writing. The failures must undo exactly
// their own writes: every committed transaction is visible with its
// object, value and outbox event, nothing of a failed one is, and the
// committed ids stay gapless.
func testConcurrentWritersWithFailures(t *testing.T, s store.Store) {
	ctx := ctxT(t)
	taken := write(t, s, func(tx store.Tx) {
		ids, err := tx.NewObjectIDs(ctx, 1)
		must(t, err)
		must(t, tx.PutObjects(ctx, obj(ids[0], 0, 1, "taken", "")))
	})
	const workers, perWorker = 8, 15
	type result struct {
		tx, obj   int64
		committed bool
	}
	results := runWorkers(t, workers, perWorker, func(w, i int) (result, error) {
		tx, err := s.Begin(ctx, store.TxMeta{User: fmt.Sprintf("w%d", w)})
		if err != nil {
			return result{}, err
		}
		defer func() { _ = tx.Rollback() }()
		ids, err := tx.NewObjectIDs(ctx, 1)
		if err != nil {
			return result{}, err
		}
		r := result{tx: tx.ID(), obj: ids[0]}
		guid := fmt.Sprintf("f%d-%d", w, i)
		if i%3 == 0 {
			guid = "taken"
		}
		err = tx.PutObjects(ctx, obj(r.obj, 0, 1, guid, ""))
		switch {
		case i%3 == 0 && !errors.Is(err, store.ErrConflict):
			return r, fmt.Errorf("reused GUID: got %v, want ErrConflict", err)
		case i%3 == 0:
			return r, tx.Rollback()
		case err != nil:
			return r, err
		}
		if err := tx.PutValues(ctx, val(r.obj, 0, 1000, 0, 0, 0, `"`+guid+`"`)); err != nil {
			return r, err
		}
		if err := tx.AppendOutbox(ctx, store.OutboxEvent{Subject: "s", MsgID: guid}); err != nil {
			return r, err
		}
		if i%5 == 4 {
			return r, tx.Rollback()
		}
		r.committed = true
		return r, tx.Commit(ctx)
	})
	var committed []int64
	txs := map[int64]bool{}
	for _, r := range results {
		if r.committed {
			if txs[r.tx] {
				t.Fatalf("transaction id %d committed twice", r.tx)
			}
			txs[r.tx] = true
			committed = append(committed, r.obj)
		}
	}
	last, err := s.LastTransactionID(ctx)
	must(t, err)
	if last != taken+int64(len(committed)) {
		t.Fatalf("LastTransactionID = %d, want %d (%d committed after %d, gapless)", last, taken+int64(len(committed)), len(committed), taken)
	}
	for id := taken + 1; id <= last; id++ {
		if !txs[id] {
			t.Fatalf("transaction %d is not one of the committed ones", id)
		}
	}
	got, err := s.GetObjects(ctx, 0, committed)
	must(t, err)
	vals, err := s.ListValues(ctx, 0, committed, store.ValueFilter{})
	must(t, err)
	if len(got) != len(committed) || len(vals) != len(committed) {
		t.Fatalf("committed: %d objects and %d values visible, want %d", len(got), len(vals), len(committed))
	}
	// A failed transaction's object id may have been handed out again to
	// a later one; what must not exist is a row written by a failed one.
	for _, o := range got {
		if o.GUID == "taken" {
			t.Fatalf("object %d has the conflicting GUID", o.ID)
		}
	}
	ev, err := s.ClaimOutbox(ctx, 1000)
	must(t, err)
	if len(ev) != len(committed) {
		t.Fatalf("outbox holds %d events, want %d (one per committed transaction)", len(ev), len(committed))
	}
	for _, e := range ev {
		if !txs[e.TxID] {
			t.Fatalf("outbox event of transaction %d, which did not commit", e.TxID)
		}
	}
}

// runWorkers runs fn(w, i) for i < perWorker in each of workers goroutines
// at once and returns the results; the first error fails t, naming the
// worker and the round.
func runWorkers[R any](t *testing.T, workers, perWorker int, fn func(w, i int) (R, error)) []R {
	t.Helper()
	results := make(chan R, workers*perWorker)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWorker {
				r, err := fn(w, i)
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
	out := make([]R, 0, len(results))
	for r := range results {
		out = append(out, r)
	}
	return out
}
