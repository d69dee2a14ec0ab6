package bleve

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/cmsplatform/cms/pkg/search"
)

// Shape of BenchmarkUpdateDiskGrowth: diskDocs documents loaded in bulks
// of diskLoadBulk, then each updated once in bulks of diskUpdateBulk (the
// indexer's batches under a steady trickle of single-object writes).
const (
	diskDocs       = 2000
	diskLoadBulk   = 200
	diskUpdateBulk = 10
)

// BenchmarkUpdateDiskGrowth loads an on-disk index, updates every document
// once and reports the index folder's size after the updates relative to
// its size after the load (x-disk-growth; the embedded target is ≤ 1.5),
// and the size of Bleve's root file. Baseline, in the same run: the same
// writes with each version record kept as a Bleve internal key, as
// indexes were written before the version store (x-disk-growth-internal).
func BenchmarkUpdateDiskGrowth(b *testing.B) {
	var growth, growthInternal, root, rootInternal float64
	for range b.N {
		g, r := diskGrowth(b, false)
		gi, ri := diskGrowth(b, true)
		growth, growthInternal = growth+g, growthInternal+gi
		root, rootInternal = root+r, rootInternal+ri
	}
	n := float64(b.N)
	b.ReportMetric(growth/n, "x-disk-growth")
	b.ReportMetric(growthInternal/n, "x-disk-growth-internal")
	b.ReportMetric(root/n/(1<<20), "MiB-root")
	b.ReportMetric(rootInternal/n/(1<<20), "MiB-root-internal")
}

// diskGrowth runs the load and the updates on a fresh index and returns
// the size after the updates / after the load and the final root file size
// (both measured with the index closed, so everything is on disk).
func diskGrowth(b *testing.B, internalKeys bool) (growth, rootBytes float64) {
	b.Helper()
	ctx := context.Background()
	dir := b.TempDir()
	doc := func(i, v int) search.Document {
		return search.Document{ID: fmt.Sprintf("d%05d", i), Version: int64(v), Fields: map[string]any{
			"title":    fmt.Sprintf("article %d about topic %d, revision %d", i, i%97, v),
			"category": fmt.Sprintf("c%02d", i%25), "price": float64(i % 1000), "stock": i % 100,
		}}
	}
	e, ix := openDisk(b, dir)
	apply := func(from, to, v int) {
		docs := make([]search.Document, 0, to-from)
		for i := from; i < to; i++ {
			docs = append(docs, doc(i, v))
		}
		if internalKeys {
			writeLegacy(b, ix, docs, nil)
			return
		}
		ops := make([]search.Op, len(docs))
		for i, d := range docs {
			ops[i] = search.Upsert(d)
		}
		if _, err := e.Bulk(ctx, "p", ops); err != nil {
			b.Fatal(err)
		}
	}
	reopen := func() {
		if err := e.Close(); err != nil {
			b.Fatal(err)
		}
		e, ix = openDisk(b, dir)
	}
	for i := 0; i < diskDocs; i += diskLoadBulk {
		apply(i, min(i+diskLoadBulk, diskDocs), 1)
	}
	reopen()
	loaded, _ := dirSize(b, dir)
	for i := 0; i < diskDocs; i += diskUpdateBulk {
		apply(i, min(i+diskUpdateBulk, diskDocs), 2)
	}
	if err := e.Close(); err != nil {
		b.Fatal(err)
	}
	updated, root := dirSize(b, dir)
	return float64(updated) / float64(loaded), float64(root)
}

// dirSize sums the sizes of the files under dir and returns the size of
// Bleve's root file among them.
func dirSize(b *testing.B, dir string) (total, root int64) {
	b.Helper()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		total += info.Size()
		if d.Name() == "root.bolt" {
			root += info.Size()
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return total, root
}
