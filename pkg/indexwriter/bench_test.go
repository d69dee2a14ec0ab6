package indexwriter_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/changes"
	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/indexwriter"
	"github.com/cmsplatform/cms/pkg/search"
	"github.com/cmsplatform/cms/pkg/search/bleve"
	"github.com/cmsplatform/cms/pkg/search/elastic"
	"github.com/cmsplatform/cms/pkg/store"
	"github.com/cmsplatform/cms/pkg/store/sqlite"
	"github.com/cmsplatform/cms/pkg/testenv"
)

// Bulk-load shape: benchObjects objects with benchValuesPerObject values
// each (a language-dependent name and four typed attributes), written
// through pkg/content on SQLite in transactions of benchTxObjects.
const (
	benchObjects         = 20000
	benchValuesPerObject = 5
	benchTxObjects       = 500
)

// bulkLoad is the store after the load plus the outbox events it produced.
type bulkLoad struct {
	st     store.Store
	events []changes.Event
	head   int64
	typ    int64 // the type of the loaded objects
	load   time.Duration
}

// benchStore opens a bootstrapped SQLite store in a temporary directory
// with one new type, for the benchmarks' loads.
func benchStore(b testing.TB) (store.Store, *content.Service, []int64) {
	b.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "cms.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	if err := content.Bootstrap(ctx, st); err != nil {
		b.Fatal(err)
	}
	s := content.New(st, nil)
	_, typ, err := s.CreateObjects(ctx, "4", editor, []content.ObjectInput{{TypeID: content.RootID}})
	if err != nil {
		b.Fatal(err)
	}
	return st, s, typ
}

// newBulkLoad writes the objects and claims (and acks) their outbox events
// so that every engine sub-benchmark can apply the same events.
func newBulkLoad(b *testing.B) *bulkLoad {
	b.Helper()
	ctx := context.Background()
	st, s, typ := benchStore(b)
	var attrIn []content.ObjectInput
	for _, dt := range []string{"String", "Integer", "DateTime", "XmlRef.SimpleHtml"} {
		attrIn = append(attrIn, content.ObjectInput{TypeID: content.TypeAttribute,
			Values: []content.ValueInput{vin(content.AttrDataType, 0, dt)}})
	}
	_, attrs, err := s.CreateObjects(ctx, "4", editor, attrIn)
	if err != nil {
		b.Fatal(err)
	}
	words := []string{"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"}
	start := time.Now()
	for n := 0; n < benchObjects; n += benchTxObjects {
		in := make([]content.ObjectInput, 0, benchTxObjects)
		for i := n; i < n+benchTxObjects; i++ {
			w := words[i%len(words)]
			in = append(in, content.ObjectInput{TypeID: typ[0], Values: []content.ValueInput{
				vin(content.AttrName, content.LanguageEnUS, fmt.Sprintf("Product %s %d", w, i)),
				vin(attrs[0], 0, fmt.Sprintf("SKU-%06d %s", i, words[(i/8)%len(words)])),
				vin(attrs[1], 0, i),
				vin(attrs[2], 0, time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i)*time.Minute).Format(time.RFC3339)),
				vin(attrs[3], 0, fmt.Sprintf(`<div><p>The %s product number <b>%d</b>.</p></div>`, w, i)),
			}})
		}
		if _, _, err := s.CreateObjects(ctx, "4", editor, in); err != nil {
			b.Fatal(err)
		}
	}
	l := &bulkLoad{st: st, load: time.Since(start), typ: typ[0]}
	for {
		evs, err := st.ClaimOutbox(ctx, 100)
		if err != nil {
			b.Fatal(err)
		}
		if len(evs) == 0 {
			break
		}
		ids := make([]int64, 0, len(evs))
		for _, oe := range evs {
			ev, err := changes.Parse(oe.Payload)
			if err != nil {
				b.Fatal(err)
			}
			l.events = append(l.events, ev)
			ids = append(ids, oe.ID)
		}
		if err := st.AckOutbox(ctx, ids); err != nil {
			b.Fatal(err)
		}
	}
	if l.head, err = st.LastTransactionID(ctx); err != nil {
		b.Fatal(err)
	}
	return l
}

// BenchmarkBulkIndexing measures indexing throughput for the bulk load:
// Apply (the outbox events, as the indexer service does) and IndexBranch
// (a full branch backfill), each into a fresh Bleve index (in memory and on
// disk) and, with CMS_ELASTICSEARCH_URL set, into Elasticsearch. Run with
// -benchtime=1x; values/s counts the loaded values (100,000 per op).
func BenchmarkBulkIndexing(b *testing.B) {
	l := newBulkLoad(b)
	b.Logf("bulk load: %d objects × %d values into SQLite via pkg/content in %v (%.0f values/s), %d events",
		benchObjects, benchValuesPerObject, l.load.Round(time.Millisecond),
		float64(benchObjects*benchValuesPerObject)/l.load.Seconds(), len(l.events))

	engines := []struct {
		name string
		open func(b *testing.B) search.Engine
	}{
		{"bleve-memory", func(b *testing.B) search.Engine { return openBleve(b, "") }},
		{"bleve-disk", func(b *testing.B) search.Engine { return openBleve(b, b.TempDir()) }},
		{"elasticsearch", func(b *testing.B) search.Engine { return openElastic(b) }},
	}
	modes := []struct {
		name string
		run  func(ctx context.Context, ix *indexwriter.Indexer) (indexwriter.ApplyResult, error)
	}{
		{"Apply", func(ctx context.Context, ix *indexwriter.Indexer) (indexwriter.ApplyResult, error) {
			var total indexwriter.ApplyResult
			for _, ev := range l.events {
				r, err := ix.Apply(ctx, ev)
				if err != nil {
					return total, err
				}
				total.Ops += r.Ops
				total.Applied += r.Applied
			}
			return total, nil
		}},
		{"IndexBranch", func(ctx context.Context, ix *indexwriter.Indexer) (indexwriter.ApplyResult, error) {
			return ix.IndexBranch(ctx, content.BranchDefault, l.head)
		}},
	}
	for _, e := range engines {
		for _, m := range modes {
			b.Run(e.name+"/"+m.name, func(b *testing.B) {
				ctx := context.Background()
				var elapsed time.Duration
				for range b.N {
					b.StopTimer()
					eng := e.open(b)
					ix, err := indexwriter.New(l.st, eng, indexwriter.Options{})
					if err != nil {
						b.Fatal(err)
					}
					if err := ix.EnsureIndexes(ctx); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
					start := time.Now()
					res, err := m.run(ctx, ix)
					elapsed += time.Since(start)
					if err != nil {
						b.Fatal(err)
					}
					b.StopTimer()
					if err := eng.Refresh(ctx, ix.ObjectsIndex()); err != nil {
						b.Fatal(err)
					}
					if n, err := eng.Count(ctx, ix.ObjectsIndex(), search.Term{Field: indexdoc.FieldTypeRef, Value: l.typ}); err != nil || n != benchObjects {
						b.Fatalf("%s: %d documents of the loaded type (%v), want %d", m.name, n, err, benchObjects)
					}
					if res.Applied < benchObjects {
						b.Fatalf("%s applied %d documents, want >= %d", m.name, res.Applied, benchObjects)
					}
					b.StartTimer()
				}
				sec := elapsed.Seconds()
				b.ReportMetric(float64(benchObjects*benchValuesPerObject*b.N)/sec, "values/s")
				b.ReportMetric(float64(benchObjects*b.N)/sec, "objects/s")
			})
		}
	}
}

func openBleve(b testing.TB, dir string) search.Engine {
	b.Helper()
	eng, err := bleve.New(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = eng.Close() })
	return eng
}

func openElastic(b testing.TB) search.Engine {
	b.Helper()
	url := testenv.URL(b, testenv.ElasticsearchURL)
	prefix := fmt.Sprintf("cmsbench-%d-", time.Now().UnixNano())
	eng, err := elastic.New(url, elastic.WithPrefix(prefix))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = eng.Close()
		testenv.DeleteIndexes(b, url, prefix)
	})
	return eng
}
