package indexer_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/content"
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
