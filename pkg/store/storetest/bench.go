package storetest

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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

// RawWrite is the baseline of BenchmarkSingleWrites: the database driver
// alone doing what one single-object write does, in its own transaction
// with one commit, with the store's durability settings: insert a row and
// an outbox-like row. i numbers the write.
type RawWrite func(ctx context.Context, i int64) error

// BenchmarkSingleWrites measures single-object write transactions (one
// object id, one object, one value, one outbox event, one commit each),
// sequentially and with 8 concurrent clients, and, in the same run and for
// the same number of writes, raw doing the bare inserts and commit. It
// reports both rates (writes/s, raw-writes/s) and their ratio (x-raw).
// The two alternate in rounds, so that a change in the machine's load
// during the run weighs on both alike.
func BenchmarkSingleWrites(b *testing.B, s store.Store, raw RawWrite) {
	for _, clients := range []int{1, 8} {
		b.Run("clients="+strconv.Itoa(clients), func(b *testing.B) {
			CompareWrites(b, clients, "raw", func(ctx context.Context, i int64) error { return SingleWrite(ctx, s, i) }, raw)
		})
	}
}

// CompareWrites runs b.N writes of write and b.N of baseline with clients
// goroutines, alternating in rounds so that a change in the machine's load
// during the run weighs on both alike, and reports both rates (writes/s,
// <name>-writes/s) and their ratio (x-<name>).
func CompareWrites(b *testing.B, clients int, name string, write, baseline func(ctx context.Context, i int64) error) {
	const rounds = 4
	var writeTime, baseTime float64 // seconds, summed over rounds
	for r := range rounds {
		n := b.N / rounds
		if r == 0 {
			n += b.N % rounds
		}
		if n == 0 {
			continue
		}
		baseTime += float64(n) / WriteRate(b, n, clients, baseline)
		writeTime += float64(n) / WriteRate(b, n, clients, write)
	}
	rate, baseRate := float64(b.N)/writeTime, float64(b.N)/baseTime
	b.ReportMetric(rate, "writes/s")
	b.ReportMetric(baseRate, name+"-writes/s")
	b.ReportMetric(rate/baseRate, "x-"+name)
	b.ReportMetric(0, "ns/op") // the rates say it; ns/op would mix both runs
}

// WriteRate runs n writes spread over clients goroutines and returns the
// writes per second; the first error fails b.
func WriteRate(b *testing.B, n, clients int, write func(ctx context.Context, i int64) error) float64 {
	b.Helper()
	ctx := context.Background()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	start := time.Now()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1); i <= int64(n); i = next.Add(1) {
				if err := write(ctx, i); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	return float64(n) / elapsed.Seconds()
}

// SingleWrite is one single-object write transaction on s (i is written
// as its value): the unit BenchmarkSingleWrites counts.
func SingleWrite(ctx context.Context, s store.Store, i int64) error {
	tx, err := s.Begin(ctx, store.TxMeta{User: "bench"})
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	ids, err := tx.NewObjectIDs(ctx, 1)
	if err != nil {
		return err
	}
	if err := tx.PutObjects(ctx, store.Object{ID: ids[0], TypeID: 3000001, GUID: "single-" + strconv.FormatInt(ids[0], 10)}); err != nil {
		return err
	}
	if err := tx.PutValues(ctx, store.Value{ObjectID: ids[0], AttributeID: 1000, JSON: []byte(strconv.FormatInt(i, 10))}); err != nil {
		return err
	}
	if err := tx.AppendOutbox(ctx, store.OutboxEvent{Subject: "cms.objects", MsgID: strconv.FormatInt(tx.ID(), 10)}); err != nil {
		return err
	}
	return tx.Commit(ctx)
}
