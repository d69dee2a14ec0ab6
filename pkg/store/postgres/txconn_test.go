package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/store"
)

// TestHeldBackRowRefused: the rows of PutValues and AppendOutbox go with
// the COMMIT; when PostgreSQL refuses one the checks did not foresee (a
// NUL in an event's subject), Commit fails with the store's error, nothing
// of the transaction is committed (its object, its values, its transaction
// id) and the next write commits on a healthy connection.
func TestHeldBackRowRefused(t *testing.T) {
	ctx := context.Background()
	s := open(t, freshDatabase(t))
	before, err := s.LastTransactionID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	write := func(subject string) (int64, error) {
		tx, err := s.Begin(ctx, store.TxMeta{User: "u"})
		if err != nil {
			return 0, err
		}
		defer func() { _ = tx.Rollback() }()
		ids, err := tx.NewObjectIDs(ctx, 1)
		if err != nil {
			return 0, err
		}
		if err := tx.PutObjects(ctx, store.Object{ID: ids[0], TypeID: 1, GUID: "g-" + subject[:1]}); err != nil {
			return 0, err
		}
		if err := tx.PutValues(ctx, store.Value{ObjectID: ids[0], AttributeID: 1000, JSON: []byte(`"v"`)}); err != nil {
			return 0, err
		}
		if err := tx.AppendOutbox(ctx, store.OutboxEvent{Subject: subject, MsgID: subject}); err != nil {
			return 0, err
		}
		return ids[0], tx.Commit(ctx)
	}
	bad, err := write("b\x00ad")
	if !errors.Is(err, store.ErrInvalidArgument) {
		t.Fatalf("commit with a refused outbox row: %v, want ErrInvalidArgument", err)
	}
	if objs, err := s.GetObjects(ctx, 0, []int64{bad}); err != nil || len(objs) != 0 {
		t.Fatalf("the refused transaction's object: %v %v", objs, err)
	}
	if vals, err := s.ListValues(ctx, 0, []int64{bad}, store.ValueFilter{}); err != nil || len(vals) != 0 {
		t.Fatalf("the refused transaction's values: %v %v", vals, err)
	}
	if last, err := s.LastTransactionID(ctx); err != nil || last != before {
		t.Fatalf("last transaction after the refused one: %d %v, want %d", last, err, before)
	}
	good, err := write("good")
	if err != nil {
		t.Fatalf("the next write: %v", err)
	}
	if last, err := s.LastTransactionID(ctx); err != nil || last != before+1 {
		t.Fatalf("last transaction: %d %v, want %d (gapless)", last, err, before+1)
	}
	if vals, err := s.ListValues(ctx, 0, []int64{good}, store.ValueFilter{}); err != nil || len(vals) != 1 {
		t.Fatalf("the next write's values: %v %v", vals, err)
	}
}

// TestHeldBackRowRefusedInGroup: in a group of two writers (the second
// waits for the writer while the first runs, so it joins the first's
// database transaction; should it come too late, each commits alone and
// the outcome is the same), a refusal of the second's held-back rows at the
// group's end undoes the second alone: the first is committed.
func TestHeldBackRowRefusedInGroup(t *testing.T) {
	ctx := context.Background()
	s := open(t, freshDatabase(t))
	before, err := s.LastTransactionID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	put := func(tx store.Tx, guid, subject string) (int64, error) {
		ids, err := tx.NewObjectIDs(ctx, 1)
		if err != nil {
			return 0, err
		}
		if err := tx.PutObjects(ctx, store.Object{ID: ids[0], TypeID: 1, GUID: guid}); err != nil {
			return 0, err
		}
		if err := tx.PutValues(ctx, store.Value{ObjectID: ids[0], AttributeID: 1000, JSON: []byte(`"v"`)}); err != nil {
			return 0, err
		}
		return ids[0], tx.AppendOutbox(ctx, store.OutboxEvent{Subject: subject, MsgID: guid})
	}
	a, err := s.Begin(ctx, store.TxMeta{User: "a"})
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		id  int64
		err error
	}
	done := make(chan result, 1)
	go func() {
		b, err := s.Begin(ctx, store.TxMeta{User: "b"})
		if err != nil {
			done <- result{err: err}
			return
		}
		id, err := put(b, "g-b", "b\x00ad")
		if err == nil {
			err = b.Commit(ctx)
		} else {
			_ = b.Rollback()
		}
		done <- result{id, err}
	}()
	// b waits for the writer meanwhile; a group takes members for 20 ms
	// after it opened (maxGroupAge), so a commits right after its writes.
	time.Sleep(3 * time.Millisecond)
	aID, err := put(a, "g-a", "good")
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Commit(ctx); err != nil {
		t.Fatalf("the first writer: %v", err)
	}
	r := <-done
	if !errors.Is(r.err, store.ErrInvalidArgument) {
		t.Fatalf("the second writer: %v, want ErrInvalidArgument", r.err)
	}
	if objs, err := s.GetObjects(ctx, 0, []int64{aID}); err != nil || len(objs) != 1 {
		t.Fatalf("the first writer's object: %v %v", objs, err)
	}
	if r.id != 0 {
		if objs, err := s.GetObjects(ctx, 0, []int64{r.id}); err != nil || len(objs) != 0 {
			t.Fatalf("the second writer's object: %v %v", objs, err)
		}
	}
	if last, err := s.LastTransactionID(ctx); err != nil || last != before+1 {
		t.Fatalf("last transaction: %d %v, want %d", last, err, before+1)
	}
}
