package postgres_test

import (
	"context"
	"errors"
	"testing"

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
