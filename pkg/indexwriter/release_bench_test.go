//go:build unix

package indexwriter_test

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/indexwriter"
	"github.com/cmsplatform/cms/pkg/search"
)

// releaseObjects is the size of a scheduled release (docs/branches.md,
// "How soon it is visible"): 5,000 objects with a name.
const releaseObjects = 5000

// BenchmarkReleaseBulk measures what a release of releaseObjects objects
// costs the indexer on cms run: building their documents from SQLite
// (build/op) and the one Bulk that writes them into an on-disk Bleve
// index already holding as many other documents (bulk/op), which is when
// Delivery shows them. Run with -benchtime=3x.
func BenchmarkReleaseBulk(b *testing.B) {
	ctx := context.Background()
	st, s, typ := benchStore(b)
	in := func(prefix string) []content.ObjectInput {
		out := make([]content.ObjectInput, releaseObjects)
		for i := range out {
			out[i] = content.ObjectInput{TypeID: typ[0], Values: []content.ValueInput{
				vin(content.AttrName, content.LanguageEnUS, fmt.Sprintf("%s %d", prefix, i))}}
		}
		return out
	}
	_, before, err := s.CreateObjects(ctx, "4", editor, in("story"))
	if err != nil {
		b.Fatal(err)
	}
	_, released, err := s.CreateObjects(ctx, "4", editor, in("launch"))
	if err != nil {
		b.Fatal(err)
	}
	head, err := st.LastTransactionID(ctx)
	if err != nil {
		b.Fatal(err)
	}
	var build, bulk, cpu time.Duration
	for range b.N {
		b.StopTimer()
		eng := openBleve(b, b.TempDir())
		ix, err := indexwriter.New(st, eng, indexwriter.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := ix.EnsureIndexes(ctx); err != nil {
			b.Fatal(err)
		}
		ops, err := ix.BuildDocuments(ctx, content.BranchDefault, head, before)
		if err == nil {
			_, err = eng.Bulk(ctx, ix.ObjectsIndex(), ops)
		}
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		ops, err = ix.BuildDocuments(ctx, content.BranchDefault, head, released)
		if err != nil {
			b.Fatal(err)
		}
		built, cpu0 := time.Now(), cpuTime()
		res, err := eng.Bulk(ctx, ix.ObjectsIndex(), ops)
		cpu += cpuTime() - cpu0
		if err != nil || res.Applied != releaseObjects {
			b.Fatalf("bulk: %+v, %v", res, err)
		}
		build, bulk = build+built.Sub(start), bulk+time.Since(built)
		b.StopTimer()
		if n, err := eng.Count(ctx, ix.ObjectsIndex(), search.MatchAll{}); err != nil || n != 2*releaseObjects {
			b.Fatalf("count %d, %v; want %d", n, err, 2*releaseObjects)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(build.Milliseconds())/float64(b.N), "build-ms/op")
	b.ReportMetric(float64(bulk.Milliseconds())/float64(b.N), "bulk-ms/op")
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "bulk-cpu-ms/op")
}

// cpuTime is the CPU time the process used so far (user and system).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
