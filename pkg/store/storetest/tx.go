package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/store"
)

func testTransactionIDs(t *testing.T, s store.Store) {
	ctx := ctxT(t)
	last, err := s.LastTransactionID(ctx)
	must(t, err)
	if last != 0 {
		t.Fatalf("fresh store: LastTransactionID = %d, want 0", last)
	}
	when := time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.FixedZone("X", 3600))
	var prev int64
	var ids []int64
	for i := range 3 {
		meta := store.TxMeta{User: "editor", Comment: "c" + string(rune('0'+i)), Branch: 4, Time: when}
		tx, err := s.Begin(ctx, meta)
		must(t, err)
		id := tx.ID()
		if id <= prev {
			t.Fatalf("tx %d: id %d not greater than previous %d", i, id, prev)
		}
		if m := tx.Meta(); m.ID != id || m.User != "editor" || m.Branch != 4 {
			t.Fatalf("Meta() = %+v", m)
		}
		// Not visible before commit.
		_, err = s.GetTransaction(ctx, id)
		mustBe(t, err, store.ErrNotFound, "GetTransaction before commit")
		if got, err := s.LastTransactionID(ctx); err != nil || got != prev {
			t.Fatalf("LastTransactionID before commit = %d, %v; want %d", got, err, prev)
		}
		must(t, tx.Commit(ctx))
		got, err := s.GetTransaction(ctx, id)
		must(t, err)
		want := store.Transaction{ID: id, Time: when.UTC().Truncate(time.Microsecond), User: "editor", Comment: meta.Comment, Branch: 4}
		if got.ID != want.ID || !got.Time.Equal(want.Time) || got.User != want.User || got.Comment != want.Comment || got.Branch != want.Branch {
			t.Fatalf("GetTransaction = %+v, want %+v", got, want)
		}
		if got.Time.Location() != time.UTC {
			t.Fatalf("transaction time %v is not UTC", got.Time)
		}
		if last, err := s.LastTransactionID(ctx); err != nil || last != id {
			t.Fatalf("LastTransactionID = %d, %v; want %d", last, err, id)
		}
		prev = id
		ids = append(ids, id)
	}
	// A zero time is replaced by the clock.
	before := time.Now().Add(-time.Minute)
	id := write(t, s, func(store.Tx) {})
	got, err := s.GetTransaction(ctx, id)
	must(t, err)
	if got.Time.Before(before) || got.Time.After(time.Now().Add(time.Minute)) {
		t.Fatalf("zero TxMeta.Time became %v, want about now", got.Time)
	}
	_, err = s.GetTransaction(ctx, id+100)
	mustBe(t, err, store.ErrNotFound, "GetTransaction of unknown id")

	// GetTransactions: one query for many, ascending, unknown ids left out.
	many, err := s.GetTransactions(ctx, []int64{id, id + 100, ids[2], id, ids[1]})
	must(t, err)
	if len(many) != 3 || many[0].ID != ids[1] || many[1].ID != ids[2] || many[2].ID != id {
		t.Fatalf("GetTransactions = %+v, want %d, %d and %d", many, ids[1], ids[2], id)
	}
	if one, _ := s.GetTransaction(ctx, ids[2]); many[1] != one {
		t.Fatalf("GetTransactions %+v, GetTransaction %+v", many[1], one)
	}
	if none, err := s.GetTransactions(ctx, nil); err != nil || len(none) != 0 {
		t.Fatalf("GetTransactions(nil) = %v, %v", none, err)
	}
}

func testCommitRollback(t *testing.T, s store.Store) {
	ctx := ctxT(t)
	committed := write(t, s, func(tx store.Tx) {
		must(t, tx.PutObjects(ctx, obj(1, 0, 10, "g-1", "")))
	})

	tx, err := s.Begin(ctx, store.TxMeta{User: "u"})
	must(t, err)
	rolledBack := tx.ID()
	newIDs, err := tx.NewObjectIDs(ctx, 2)
	must(t, err)
	must(t, tx.PutObjects(ctx, obj(newIDs[0], 0, 10, "g-rb", "rb")))
	must(t, tx.PutValues(ctx, store.Value{ObjectID: newIDs[0], AttributeID: 1000, JSON: []byte(`"x"`)},
		store.Value{ObjectID: 1, AttributeID: 1000, JSON: []byte(`"y"`)}))
	_, err = tx.DeleteObjects(ctx, 0, []int64{1})
	must(t, err)
	must(t, tx.AppendOutbox(ctx, store.OutboxEvent{Subject: "cms.rb", MsgID: "m-rb", Payload: []byte("p")}))
	must(t, tx.Rollback())

	_, err = s.GetObject(ctx, 0, newIDs[0])
	mustBe(t, err, store.ErrNotFound, "object of rolled-back tx")
	o, err := s.GetObject(ctx, 0, 1)
	must(t, err)
	if o.Deleted || o.ModifiedTx != committed {
		t.Fatalf("object 1 changed by a rolled-back tx: %+v", o)
	}
	vals, err := s.ListValues(ctx, 0, []int64{1, newIDs[0]}, store.ValueFilter{})
	must(t, err)
	if len(vals) != 0 {
		t.Fatalf("values of rolled-back tx visible: %+v", vals)
	}
	found, err := s.FindObjects(ctx, 0, []string{"g-rb"}, []string{"rb"})
	must(t, err)
	if len(found) != 0 {
		t.Fatalf("rolled-back object found by GUID/API identifier: %+v", found)
	}
	ev, err := s.ClaimOutbox(ctx, 10)
	must(t, err)
	if len(ev) != 0 {
		t.Fatalf("outbox rows of rolled-back tx: %+v", ev)
	}
	_, err = s.GetTransaction(ctx, rolledBack)
	mustBe(t, err, store.ErrNotFound, "rolled-back transaction")
	if last, err := s.LastTransactionID(ctx); err != nil || last != committed {
		t.Fatalf("LastTransactionID after rollback = %d, %v; want %d", last, err, committed)
	}
	// The GUID and API identifier of the rolled-back object are free again,
	// and the next transaction id is still greater than the last committed.
	next := write(t, s, func(tx store.Tx) {
		must(t, tx.PutObjects(ctx, obj(2, 0, 10, "g-rb", "rb")))
	})
	if next <= committed {
		t.Fatalf("tx after rollback got id %d, want > %d", next, committed)
	}
}

func testTxDone(t *testing.T, s store.Store) {
	ctx := ctxT(t)
	tx, err := s.Begin(ctx, store.TxMeta{})
	must(t, err)
	must(t, tx.Commit(ctx))
	mustBe(t, tx.Commit(ctx), store.ErrTxDone, "second Commit")
	must(t, tx.Rollback()) // no-op after Commit
	mustBe(t, tx.PutObjects(ctx, obj(1, 0, 1, "g", "")), store.ErrTxDone, "PutObjects after Commit")
	_, err = tx.GetObject(ctx, 0, 1)
	mustBe(t, err, store.ErrTxDone, "GetObject after Commit")

	tx, err = s.Begin(ctx, store.TxMeta{})
	must(t, err)
	must(t, tx.Rollback())
	mustBe(t, tx.Commit(ctx), store.ErrTxDone, "Commit after Rollback")
	mustBe(t, tx.AppendOutbox(ctx, store.OutboxEvent{Subject: "s"}), store.ErrTxDone, "AppendOutbox after Rollback")
}

func testReadYourWrites(t *testing.T, s store.Store) {
	ctx := ctxT(t)
	tx, err := s.Begin(ctx, store.TxMeta{})
	must(t, err)
	defer func() { _ = tx.Rollback() }()
	must(t, tx.PutObjects(ctx, obj(7, 0, 3, "g-7", "seven")))
	must(t, tx.PutValues(ctx, store.Value{ObjectID: 7, AttributeID: 1, JSON: []byte(`1`)}))
	if o, err := tx.GetObject(ctx, 0, 7); err != nil || o.GUID != "g-7" {
		t.Fatalf("tx.GetObject = %+v, %v", o, err)
	}
	if v, err := tx.ListValues(ctx, 0, []int64{7}, store.ValueFilter{}); err != nil || len(v) != 1 {
		t.Fatalf("tx.ListValues = %+v, %v", v, err)
	}
	// Committed reads neither see the open transaction nor wait for it.
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, err = s.GetObject(rctx, 0, 7)
	mustBe(t, err, store.ErrNotFound, "store.GetObject during open tx")
	if v, err := s.ListValues(rctx, 0, []int64{7}, store.ValueFilter{}); err != nil || len(v) != 0 {
		t.Fatalf("store.ListValues during open tx = %+v, %v", v, err)
	}
	must(t, tx.Commit(ctx))
	if _, err := s.GetObject(ctx, 0, 7); err != nil {
		t.Fatalf("after commit: %v", err)
	}
}
