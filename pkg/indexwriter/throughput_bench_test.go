package indexwriter_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/changes"
	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/indexwriter"
	"github.com/cmsplatform/cms/pkg/search"
	"github.com/cmsplatform/cms/pkg/store"
)

// Single-object transaction shape: txObjects objects indexed up front,
// then txUpdates transactions that each update the name of one of them
// (the write pattern of editors and of `cms load`).
const (
	txObjects = 2000
	txUpdates = 2000
	// txPerEvent of the updates are applied one event at a time: the old
	// path is slow enough that the whole set would dominate the run.
	txPerEvent = 200
)

// txLoad is a store with txObjects objects and the events of txUpdates
// single-object transactions on them.
type txLoad struct {
	st      store.Store
	head    int64           // the newest transaction before the updates
	updates []changes.Event // one per transaction, in commit order
}

func newTxLoad(b *testing.B) *txLoad {
	b.Helper()
	ctx := context.Background()
	st, s, typ := benchStore(b)
	in := make([]content.ObjectInput, txObjects)
	for i := range in {
		in[i] = content.ObjectInput{TypeID: typ[0], Values: []content.ValueInput{
			vin(content.AttrName, content.LanguageEnUS, fmt.Sprint("Object ", i))}}
	}
	_, ids, err := s.CreateObjects(ctx, "4", editor, in)
	if err != nil {
		b.Fatal(err)
	}
	l := &txLoad{st: st}
	drainOutbox(b, st)
	if l.head, err = st.LastTransactionID(ctx); err != nil {
		b.Fatal(err)
	}
	for i := range txUpdates {
		// Every fifth update touches an object updated just before, so
		// batches hold repeated changes of one object.
		id := ids[(i*7919)%len(ids)]
		if i%5 == 4 {
			id = ids[((i-1)*7919)%len(ids)]
		}
		if _, err := s.UpdateObjects(ctx, "4", editor, []content.ObjectInput{{ID: id, Values: []content.ValueInput{
			vin(content.AttrName, content.LanguageEnUS, fmt.Sprint("Update ", i))}}}); err != nil {
			b.Fatal(err)
		}
	}
	l.updates = drainOutbox(b, st)
	if len(l.updates) != txUpdates {
		b.Fatalf("%d events for %d transactions", len(l.updates), txUpdates)
	}
	return l
}

// drainOutbox claims and acknowledges every outbox row, returning its events.
func drainOutbox(b testing.TB, st store.Store) []changes.Event {
	b.Helper()
	ctx := context.Background()
	var out []changes.Event
	for {
		evs, err := st.ClaimOutbox(ctx, 500)
		if err != nil {
			b.Fatal(err)
		}
		if len(evs) == 0 {
			return out
		}
		ids := make([]int64, 0, len(evs))
		for _, oe := range evs {
			ev, err := changes.Parse(oe.Payload)
			if err != nil {
				b.Fatal(err)
			}
			out = append(out, ev)
			ids = append(ids, oe.ID)
		}
		if err := st.AckOutbox(ctx, ids); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSingleObjectTransactions measures how many single-object
// transactions per second the indexer applies: one event at a time (Apply,
// the old path of services/indexer) and in batches of 256 (ApplyBatch), on
// Bleve (on disk, as embedded installations run it) and, with CMS_ELASTICSEARCH_URL set, Elasticsearch.
// Both run in the same iteration on fresh indexes holding the objects, and
// the ratio batch/per-event is reported.
func BenchmarkSingleObjectTransactions(b *testing.B) {
	l := newTxLoad(b)
	engines := []struct {
		name string
		open func(b *testing.B) search.Engine
	}{
		{"bleve", func(b *testing.B) search.Engine { return openBleve(b, b.TempDir()) }},
		{"elasticsearch", func(b *testing.B) search.Engine { return openElastic(b) }},
	}
	for _, e := range engines {
		b.Run(e.name, func(b *testing.B) {
			var perEvent, batched time.Duration
			for range b.N {
				perEvent += l.timeApply(b, e.open(b), l.updates[:txPerEvent], 1)
				batched += l.timeApply(b, e.open(b), l.updates, 256)
			}
			oldRate := float64(txPerEvent*b.N) / perEvent.Seconds()
			newRate := float64(txUpdates*b.N) / batched.Seconds()
			b.ReportMetric(oldRate, "tx/s-per-event")
			b.ReportMetric(newRate, "tx/s-batched")
			b.ReportMetric(newRate/oldRate, "x-per-event")
		})
	}
}

// timeApply indexes the objects into eng outside the timer, then applies
// evs in batches of size (1: Apply per event) and returns the time taken.
func (l *txLoad) timeApply(b *testing.B, eng search.Engine, evs []changes.Event, size int) time.Duration {
	b.Helper()
	b.StopTimer()
	ctx := context.Background()
	ix, err := indexwriter.New(l.st, eng, indexwriter.Options{})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := ix.IndexBranch(ctx, content.BranchDefault, l.head); err != nil {
		b.Fatal(err)
	}
	b.StartTimer()
	start := time.Now()
	for i := 0; i < len(evs); i += size {
		chunk := evs[i:min(i+size, len(evs))]
		if size == 1 {
			_, err = ix.Apply(ctx, chunk[0])
		} else {
			_, err = ix.ApplyBatch(ctx, chunk)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	took := time.Since(start)
	b.StopTimer()
	last := evs[len(evs)-1].Transaction
	if v, err := ix.CurrentVersion(ctx); err != nil || v != last {
		b.Fatalf("version %d (%v) after applying up to %d", v, err, last)
	}
	b.StartTimer()
	return took
}
