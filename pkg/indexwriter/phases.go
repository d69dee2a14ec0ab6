package indexwriter

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/cmsplatform/cms/pkg/search"
)

// writePhased builds the documents of ids[b] on every branch b of
// branches, versioned v, Options.Batch objects per store read, and writes
// them in at most two Bulk calls per target index:
//
//  1. the branches of origin (the branches the pass's events were written
//     on), which is what their readers wait for;
//  2. the other branches, descendants that inherit the change.
//
// When the second phase holds at least Options.Batch documents, the first
// is written and refreshed (searchable on every engine) before the second
// is built, so that the readers of the written branch do not wait for the
// descendants' documents: a promote of 10,000 objects writes 10,000
// documents on the parent and 10,000 on the child, whose content is the
// same as before (it now inherits what it held). Each phase is one Bulk,
// so each branch still shows all of a pass or none of it; a descendant
// shows the state before the pass a little longer than the branch written,
// and the change-tracking version is recorded after both (commit), so
// read-your-writes (WaitForVersion) covers every branch. A smaller pass is
// one Bulk, as before.
func (ix *Indexer) writePhased(ctx context.Context, t tree, v int64, branches []int64, origin map[int64]bool,
	ids map[int64][]int64, res *ApplyResult) error {
	var first, second []int64
	size := 0
	for _, b := range branches {
		if origin[b] {
			first = append(first, b)
		} else {
			second = append(second, b)
			size += len(ids[b])
		}
	}
	build := func(bs []int64) ([]search.Op, error) {
		var ops []search.Op
		for _, b := range bs {
			built, err := ix.buildChunks(ctx, t, b, v, ids[b])
			if err != nil {
				return nil, err
			}
			ops = append(ops, built...)
		}
		res.Branches += len(bs)
		return ops, nil
	}
	ops, err := build(first)
	if err != nil {
		return err
	}
	if len(ops) > 0 && size >= ix.opts.Batch {
		if err := ix.write(ctx, ops, res); err != nil {
			return err
		}
		if err := ix.refresh(ctx); err != nil {
			return err
		}
		ops = nil
	}
	more, err := build(second)
	if err != nil {
		return err
	}
	return ix.write(ctx, append(ops, more...), res)
}

// buildWorkers bounds the chunks of one branch buildChunks builds at once.
const buildWorkers = 4

// buildChunks builds the documents of ids on branch b, Options.Batch
// objects per store read, the chunks of a large pass (a release's 5,000
// objects: ten) on several cores at once (at most buildWorkers, at most
// GOMAXPROCS), the store's readers reading side by side. The ops are in
// the order of ids, as one chunk after the other would give them; the
// error is the first chunk's that failed.
func (ix *Indexer) buildChunks(ctx context.Context, t tree, b, v int64, ids []int64) ([]search.Op, error) {
	chunks := slices.Collect(slices.Chunk(ids, ix.opts.Batch))
	workers := min(runtime.GOMAXPROCS(0), buildWorkers, len(chunks))
	if workers < 2 {
		var ops []search.Op
		for _, chunk := range chunks {
			built, err := ix.build(ctx, t, b, v, chunk)
			if err != nil {
				return nil, err
			}
			ops = append(ops, built...)
		}
		return ops, nil
	}
	built := make([][]search.Op, len(chunks))
	errs := make([]error, len(chunks))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(chunks) || ctx.Err() != nil {
					return
				}
				built[i], errs[i] = ix.build(ctx, t, b, v, chunks[i])
			}
		})
	}
	wg.Wait()
	var ops []search.Op
	for i := range chunks {
		if errs[i] != nil {
			return nil, errs[i]
		}
		if built[i] == nil && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		ops = append(ops, built[i]...)
	}
	return ops, nil
}
