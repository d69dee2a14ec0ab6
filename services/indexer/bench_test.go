package indexer_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/indexwriter"
	"github.com/cmsplatform/cms/pkg/search/bleve"
)

// BenchmarkWriteToSearchable measures, on the embedded components, how long
// a committed write takes to become searchable: UpdateObjects returns →
// relay → JetStream → indexer → Bleve refresh → WaitForVersion returns.
// It reports the p50 and p99 of that latency.
func BenchmarkWriteToSearchable(b *testing.B) { benchLatency(b, embeddedEnv(b)) }

// BenchmarkWriteToSearchableDistributed is the same on PostgreSQL, NATS and
// Elasticsearch (skipped without CMS_*_URL).
func BenchmarkWriteToSearchableDistributed(b *testing.B) { benchLatency(b, realEnv(b)) }

func benchLatency(b *testing.B, e *env) {
	ctx := context.Background()
	_, ids, err := e.svc.CreateObjects(ctx, "4", editor, []content.ObjectInput{{TypeID: content.TypeLanguage,
		Values: []content.ValueInput{vin(content.AttrName, content.LanguageEnUS, "Bench")}}})
	if err != nil {
		b.Fatal(err)
	}
	var lat []time.Duration
	i := 0
	for b.Loop() {
		i++
		res, err := e.svc.UpdateObjects(ctx, "4", editor, []content.ObjectInput{{ID: ids[0],
			Values: []content.ValueInput{vin(content.AttrName, content.LanguageEnUS, "Bench "+id(int64(i)))}}})
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		e.relay.Notify()
		if _, err := e.ix.WaitForVersion(ctx, res.Transaction.ID, 10*time.Second); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}

// backlogEvents is the backlog BenchmarkBacklogCatchUp restarts the
// indexer with (issue 13: caught up in ≤ 10 s).
const backlogEvents = 10000

// BenchmarkBacklogCatchUp measures, on the embedded components (Bleve on
// disk, as `cms run` has it), how long a
// restarted indexer takes to apply backlogEvents pending single-object
// transactions (written while it was stopped): from its start until
// WaitForVersion sees the newest one. It reports the seconds and the
// transactions applied per second.
func BenchmarkBacklogCatchUp(b *testing.B) {
	e := embeddedParts(b)
	eng, err := bleve.New(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = eng.Close() })
	e.eng = eng
	benchBacklog(b, start(b, e, indexwriter.Options{}))
}

// BenchmarkBacklogCatchUpDistributed is the same on PostgreSQL, NATS and
// Elasticsearch (skipped without CMS_*_URL).
func BenchmarkBacklogCatchUpDistributed(b *testing.B) { benchBacklog(b, realEnv(b)) }

func benchBacklog(b *testing.B, e *env) {
	var took time.Duration
	for range b.N {
		b.StopTimer()
		bl := e.writeBacklog(b, backlogEvents, func(i int) string { return "Backlog " + id(int64(i)) }, false)
		b.StartTimer()
		start := time.Now()
		e.runIndexer(b)
		if _, err := e.ix.WaitForVersion(context.Background(), bl.head, 5*time.Minute); err != nil {
			b.Fatal(err)
		}
		took += time.Since(start)
		b.Logf("indexer %+v", e.indexer.Stats())
	}
	b.ReportMetric(took.Seconds()/float64(b.N), "s/catch-up")
	b.ReportMetric(float64(backlogEvents*b.N)/took.Seconds(), "tx/s")
}
