package storetest

import (
	"context"
	"strconv"
	"testing"

	"github.com/cmsplatform/cms/pkg/store"
)

// BenchmarkWriteTx measures one committed write transaction that allocates
// 10 object ids and writes 10 objects with 5 values each plus one outbox
// event. Backends call it from their own Benchmark function.
func BenchmarkWriteTx(b *testing.B, s store.Store) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		tx, err := s.Begin(ctx, store.TxMeta{User: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		ids, err := tx.NewObjectIDs(ctx, 10)
		if err != nil {
			b.Fatal(err)
		}
		objs := make([]store.Object, 0, 10)
		vals := make([]store.Value, 0, 50)
		for _, id := range ids {
			objs = append(objs, store.Object{ID: id, TypeID: 3000001, GUID: "guid-" + strconv.FormatInt(id, 10)})
			for a := range int64(5) {
				vals = append(vals, store.Value{ObjectID: id, AttributeID: 1000 + a, Language: 201, JSON: []byte(`"some text value"`)})
			}
		}
		if err := tx.PutObjects(ctx, objs...); err != nil {
			b.Fatal(err)
		}
		if err := tx.PutValues(ctx, vals...); err != nil {
			b.Fatal(err)
		}
		if err := tx.AppendOutbox(ctx, store.OutboxEvent{Subject: "cms.objects", MsgID: strconv.FormatInt(tx.ID(), 10)}); err != nil {
			b.Fatal(err)
		}
		if err := tx.Commit(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
